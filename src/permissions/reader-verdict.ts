import { posix } from "node:path";
import { parseArgs } from "./command-options.js";
import { readFind } from "./find-expression.js";
import { repositoryConfigVerdict, worktreeSubmodulesVerdict } from "./git-config.js";
import { GIT_READERS } from "./git-readers.js";
import { READER_PROGRAMS } from "./reader-programs.js";
import type { ReaderSpec } from "./reader-spec.js";
import { effectText } from "./read-only-wrappers.js";
import { existsAt, isInsideWorkingDirectory, locate } from "./resolve-path.js";
import { SED_OUTPUTS, readSed } from "./sed-script.js";
import { lookup } from "./shell-command.js";
import { splitGit } from "./split-git.js";
import type { PathContext } from "./types.js";

/**
 * The verdict on one program run with its words, from the read-only tables (reader-programs,
 * git-readers, find-expression, sed-script): undefined when it only reads, else why not. The
 * files it reads are handed to the caller, which judges where they lead.
 */

/**
 * Why `name args` is more than a read (undefined when it only reads). `read` records each file it
 * reads, from `base` or the directory given; `below`: the whole tree under it (`grep -r`).
 */
export function readerVerdict(
  name: string,
  args: readonly string[],
  read: (word: string, from?: string, below?: boolean) => void,
  base: string | undefined,
  context: PathContext,
): string | undefined {
  if (name === "command") return undefined;
  if (name === "find") {
    const found = readFind(args);
    if (!found.ok) return found.reason;
    for (const path of found.roots) read(path, undefined, true);
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
  if (name === "git") return gitVerdict(args, read, base, context);
  const spec = lookup(READER_PROGRAMS, name);
  if (spec === undefined) return `${name} is not a known read-only program`;
  if (name === "diff") return diffVerdict(spec, args, read, base, context);
  return specVerdict(name, spec, args, (word, below) => read(word, undefined, below));
}

/**
 * diff's verdict: given two directories, it compares the files in them, following links among
 * them (with -r, all the way down; see its table's check): each is read.
 */
function diffVerdict(
  spec: ReaderSpec,
  args: readonly string[],
  read: (word: string, from?: string, below?: boolean) => void,
  base: string | undefined,
  context: PathContext,
): string | undefined {
  const words: string[] = [];
  const verdict = specVerdict("diff", spec, args, (word, below) => {
    words.push(word);
    read(word, undefined, below);
  });
  if (verdict !== undefined || context.listDirectory === undefined) return verdict;
  for (const word of words) {
    if (base === undefined && !word.startsWith("/")) continue;
    for (const entry of context.listDirectory(locate(word, context, base, true).real) ?? []) {
      read(`${word.replace(/\/+$/, "")}/${entry}`);
    }
  }
  return undefined;
}

/**
 * git's verdict: its global options, the subcommand's table (`stash list`, `reflog show` by their
 * two words), where the repository it works on is (a repository whose top is above the working
 * directories holds files outside them: `git show HEAD:../x`) and what its settings make git run
 * (`git help` reads them too; `git version` alone does not).
 */
function gitVerdict(
  args: readonly string[],
  read: (word: string, from?: string, below?: boolean) => void,
  base: string | undefined,
  context: PathContext,
): string | undefined {
  const call = splitGit(args);
  if (!call.ok) return call.reason;
  let gitBase = base;
  let gitDir: string | undefined;
  for (const option of call.global.options) {
    const effect = option.spec.effect;
    if (option.spec.name === "--git-dir") gitDir = option.value ?? "";
    if (effect === "chdir") {
      read(option.value ?? "");
      gitBase =
        gitBase === undefined ? undefined : locate(option.value ?? "", context, gitBase, true).real;
    } else if (effect === "read") read(option.value ?? "");
    else if (effect !== undefined) return `git ${option.spec.name} ${effectText(effect)}`;
  }
  const pair = `${call.sub} ${call.args[0] ?? ""}`;
  const nested = Object.hasOwn(GIT_READERS, pair);
  const sub = nested ? pair : call.sub;
  const spec = lookup(GIT_READERS, sub);
  if (spec === undefined) return `git ${sub} is not a read-only git command`;
  const subArgs = nested ? call.args.slice(1) : call.args;
  const pathspecs: string[] = [];
  const verdict = specVerdict(`git ${sub}`, spec, subArgs, (word, below) => {
    if (below === true) pathspecs.push(word);
    read(word, gitBase, below);
  });
  if (verdict !== undefined || sub === "version") return verdict;
  if (gitBase === undefined) return "the directory git runs in is not known";
  const found = gitDir === undefined ? repositoryOf(gitBase, context) : undefined;
  const repositoryTop = found !== undefined && "top" in found ? found.top : undefined;
  // The repository's own settings, and its submodules', may make any command run a program.
  const settings =
    gitDir !== undefined
      ? repositoryConfigVerdict(locate(gitDir, context, gitBase, true).real, context)
      : repositoryTop !== undefined
        ? (repositoryConfigVerdict(posix.join(repositoryTop, ".git"), context) ??
          worktreeSubmodulesVerdict(repositoryTop, context))
        : undefined;
  if (settings !== undefined) return settings;
  if (sub === "help") return undefined;
  // A `rev:path` operand shows a file (or a whole tree) of the repository, from its top.
  const known = repositoryTop !== undefined;
  const top = repositoryTop ?? gitBase;
  for (const path of objectPaths(subArgs)) {
    read(path, /^\.\.?(\/|$)/.test(path) ? gitBase : top, true);
  }
  // A pathspec that git matches its own way (`*key` across directories, `:(top)`, `:!pub`), or a
  // revision (`git grep KEY HEAD`), may reach anything under where git runs, or the repository.
  for (const word of pathspecs) {
    if (word.startsWith(":")) read(".", known ? top : (context.workingDirectories[0] ?? top), true);
    // `rev:path` shows that path, read above; another word that is no path is a revision, whose
    // changes span the repository (`git show HEAD`, `git diff main`).
    else if (objectPaths([word]).length > 0) continue;
    else if (/[*?[\\]/.test(word) || existsAt(word, context, gitBase) !== true)
      read(".", known ? top : gitBase, true);
  }
  if (gitDir !== undefined || found === undefined) return undefined;
  if ("why" in found) return found.why;
  return isInsideWorkingDirectory(found.top, context)
    ? undefined
    : `git works on the repository at ${found.top}, outside the working directories`;
}

/**
 * The paths that `rev:path` operands name (`HEAD:src/a.ts`, `:0:a.ts`, `:a.ts`; `HEAD:` is the
 * whole tree): files or trees of the repository that git prints.
 */
function objectPaths(args: readonly string[]): string[] {
  const paths: string[] = [];
  for (const arg of args) {
    if (arg.startsWith("-")) continue;
    const match = /^(?::[0-3])?:(.*)$/s.exec(arg) ?? /^[^:{]*(?:\{[^}]*\}[^:{]*)*:(.*)$/s.exec(arg);
    if (match) paths.push(match[1] || ".");
  }
  return paths;
}

/**
 * The repository git finds from `dir`, as git looks for it: up from `dir`, the first directory
 * with a `.git` that is a repository (one without HEAD, objects and refs is passed over), or one
 * laid out as a bare repository itself (whose configuration the check does not read: it may run
 * programs or name a work tree anywhere). A `.git` file points to a repository elsewhere, which
 * the check does not follow either. Undefined: none found, or directories cannot be listed.
 */
function repositoryOf(
  dir: string,
  context: PathContext,
): { top: string } | { why: string } | undefined {
  const list = context.listDirectory;
  if (list === undefined) return undefined;
  const isRepository = (names: readonly string[] | undefined) =>
    names !== undefined && ["HEAD", "objects", "refs"].every((name) => names.includes(name));
  let current = context.realPath?.(dir) ?? dir;
  for (;;) {
    const names = list(current);
    if (names?.includes(".git") === true) {
      const inner = list(posix.join(current, ".git"));
      if (inner === undefined) {
        return { why: `${current}/.git is a file naming a repository elsewhere, not followed` };
      }
      if (isRepository(inner)) return { top: current };
    } else if (isRepository(names)) {
      return {
        why: `git would take ${current} as a bare repository, whose settings may run programs`,
      };
    }
    const parent = posix.dirname(current);
    if (parent === current) return undefined;
    current = parent;
  }
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
  read: (word: string, below?: boolean) => void,
): string | undefined {
  if (spec.anyArgs === true) {
    for (const path of spec.looksUp?.(args) ?? []) read(path);
    return spec.check?.([], args);
  }
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
  const below = spec.walks?.(parsed.options) === true;
  for (const operand of operands) read(operand, below);
  if (operands.length === 0) {
    const fallback = spec.defaultOperand?.(parsed.options);
    if (fallback !== undefined) read(fallback, below);
  }
  return undefined;
}
