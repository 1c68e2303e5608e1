import { posix } from "node:path";
import type { ShellCommand } from "./parse-shell.js";
import { commandOnlyDescribes } from "./read-only-wrappers.js";

/**
 * Views of one simple command for the Bash checks: its argv without leading variable assignments,
 * the commands it runs through wrappers (`sudo rm …`, `xargs rm …`, `find … -exec rm … ;`), and
 * the arguments that may name files.
 */

/** Looks a name up in a table without reaching `Object.prototype` (`constructor`, `toString`). */
export function lookup<T>(table: Record<string, T>, name: string | undefined): T | undefined {
  return name !== undefined && Object.hasOwn(table, name) ? table[name] : undefined;
}

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;

/** Leading `NAME=value` words and the argv (unquoted values) after them. */
export function splitAssignments(command: ShellCommand): { assignments: string[]; argv: string[] } {
  const values = command.words.map((word) => word.value);
  let k = 0;
  while (k < command.words.length && ASSIGNMENT.test(command.words[k]?.raw ?? "")) k += 1;
  return { assignments: values.slice(0, k), argv: values.slice(k) };
}

/** Commands that run the rest of their arguments as a command, with their options that take a value. */
const WRAPPERS: Record<
  string,
  { valueOptions: string[]; positional?: number; assignments?: true }
> = {
  sudo: {
    valueOptions: ["-u", "-g", "-h", "-p", "-U", "-C", "-D", "-r", "-t", "-T", "--user", "--group"],
  },
  doas: { valueOptions: ["-u", "-C"] },
  env: { valueOptions: ["-u", "--unset", "-C", "--chdir"], assignments: true },
  nice: { valueOptions: ["-n", "--adjustment"] },
  ionice: { valueOptions: ["-c", "-n", "-p", "--class", "--classdata"] },
  nohup: { valueOptions: [] },
  time: { valueOptions: ["-f", "-o", "--format", "--output"] },
  command: { valueOptions: [] },
  exec: { valueOptions: ["-a"] },
  builtin: { valueOptions: [] },
  stdbuf: { valueOptions: ["-i", "-o", "-e"] },
  timeout: { valueOptions: ["-s", "--signal", "-k", "--kill-after"], positional: 1 },
  xargs: {
    valueOptions: ["-I", "-n", "-P", "-d", "-L", "-s", "-E", "-a", "--arg-file", "--delimiter"],
  },
};

/** The programs a command runs: argv with wrappers peeled off, and each wrapper's name. */
export interface InnerCommand {
  argv: string[];
  wrappers: string[];
}

/**
 * Peels wrappers off `argv` (`sudo -u x env A=1 timeout 5 rm -rf y` runs `rm -rf y`). With
 * `byBasename`, programs are known by their file name (`/usr/bin/sudo` is `sudo`) and the returned
 * argv starts with the file name: right for danger checks, wrong for read-only checks, where
 * `./ls` is not `ls`.
 */
export function unwrap(argv: string[], byBasename = false): InnerCommand {
  const wrappers: string[] = [];
  const named = (words: string[]): string[] =>
    byBasename && words[0] !== undefined ? [programName(words[0]), ...words.slice(1)] : words;
  let rest = named(argv);
  for (;;) {
    const name = rest[0];
    const spec = lookup(WRAPPERS, name);
    if (name === undefined || spec === undefined) break;
    if (name === "command" && commandOnlyDescribes(rest.slice(1))) break;
    let k = 1;
    while (k < rest.length) {
      const arg = rest[k] as string;
      if (arg === "--") {
        k += 1;
        break;
      }
      if (spec.assignments === true && ASSIGNMENT.test(arg)) k += 1;
      else if (arg.startsWith("-") && arg.length > 1) k += spec.valueOptions.includes(arg) ? 2 : 1;
      else break;
    }
    k += spec.positional ?? 0;
    if (k >= rest.length) break;
    wrappers.push(name);
    rest = named(rest.slice(k));
  }
  return { argv: rest, wrappers };
}

const FIND_EXEC = new Set(["-exec", "-execdir", "-ok", "-okdir"]);

