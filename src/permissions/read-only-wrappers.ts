import { type OptionTable, optionTable, parseArgs } from "./command-options.js";

/**
 * Wrappers that run the rest of their words as a command (`nice`, `time`, `timeout`, `env`, …),
 * with their own options as data. A wrapped command is read-only only if the wrapper's options are
 * and what it runs is. `xargs`, `sudo` and `doas` are never read-only: xargs builds its command
 * line from its input, which the check cannot see.
 */

interface WrapperSpec {
  options: OptionTable;
  /** Words after the options that belong to the wrapper (timeout's duration). */
  positional?: number;
  /** `NAME=value` words after the options set the command's environment (env). */
  assignments?: true;
}

const WRAPPER_SPECS: Record<string, WrapperSpec> = {
  time: {
    options: optionTable({
      flags: "pvq",
      values: "f",
      long: "portability verbose quiet format=",
      effects: {
        "-o": ["write", "required"],
        "--output": "write",
        "-a": "write",
        "--append": "write",
      },
    }),
  },
  nice: { options: optionTable({ values: "n", long: "adjustment=", numeric: true }) },
  nohup: { options: optionTable({}) },
  timeout: {
    options: optionTable({
      flags: "v",
      values: "sk",
      long: "preserve-status foreground kill-after= signal= verbose",
    }),
    positional: 1,
  },
  stdbuf: { options: optionTable({ values: "ioe", long: "input= output= error=" }) },
  env: {
    options: optionTable({
      flags: "i0v",
      values: "u",
      long:
        "ignore-environment null unset= block-signal[=] default-signal[=] ignore-signal[=] " +
        "list-signal-handling debug",
      effects: {
        "-C": ["chdir", "required"],
        "--chdir": "chdir",
        "-S": ["exec", "required"],
        "--split-string": "exec",
      },
    }),
    assignments: true,
  },
  command: { options: optionTable({ flags: "p" }) },
  exec: { options: optionTable({ flags: "cl", values: "a" }) },
  builtin: { options: optionTable({}) },
};

const NEVER_READ_ONLY: Record<string, string> = {
  xargs: "xargs runs a command line built from its input",
  sudo: "sudo runs a command as another user",
  doas: "doas runs a command as another user",
};

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

export type Unwrapped =
  { ok: true; argv: string[]; wrappers: string[]; chdir?: string } | { ok: false; reason: string };

/**
 * Whether `command -v`/`-V` only describes its operands (without it, it runs one). Only the
 * option words before the first operand are `command`'s own: in `command cat -v f`, `-v` is cat's.
 */
export function commandOnlyDescribes(args: readonly string[]): boolean {
  const first = args.findIndex((arg) => !arg.startsWith("-") || arg === "-" || arg === "--");
  const own = args.slice(0, first === -1 ? args.length : first);
  return own.some((arg) => /^-[pvV]*[vV][pvV]*$/.test(arg));
}

/**
 * Peels read-only-compatible wrappers off `argv`: `nice -n 5 timeout 10 cat f` is `cat f`. Fails
 * with the reason when a wrapper or one of its options makes the call more than a read.
 */
export function unwrapForReading(argv: readonly string[]): Unwrapped {
  let rest = [...argv];
  const wrappers: string[] = [];
  let chdir: string | undefined;
  for (;;) {
    const name = rest[0] ?? "";
    const never = Object.hasOwn(NEVER_READ_ONLY, name) ? NEVER_READ_ONLY[name] : undefined;
    if (never !== undefined) return { ok: false, reason: never };
    if (name === "command" && commandOnlyDescribes(rest.slice(1))) break;
    const spec = Object.hasOwn(WRAPPER_SPECS, name) ? WRAPPER_SPECS[name] : undefined;
    if (spec === undefined) break;
    const parsed = parseArgs(spec.options, rest.slice(1), true);
    if (!parsed.ok) return { ok: false, reason: `${name}: ${parsed.reason}` };
    for (const option of parsed.options) {
      const effect = option.spec.effect;
      if (effect === "chdir") chdir = option.value;
      else if (effect !== undefined) {
        return { ok: false, reason: `${name} ${option.spec.name} ${effectText(effect)}` };
      }
    }
    const operands = parsed.operands.slice(spec.positional ?? 0);
    if (spec.assignments === true && operands.some((word) => ASSIGNMENT.test(word))) {
      return { ok: false, reason: `${name} sets variables a program may act on` };
    }
    if (operands.length === 0) {
      if (name === "env") break;
      return { ok: false, reason: `${name} without a command` };
    }
    wrappers.push(name);
    rest = operands;
  }
  return chdir === undefined
    ? { ok: true, argv: rest, wrappers }
    : { ok: true, argv: rest, wrappers, chdir };
}

/** What an option's effect means, for reasons. */
export function effectText(effect: string): string {
  switch (effect) {
    case "exec":
      return "runs a program";
    case "write":
    case "target":
      return "writes a file";
    case "state":
      return "changes system state";
    case "follow":
      return "follows symbolic links, possibly outside the working directories";
    case "list":
      return "reads the files a list names, which the check does not see";
    default:
      return effect;
  }
}
