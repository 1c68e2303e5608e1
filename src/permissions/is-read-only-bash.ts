import { HARMLESS_DEVICES } from "./dangerous-path.js";
import type { ShellCommand, ShellRedirect, ShellScript } from "./parse-shell.js";
import { lookup, splitAssignments, unwrap } from "./shell-command.js";

/**
 * Read-only Bash detection. A command line is read-only when nothing in it can change a file or run
 * a program the analysis cannot see: no injection risk, no variable assignment (`PAGER=…`,
 * `GIT_EXTERNAL_DIFF=…` run programs), no output redirection except to a harmless device or fd, and
 * every simple command is a known reader with no writing option. `tee` writes files, so it is not a
 * reader (the reference once classed it as one, agentscope #2605). Anything unknown is not
 * read-only: the check fails closed.
 */

type ArgsCheck = (args: string[]) => boolean;

const always: ArgsCheck = () => true;
const noArgs: ArgsCheck = (args) => args.length === 0;
/**
 * Read-only unless an argument is one of the listed options. A long option also matches its
 * `--option=value` form; a one-letter option also matches when attached (`-ofile`) or combined
 * (`-ro file`); a multi-letter single-dash option (`-exec`) matches exactly.
 */
const without =
  (...options: string[]): ArgsCheck =>
  (args) =>
    !args.some((arg) =>
      options.some((option) => {
        if (arg === option) return true;
        if (option.startsWith("--")) return arg.startsWith(`${option}=`);
        if (option.length === 2) return /^-[^-]/.test(arg) && arg.includes(option.slice(1));
        return false;
      }),
    );

const GIT_READ_ONLY: Record<string, ArgsCheck> = {
  status: always,
  log: without("--output"),
  diff: without("--output"),
  show: without("--output"),
  blame: always,
  shortlog: always,
  describe: always,
  "rev-parse": always,
  "rev-list": always,
  "ls-files": always,
  "ls-tree": always,
  "ls-remote": always,
  "cat-file": always,
  "show-ref": always,
  "merge-base": always,
  "name-rev": always,
  "for-each-ref": always,
  "check-ignore": always,
  "count-objects": always,
  whatchanged: always,
  grep: (args) => !args.some((arg) => arg.startsWith("-O") || arg.startsWith("--open-files")),
  reflog: (args) => args.length === 0 || args[0] === "show",
  stash: (args) => args[0] === "list" || args[0] === "show",
  worktree: (args) => args[0] === "list",
  remote: (args) =>
    args.every((arg) => arg === "-v" || arg === "--verbose") || args[0] === "get-url",
  branch: (args) =>
    args.every((arg) =>
      ["-a", "-r", "-v", "-vv", "-l", "--all", "--remotes", "--list", "--show-current"].includes(
        arg,
      ),
    ),
  tag: (args) => args.length === 0 || args[0] === "-l" || args[0] === "--list",
  config: (args) =>
    ["--get", "--get-all", "--get-regexp", "--list", "-l"].includes(args[0] ?? "") &&
    !args.includes("--edit"),
  help: always,
  version: always,
};

const git: ArgsCheck = (args) => {
  let k = 0;
  while (args[k] === "--no-pager" || args[k] === "--no-optional-locks") k += 1;
  const sub = args[k];
  if (sub === "--version") return true;
  const check = lookup(GIT_READ_ONLY, sub);
  return check !== undefined && check(args.slice(k + 1));
};

const find: ArgsCheck = without(
  "-exec",
  "-execdir",
  "-ok",
  "-okdir",
  "-delete",
  "-fprint",
  "-fprint0",
  "-fprintf",
  "-fls",
);

/** Programs that only read, with the options that would make them write or run something. */
const READ_ONLY_COMMANDS: Record<string, ArgsCheck> = {
  ls: always,
  cat: always,
  head: always,
  tail: always,
  wc: always,
  pwd: always,
  echo: always,
  printf: always,
  grep: always,
  egrep: always,
  fgrep: always,
  rg: without("--pre"),
  find,
  git,
  cd: always,
  pushd: always,
  popd: always,
  dirs: always,
  tree: without("-o"),
  file: always,
  stat: always,
  du: always,
  df: always,
  diff: always,
  cmp: always,
  comm: always,
  cut: always,
  tr: always,
  nl: always,
  sort: without("-o", "--output"),
  uniq: (args) => args.filter((arg) => !arg.startsWith("-")).length <= 1,
  column: always,
  fold: always,
  rev: always,
  tac: always,
  paste: always,
  expand: always,
  unexpand: always,
  od: always,
  hexdump: always,
  strings: always,
  md5sum: always,
  sha1sum: always,
  sha256sum: always,
  sha512sum: always,
  cksum: always,
  b2sum: always,
  base64: without("-o", "--output"),
  basename: always,
  dirname: always,
  realpath: always,
  readlink: always,
  which: always,
  whereis: always,
  type: always,
  command: (args) => args[0] === "-v" || args[0] === "-V",
  printenv: always,
  env: noArgs,
  jq: always,
  seq: always,
  true: always,
  false: always,
  test: always,
  "[": always,
  sleep: always,
  date: without("-s", "--set"),
  uname: always,
  whoami: always,
  id: always,
  groups: always,
  hostname: noArgs,
  nproc: always,
  uptime: always,
  free: always,
  ps: always,
};

/** Wrappers that add nothing to what the wrapped reader does. */
const TRANSPARENT_WRAPPERS = new Set(["time", "nice", "nohup", "timeout", "stdbuf", "xargs"]);

const OUTPUT_OPS = new Set([">", ">>", ">|", "&>", "&>>", "<>", ">&"]);

/** Whether a redirection writes to a file (not a harmless device, a duplicated fd, or a heredoc). */
export function writesFile(redirect: ShellRedirect): boolean {
  if (!OUTPUT_OPS.has(redirect.op)) return false;
  const target = redirect.target?.value;
  if (target === undefined) return true;
  if ((redirect.op === ">&" || redirect.op === "<>") && /^(\d+|-)$/.test(target)) return false;
  return !HARMLESS_DEVICES.has(target);
}

/** Whether one simple command only reads (its own redirections included). */
export function isReadOnlyCommand(command: ShellCommand): boolean {
  if (command.redirects.some(writesFile)) return false;
  const { assignments, argv } = splitAssignments(command);
  if (assignments.length > 0 || argv.length === 0) return false;
  const inner = unwrap(argv);
  if (!inner.wrappers.every((wrapper) => TRANSPARENT_WRAPPERS.has(wrapper))) return false;
  const [name, ...args] = inner.argv;
  const check = lookup(READ_ONLY_COMMANDS, name);
  return check !== undefined && check(args);
}

/** Whether a whole command line only reads: no risk, and every simple command reads. */
export function isReadOnlyBash(script: ShellScript): boolean {
  return (
    script.risks.length === 0 &&
    script.commands.length > 0 &&
    script.commands.every(isReadOnlyCommand)
  );
}