/** A program's file name: `/bin/rm` and `rm` are both `rm`. */
export function programName(word: string): string {
  return word.includes("/") ? posix.basename(word) : word;
}

/**
 * Every program the command runs, known by file name (see `unwrap`): the unwrapped command, and
 * for `find`, each `-exec … ;` body. The wrappers of the outer command are kept on each.
 */
export function innerCommands(argv: string[]): InnerCommand[] {
  const outer = unwrap(argv, true);
  const result: InnerCommand[] = [outer];
  if (outer.argv[0] === "find") {
    for (let k = 1; k < outer.argv.length; k += 1) {
      if (!FIND_EXEC.has(outer.argv[k] as string)) continue;
      const body: string[] = [];
      k += 1;
      while (k < outer.argv.length && outer.argv[k] !== ";" && outer.argv[k] !== "+") {
        body.push(outer.argv[k] as string);
        k += 1;
      }
      const inner = unwrap(body, true);
      result.push({ argv: inner.argv, wrappers: [...outer.wrappers, "find", ...inner.wrappers] });
    }
  }
  return result;
}

const SED_SCRIPT_OPTIONS = new Set(["-e", "--expression", "-f", "--file"]);
const SED_VALUE_OPTIONS = new Set(["-l", "--line-length"]);

/**
 * The arguments of `argv` that may name files: every operand (after `--`, everything), and the value
 * of a `--flag=value` option. For `sed`, the script is not a file.
 */
export function pathArguments(argv: string[]): string[] {
  const paths: string[] = [];
  const isSed = argv[0] === "sed";
  let scriptGiven = false;
  let endOfOptions = false;
  for (let k = 1; k < argv.length; k += 1) {
    const arg = argv[k] as string;
    if (!endOfOptions && arg === "--") endOfOptions = true;
    else if (!endOfOptions && arg.startsWith("-") && arg.length > 1) {
      if (isSed && (SED_SCRIPT_OPTIONS.has(arg) || SED_VALUE_OPTIONS.has(arg))) {
        scriptGiven ||= SED_SCRIPT_OPTIONS.has(arg);
        k += 1;
      } else if (isSed && /^--(expression|file)=/.test(arg)) scriptGiven = true;
      else if (arg.startsWith("--") && arg.includes("="))
        paths.push(arg.slice(arg.indexOf("=") + 1));
    } else if (isSed && !scriptGiven) scriptGiven = true;
    else paths.push(arg);
  }
  return paths.flatMap(expandBraces);
}

/** The most words `expandBraces` returns; a word that expands to more is an injection risk. */
export const MAX_BRACE_EXPANSION = 64;

/**
 * Expands brace alternatives (`src/{a,b}` → `src/a`, `src/b`) so path checks see what Bash would
 * pass, the innermost first (`{{..,x},y}` gives `..` among its words). Stops at
 * `MAX_BRACE_EXPANSION + 1` words, so a caller can tell an oversized expansion.
 */
export function expandBraces(word: string): string[] {
  const pattern = /^(.*)\{([^{}]*,[^{}]*)\}(.*)$/s;
  let results = [word];
  for (let round = 0; round < 8; round += 1) {
    let changed = false;
    const next: string[] = [];
    for (const current of results) {
      const match = pattern.exec(current);
      if (match === null) next.push(current);
      else {
        changed = true;
        const [, head = "", body = "", tail = ""] = match;
        for (const part of body.split(",")) next.push(`${head}${part}${tail}`);
      }
    }
    results = next.slice(0, MAX_BRACE_EXPANSION + 1);
    if (!changed || next.length > MAX_BRACE_EXPANSION) break;
  }
  return results;
}

/** Short and long flags of an argv, e.g. `-rf --force` → {"r", "f", "--force"}. */
export function flagsOf(argv: string[]): Set<string> {
  const flags = new Set<string>();
  for (const arg of argv.slice(1)) {
    if (arg === "--") break;
    if (arg.startsWith("--")) flags.add(arg.split("=")[0] as string);
    else if (arg.startsWith("-") && arg.length > 1) for (const c of arg.slice(1)) flags.add(c);
  }
  return flags;
}
