import { posix } from "node:path";
import { HARMLESS_DEVICES } from "./dangerous-path.js";
import { directoryChange } from "./directory-change.js";
import type { Move, Ran } from "./directory-walk.js";
import { dotGlobVariants } from "./dot-globs.js";
import { MAX_GLOB_MATCHES, globMatches } from "./expand-glob.js";
import { expandWords } from "./expand-words.js";
import { readEdit } from "./edit-programs.js";
import type { ShellCommand } from "./parse-shell.js";
import { unwrapForReading } from "./read-only-wrappers.js";
import { isReader, readerVerdict } from "./reader-verdict.js";
import {
  type Located,
  dependsOnVariable,
  isInsideWorkingDirectory,
  locate,
} from "./resolve-path.js";
import { readSed } from "./sed-script.js";
import { expandBraces, innerCommands, pathArguments, splitAssignments } from "./shell-command.js";
import type { PathContext } from "./types.js";
import { writesFile } from "./writes-file.js";

/** One simple command. */
export interface CommandAnalysis {
  readOnly: boolean;
  /** Why it is not read-only. */
  why?: string;
  /**
   * Set when `why` is worth showing a person: a program that usually only reads, disqualified by an
   * option, a path or a wrapper (not an unknown program, an edit or a redirection).
   */
  notable?: true;
  /** Files it reads that the analysis can name: operands, option values, input redirections. */
  reads: Located[];
  /**
   * Directories whose listing its words' wildcards show (`echo secret/*` shows `secret`'s, as
   * `ls secret` would), whatever the program does with the names.
   */
  names?: Located[];
  /** Files it writes that the analysis can name: output redirections, an edit command's operands. */
  writes: Located[];
  /** Whether it only reads apart from its output redirections (`cat > notes.md <<EOF`). */
  readerApartFromOutput: boolean;
  /** A directory change (`cd`, `pushd`, `popd`): whether it stays inside the working directories. */
  directoryChange?: { inside: boolean };
}

/** Programs whose operands are the files they change, for rules on what a command writes. */
const CHANGES_OPERANDS = new Set([
  "mkdir",
  "touch",
  "rm",
  "rmdir",
  "mv",
  "cp",
  "ln",
  "chmod",
  "truncate",
]);

/** Wrappers that run a builtin in the shell itself: a `cd` under them moves the shell. */
const IN_SHELL_WRAPPERS = new Set(["command", "builtin"]);

/**
 * What one simple command reads and writes, and whether it only reads, run from `cwd` (undefined
 * when the directory is not known); with the move it makes when it is a `cd`, `pushd` or `popd`.
 */
