import { posix } from "node:path";
import { HARMLESS_DEVICES } from "./dangerous-path.js";
import { type Move, type Ran, walkDirectories } from "./directory-walk.js";
import { dotGlobVariants } from "./dot-globs.js";
import { MAX_GLOB_MATCHES, globMatches } from "./expand-glob.js";
import { expandWords } from "./expand-words.js";
import { readEdit } from "./edit-programs.js";
import { findInjection } from "./find-injection.js";
import type { ShellCommand, ShellRedirect, ShellScript } from "./parse-shell.js";
import { ProbeRefused } from "./probe-budget.js";
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

/**
 * What a Bash command line reads and writes, command by command, and whether each only reads.
 * A command is read-only when it is a known reader (see reader-verdict and its tables) run
 * directly or through a read-only wrapper, no option of it can run a program, write a file,
 * change system state or follow links, it sets no variables, it redirects output only to a
 * harmless device, and every file it reads resolves (links followed)
 * inside the working directories from every directory it may run in (see directory-walk: a `cd`
 * may fail; after a change the walk cannot follow, such as `cd -`, relative paths are unknown).
 */

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

export interface BashAnalysis {
  commands: CommandAnalysis[];
  /** Whether the whole line only reads: no injection risk, and every command reads. */
  readOnly: boolean;
  /** Why it does not, for reasons. */
  why?: string;
  /** The first `notable` why of a command (see CommandAnalysis), or an injection risk. */
  detail?: string;
}

const OUTPUT_OPS = new Set([">", ">>", ">|", "&>", "&>>", "<>", ">&"]);

/** Whether a redirection writes to a file (not a harmless device, a duplicated fd, or a heredoc). */
export function writesFile(redirect: ShellRedirect): boolean {
  if (!OUTPUT_OPS.has(redirect.op)) return false;
  const target = redirect.target?.value;
  if (target === undefined) return true;
  if ((redirect.op === ">&" || redirect.op === "<>") && /^(\d+|-)$/.test(target)) return false;
  return !HARMLESS_DEVICES.has(target);
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

/** Analyses every simple command of `script`, in order, from each directory it may run in. */
export function analyzeBash(script: ShellScript, context: PathContext): BashAnalysis {
  let commands: CommandAnalysis[];
  try {
    commands = walkDirectories(script.commands, context.workingDirectories[0], (command, cwd) =>
      analyzeCommand(command, context, cwd),
    ).map(merge);
  } catch (err) {
    if (!(err instanceof ProbeRefused)) throw err;
    const why = err.message;
    commands = script.commands.map(() => ({
      readOnly: false,
      why,
      notable: true,
      reads: [],
      writes: [],
      readerApartFromOutput: false,
    }));
  }
  const injection = findInjection(script);
  const firstNo = commands.find((command) => !command.readOnly);
  const why = injection ?? firstNo?.why ?? (commands.length === 0 ? "no command" : undefined);
  if (why === undefined) return { commands, readOnly: true };
  const detail = injection ?? commands.find((command) => command.notable === true)?.why;
  return detail === undefined
    ? { commands, readOnly: false, why }
    : { commands, readOnly: false, why, detail };
}

/** One command's analyses from the directories it may run in, as one: read-only from each. */
function merge(analyses: readonly CommandAnalysis[]): CommandAnalysis {
  const [only, ...others] = analyses as [CommandAnalysis, ...CommandAnalysis[]];
  if (others.length === 0) return only;
  const verdict = analyses.find((analysis) => !analysis.readOnly) ?? only;
  const merged: CommandAnalysis = {
    ...verdict,
    reads: analyses.flatMap((analysis) => analysis.reads),
    names: analyses.flatMap((analysis) => analysis.names ?? []),
    writes: analyses.flatMap((analysis) => analysis.writes),
    readerApartFromOutput: analyses.every((analysis) => analysis.readerApartFromOutput),
  };
  if (verdict.directoryChange !== undefined) {
    merged.directoryChange = {
      inside: analyses.every((analysis) => analysis.directoryChange?.inside === true),
    };
  }
  return merged;
}

/** Wrappers that run a builtin in the shell itself: a `cd` under them moves the shell. */
const IN_SHELL_WRAPPERS = new Set(["command", "builtin"]);

function analyzeCommand(
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
  // A wildcard's matches show the listing of the directories they are in, as `ls DIR` would.
  const names = (expanded.ok ? expanded.matched : []).flatMap(
    (word) => at(posix.dirname(word)) ?? [],
  );
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

/** Where `cd`/`pushd`/`popd` leads, and whether that stays inside the working directories. */
function directoryChange(
  name: string,
  args: readonly string[],
  context: PathContext,
  cwd: string | undefined,
): { move: Move; inside: boolean } {
  // `cd -`, `popd` with an index or -n, `pushd` with none, an index or -n: where later commands
  // run depends on the previous directory or the stack, which are not followed here.
  const lost = { move: { kind: "lost" }, inside: false } as const;
  if (name === "popd") return args.length === 0 ? { move: { kind: "popd" }, inside: false } : lost;
  const target = args.filter((arg) => !/^-[LPe@]+$/.test(arg))[0];
  if (
    target === "-" ||
    (name === "pushd" && (target === undefined || /^[+-]\d+$/.test(target) || args.includes("-n")))
  ) {
    return lost;
  }
  const written = target ?? "~";
  if (dependsOnVariable(written)) return lost;
  if (cwd === undefined && !written.startsWith("/") && !written.startsWith("~")) return lost;
  // Without -P, bash folds `..` against $PWD before it follows links (`cd link/..` stays where
  // it was) when that directory exists, and the walk keeps that logical directory; else it
  // takes the path as the system does.
  // Its wildcards and braces were expanded with the line's words (expand-words).
  const located = locate(written, context, cwd, true);
  const modes = args.filter((arg) => /^-[LPe@]+$/.test(arg)).join("");
  const logical = !modes.replace(/[^LP]/g, "").endsWith("P");
  let to = located.real;
  let real = located.real;
  if (logical) {
    const folded = context.realPath?.(located.path) ?? located.path;
    if (folded === located.real) to = located.path;
    else if (context.listDirectory === undefined) return lost;
    else if (context.listDirectory(located.path) !== undefined) {
      to = located.path;
      real = folded;
    }
  }
  const inside = isInsideWorkingDirectory(real, context);
  return { move: { kind: name === "pushd" ? "pushd" : "cd", to }, inside };
}
