import { optionTable, parseArgs } from "./command-options.js";

/** git's own options before the subcommand. */
const GIT_GLOBAL = optionTable({
  flags: "pP",
  long:
    "no-pager paginate no-optional-locks no-replace-objects literal-pathspecs glob-pathspecs " +
    "noglob-pathspecs icase-pathspecs bare no-advice namespace=",
  effects: {
    "-C": ["chdir", "required"],
    "-c": ["exec", "required"],
    "--config-env": "exec",
    "--exec-path": ["exec", "optional"],
    "--git-dir": "read",
    "--work-tree": "read",
    "--list-cmds": ["exec", "required"],
  },
});

/** A git command line split into its global options and the subcommand's words. */
export type GitCall =
  | { ok: true; global: ReturnType<typeof parseArgs> & { ok: true }; sub: string; args: string[] }
  | { ok: false; reason: string };

/** Splits `git [global options] subcommand args…`; `git --version` is the `version` subcommand. */
export function splitGit(args: readonly string[]): GitCall {
  let k = 0;
  while (k < args.length && (args[k] as string).startsWith("-")) {
    const arg = args[k] as string;
    if (arg === "--version") return { ok: true, global: okEmpty(), sub: "version", args: [] };
    if (arg === "--help") return { ok: true, global: okEmpty(), sub: "help", args: [] };
    const takesNext = arg === "-C" || arg === "-c" || (/^--[a-z-]+$/.test(arg) && needsValue(arg));
    k += takesNext ? 2 : 1;
  }
  const global = parseArgs(GIT_GLOBAL, args.slice(0, k));
  if (!global.ok) return global;
  const sub = args[k];
  if (sub === undefined) return { ok: false, reason: "git without a subcommand" };
  return { ok: true, global, sub, args: args.slice(k + 1) };
}

function needsValue(arg: string): boolean {
  const name = arg.slice(2);
  const spec = GIT_GLOBAL.long.get(name);
  return spec?.value === "required";
}

function okEmpty(): ReturnType<typeof parseArgs> & { ok: true } {
  return { ok: true, options: [], operands: [] };
}