export function analyzeCommand(
  command: ShellCommand,
  context: PathContext,
  cwd: string | undefined,
): Ran<CommandAnalysis> {
  const reads: Located[] = [];
  const writes: Located[] = [];
  const at = (word: string, base = cwd): Located | undefined =>
    (base === undefined && !word.startsWith("/") && !word.startsWith("~")) ||
    dependsOnVariable(word)
      ? undefined
      : locate(word, context, base, true);
  let unknownPath: string | undefined;
  let tooMany: string | undefined;
  const read = (word: string, base = cwd, below = false): void => {
    const tree = below ? ({ below: true } as const) : {};
    for (const written of expandBraces(word)) {
      for (const path of dotGlobVariants(written)) {
        if (path === "-" || HARMLESS_DEVICES.has(path)) continue;
        const located = at(path, base);
        if (located === undefined) {
          unknownPath ??= path;
          continue;
        }
        reads.push(
          path === written
            ? { ...located, ...tree }
            : { ...located, ...tree, written: `${written} (which may expand to ${path})` },
        );
        const matches = globMatches(path, context, base);
        if (matches === undefined) tooMany ??= path;
        for (const match of matches ?? []) {
          const found = locate(match, context, base, true);
          reads.push({ ...found, ...tree, written: `${written} (${match})` });
        }
      }
    }
  };
  const write = (word: string): void => {
    for (const path of expandBraces(word)) {
      const located = at(path);
      if (located === undefined) unknownPath ??= path;
      else writes.push(located);
      const matches = located === undefined ? [] : globMatches(path, context, cwd);
      if (matches === undefined) tooMany ??= path;
      for (const match of matches ?? []) writes.push(locate(match, context, cwd, true));
    }
  };
  for (const redirect of command.redirects) {
    const target = redirect.target?.value ?? "";
    if (writesFile(redirect)) write(target);
    if (redirect.op === "<" || (redirect.op === "<>" && !/^(\d+|-)$/.test(target))) read(target);
  }
  const redirected = writes.length;
  const { assignments, argv: asWritten } = splitAssignments(command);
  const expanded = expandWords(command.words.slice(assignments.length), context, cwd);
  const argv = expanded.ok ? expanded.words : asWritten;
  // A wildcard's matches show the listing of the directories they are in, as `ls DIR` would,
  // and whether it matched shows something of the directory bash listed to match it.
  const names: Located[] = [];
  for (const dir of expanded.ok
    ? [...expanded.matched.map((word) => posix.dirname(word)), ...expanded.listed]
    : []) {
    const located = at(dir);
    if (located === undefined) unknownPath ??= dir;
    else if (!names.some((known) => known.real === located.real)) names.push(located);
  }
  for (const inner of innerCommands(argv)) {
    if (CHANGES_OPERANDS.has(inner.argv[0] ?? "")) {
      for (const path of pathArguments(inner.argv)) write(path);
      // What a copy or a move takes is read: a `Read(…)` rule covers `cp -r secret pub`.
      const edit = readEdit(inner.argv);
      if (edit.ok) for (const source of edit.sources ?? []) read(source, cwd, true);
    }
    if (inner.argv[0] === "sed") {
      const sed = readSed(inner.argv.slice(1));
      if (sed.ok && sed.inPlace) {
        // It reads what it edits, and what its script reads (`r`, `R`), wherever it writes them.
        for (const path of sed.files) write(path);
        for (const path of [...sed.files, ...sed.effects.reads]) read(path);
      }
    }
  }
  let why: string | undefined;
  let change: CommandAnalysis["directoryChange"];
  let move: Move | undefined;
  let inShell = false;
  let plain = false;
  if (writes.length > redirected) {
    why = `changes ${writes[redirected]?.written}`;
    plain = true;
  } else if (assignments.length > 0) {
    why = `sets ${assignments[0]?.split("=")[0]}, which a program may act on`;
  } else if (!expanded.ok) why = expanded.reason;
  else if (argv.length === 0) why = "a redirection without a command";
  else {
    const unwrapped = unwrapForReading(argv);
    if (!unwrapped.ok) why = unwrapped.reason;
    else {
      const base = unwrapped.chdir === undefined ? cwd : at(unwrapped.chdir)?.real;
      if (unwrapped.chdir !== undefined) read(unwrapped.chdir);
      const [name = "", ...args] = unwrapped.argv;
      if (name === "cd" || name === "pushd" || name === "popd") {
        const moved = directoryChange(name, args, context, base);
        move = moved.move;
        inShell = unwrapped.wrappers.every((wrapper) => IN_SHELL_WRAPPERS.has(wrapper));
        change = { inside: moved.inside };
      } else {
        why = readerVerdict(
          name,
          args,
          (word, from, below) => read(word, from ?? base, below),
          base,
          context,
        );
        plain = !isReader(name);
      }
    }
  }
  if (why === undefined && unknownPath !== undefined) {
    why = dependsOnVariable(unknownPath)
      ? `the path ${unknownPath} depends on a variable`
      : `the directory ${unknownPath} is taken from is not known`;
  }
  if (why === undefined && tooMany !== undefined) {
    why = `${tooMany} matches more than ${MAX_GLOB_MATCHES} paths`;
  }
  if (why === undefined) {
    const outside = reads.find((located) => !isInsideWorkingDirectory(located.real, context));
    if (outside !== undefined) why = `reads ${outside.written} outside the working directories`;
  }
  if (why === undefined) {
    const outside = names.find((located) => !isInsideWorkingDirectory(located.real, context));
    if (outside !== undefined) {
      why = `its wildcards list ${outside.written} outside the working directories`;
    }
  }
  if (why === undefined) {
    // A file with other names is the same file as one of them, which may be outside (the file
    // tools refuse such a file too); what a walk reads below a directory is not listed here.
    const shared = reads.find(
      (located) => located.below !== true && context.hardLinked?.(located.real) === true,
    );
    if (shared !== undefined) {
      why = `reads ${shared.written}, a file with other hard links, which may be outside the working directories`;
    }
  }
  const readerApartFromOutput = why === undefined && change === undefined;
  if (why === undefined && redirected > 0) {
    why = `writes ${writes[0]?.written}`;
    plain = true;
  }
  const analysis: CommandAnalysis = {
    readOnly: why === undefined,
    ...(why === undefined ? {} : { why }),
    ...(why !== undefined && !plain ? { notable: true } : {}),
    reads,
    ...(names.length > 0 ? { names } : {}),
    writes,
    readerApartFromOutput,
    ...(change === undefined ? {} : { directoryChange: change }),
  };
  return move === undefined ? { result: analysis } : { result: analysis, move, inShell };
}
