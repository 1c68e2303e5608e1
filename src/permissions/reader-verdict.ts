import { parseArgs } from "./command-options.js";
import { readFind } from "./find-expression.js";
import { GIT_READERS, splitGit } from "./git-readers.js";
import { READER_PROGRAMS } from "./reader-programs.js";
import type { ReaderSpec } from "./reader-spec.js";
import { effectText } from "./read-only-wrappers.js";
import { locate } from "./resolve-path.js";
import { SED_OUTPUTS, readSed } from "./sed-script.js";
import { lookup } from "./shell-command.js";
import type { PathContext } from "./types.js";

/**
 * The verdict on one program run with its words, from the read-only tables (reader-programs,
 * git-readers, find-expression, sed-script): undefined when it only reads, else why not. The
 * files it reads are handed to the caller, which judges where they lead.
 */

/**
 * Why `name args` is more than a read (undefined when it only reads). `read` records each file it
 * reads, from `base` or the directory given.
 */
export function readerVerdict(
  name: string,
  args: readonly string[],
  read: (word: string, from?: string) => void,
  base: string | undefined,
  context: PathContext,
): string | undefined {
  if (name === "command") return undefined;
  if (name === "find") {
    const found = readFind(args);
    if (!found.ok) return found.reason;
    for (const path of found.reads) read(path);
    return undefined;
  }
  if (name === "sed") {
    const sed = readSed(args);
    if (!sed.ok) return sed.reason;
    if (sed.inPlace) return "sed -i edits files";
    const { effects } = sed;
    if (effects.unreadable !== undefined) return `sed: ${effects.unreadable}`;
    if (effects.exec !== undefined) return `sed script runs a program (${effects.exec})`;
    const written = effects.writes.find((file) => !SED_OUTPUTS.has(file));
    if (written !== undefined) return `sed script writes ${written}`;
    for (const path of [...effects.reads, ...sed.files]) read(path);
    return undefined;
  }
  if (name === "git") {
    const call = splitGit(args);
    if (!call.ok) return call.reason;
    let gitBase = base;
    for (const option of call.global.options) {
      const effect = option.spec.effect;
      if (effect === "chdir") {
        read(option.value ?? "");
        gitBase =
          gitBase === undefined
            ? undefined
            : locate(option.value ?? "", context, gitBase, true).real;
      } else if (effect === "read") read(option.value ?? "");
      else if (effect !== undefined) return `git ${option.spec.name} ${effectText(effect)}`;
    }
    const spec = lookup(GIT_READERS, call.sub);
    if (spec === undefined) return `git ${call.sub} is not a read-only git command`;
    return specVerdict(`git ${call.sub}`, spec, call.args, (word) => read(word, gitBase));
  }
  const spec = lookup(READER_PROGRAMS, name);
  if (spec === undefined) return `${name} is not a known read-only program`;
  return specVerdict(name, spec, args, (word) => read(word));
}

/** Whether `name` is a program the read-only check knows (the others are never read-only). */
export function isReader(name: string): boolean {
  return READERS_WITH_OWN_FILES.has(name) || lookup(READER_PROGRAMS, name) !== undefined;
}

const READERS_WITH_OWN_FILES = new Set(["command", "find", "sed", "git"]);

/** Applies a reader's table to its words. */
function specVerdict(
  name: string,
  spec: ReaderSpec,
  args: readonly string[],
  read: (word: string) => void,
): string | undefined {
  if (spec.anyArgs === true) return spec.check?.([], args);
  const parsed = parseArgs(spec.options, args);
  if (!parsed.ok) return `${name}: ${parsed.reason}`;
  for (const option of parsed.options) {
    const effect = option.spec.effect;
    if (effect === "read") read(option.value ?? "");
    else if (effect !== undefined) return `${name} ${option.spec.name} ${effectText(effect)}`;
  }
  const own = spec.check?.(parsed.options, parsed.operands);
  if (own !== undefined) return own;
  if (spec.operands === "none") {
    return parsed.operands.length > 0 ? `${name} with an operand may change things` : undefined;
  }
  if (spec.operands === "text") return undefined;
  let operands = parsed.operands;
  const leading = spec.leading;
  if (leading !== undefined) {
    const given = parsed.options.some((option) => leading.unless.includes(option.spec.name));
    if (!given) operands = operands.slice(leading.count);
  }
  if (spec.writesFrom !== undefined && operands.length > spec.writesFrom) {
    return `${name} writes ${operands[spec.writesFrom]}`;
  }
  for (const operand of operands) read(operand);
  if (operands.length === 0) {
    const fallback = spec.defaultOperand?.(parsed.options);
    if (fallback !== undefined) read(fallback);
  }
  return undefined;
}
