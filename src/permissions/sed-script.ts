import { optionTable, parseArgs } from "./command-options.js";

/**
 * Reads a `sed` command line and its script the way GNU sed does, to find what the script does
 * beyond editing its input: `e` and `s///e` run a program, `w`, `W` and `s///w` write a file, `r`
 * and `R` read one. A script that cannot be read (or comes from a file, `-f`) is reported as such:
 * callers treat it as able to do anything.
 */

/** What a sed script does beyond printing its input. */
export interface SedEffects {
  /** The first program-running command, as written (`e touch x`, `s///e`). */
  exec?: string;
  /** Files written by `w`, `W` and `s///w`. */
  writes: string[];
  /** Files read by `r` and `R`. */
  reads: string[];
  /** Why the script could not be read. */
  unreadable?: string;
}

/** Where a sed script's `w` writes only to the program's own output. */
export const SED_OUTPUTS: ReadonlySet<string> = new Set(["/dev/stdout", "/dev/stderr"]);

export type SedCall =
  | { ok: false; reason: string }
  | {
      ok: true;
      /** `-i`: the files are edited in place. */
      inPlace: boolean;
      /** `--follow-symlinks` with `-i`. */
      followsLinks: boolean;
      /** The backup suffix given to `-i` (a `*` in it stands for the file's name). */
      backupSuffix?: string;
      effects: SedEffects;
      /** The input files. */
      files: string[];
    };

const SED_OPTIONS = optionTable({
  flags: "nrEsuz",
  values: "l",
  long:
    "quiet silent regexp-extended separate unbuffered null-data line-length= posix debug sandbox " +
    "expression= follow-symlinks",
  effects: {
    "-e": ["read", "required"],
    "-f": ["read", "required"],
    "--file": "read",
    "-i": ["write", "optional"],
    "--in-place": ["write", "optional"],
  },
});

/** Reads sed's arguments (`args` without the program name). */
export function readSed(args: readonly string[]): SedCall {
  const parsed = parseArgs(SED_OPTIONS, args);
  if (!parsed.ok) return { ok: false, reason: `sed: ${parsed.reason}` };
  const scripts: string[] = [];
  let fromFile = false;
  let inPlace = false;
  let followsLinks = false;
  let backupSuffix: string | undefined;
  for (const option of parsed.options) {
    const name = option.spec.name;
    if (name === "-e" || name === "--expression") scripts.push(option.value ?? "");
    if (name === "-f" || name === "--file") fromFile = true;
    if (name === "-i" || name === "--in-place") {
      inPlace = true;
      if (option.value) backupSuffix = option.value;
    }
    if (name === "--follow-symlinks") followsLinks = true;
  }
  const files = [...parsed.operands];
  if (scripts.length === 0 && !fromFile) {
    const script = files.shift();
    if (script === undefined) return { ok: false, reason: "sed without a script" };
    scripts.push(script);
  }
  const effects = fromFile
    ? { writes: [], reads: [], unreadable: "the script comes from a file (-f)" }
    : readSedScript(scripts.join("\n"));
  const call = { ok: true, inPlace, followsLinks, effects, files } as const;
  return backupSuffix === undefined ? call : { ...call, backupSuffix };
}

const SIMPLE_COMMANDS = new Set([..."=dDgGhHnNpPxzF"]);
const NUMBER_COMMANDS = new Set([..."lLqQ"]);

/** Reads a sed script (GNU syntax) and reports its effects. */
export function readSedScript(script: string): SedEffects {
  const effects: SedEffects = { writes: [], reads: [] };
  let i = 0;
  const at = (k = 0): string => script[i + k] ?? "";
  const fail = (why: string): SedEffects => ({ ...effects, unreadable: why });
  const skipBlanks = (): void => {
    while (at() === " " || at() === "\t") i += 1;
  };
  const restOfLine = (): string => {
    const end = script.indexOf("\n", i);
    const stop = end === -1 ? script.length : end;
    const text = script.slice(i, stop);
    i = stop;
    return text;
  };
  /** Reads a delimited part (`/regex/`), leaving `i` after the closing delimiter. */
  const delimited = (delimiter: string): boolean => {
    while (i < script.length && at() !== delimiter) {
      if (at() === "\\") i += 1;
      else if (at() === "\n" && delimiter !== "\n") return false;
      i += 1;
    }
    if (i >= script.length) return false;
    i += 1;
    return true;
  };
  const address = (): boolean => {
    if (/\d/.test(at())) {
      while (/[\d~]/.test(at())) i += 1;
      return true;
    }
    if (at() === "$") {
      i += 1;
      return true;
    }
    if (at() === "/" || at() === "\\") {
      const delimiter = at() === "\\" ? at(1) : "/";
      i += at() === "\\" ? 2 : 1;
      if (!delimited(delimiter)) return false;
      while (at() === "I" || at() === "M") i += 1;
      return true;
    }
    return true;
  };

  while (i < script.length) {
    while (/[\s;]/.test(at())) i += 1;
    if (i >= script.length) break;
    if (!address()) return fail("an address is not closed");
    skipBlanks();
    if (at() === ",") {
      i += 1;
      skipBlanks();
      if (at() === "+" || at() === "~") i += 1;
      if (!address()) return fail("an address is not closed");
    }
    skipBlanks();
    while (at() === "!") {
      i += 1;
      skipBlanks();
    }
    const command = at();
    i += 1;
    if (command === "{" || command === "}") continue;
    if (command === "#") restOfLine();
    else if (command === ":" || command === "b" || command === "t" || command === "T") {
      while (i < script.length && at() !== "\n" && at() !== ";") i += 1;
    } else if (command === "a" || command === "i" || command === "c") {
      while (i < script.length && at() !== "\n") {
        if (at() === "\\") i += 1;
        i += 1;
      }
    } else if (command === "s" || command === "y") {
      const delimiter = at();
      if (delimiter === "" || delimiter === "\\" || delimiter === "\n") {
        return fail(`${command} has no delimiter`);
      }
      i += 1;
      if (!delimited(delimiter) || !delimited(delimiter)) return fail(`${command} is not closed`);
      if (command === "s") {
        for (;;) {
          const flag = at();
          if (/[gpiImM\d]/.test(flag) && flag !== "") i += 1;
          else if (flag === "e") {
            effects.exec ??= "s///e";
            i += 1;
          } else if (flag === "w") {
            i += 1;
            skipBlanks();
            effects.writes.push(restOfLine());
            break;
          } else break;
        }
      }
    } else if (command === "r" || command === "R" || command === "w" || command === "W") {
      skipBlanks();
      const file = restOfLine();
      (command === "r" || command === "R" ? effects.reads : effects.writes).push(file);
    } else if (command === "e") {
      effects.exec ??= `e${restOfLine()}`;
    } else if (command === "v") {
      while (i < script.length && at() !== "\n" && at() !== ";") i += 1;
    } else if (NUMBER_COMMANDS.has(command)) {
      skipBlanks();
      while (/\d/.test(at())) i += 1;
    } else if (!SIMPLE_COMMANDS.has(command)) {
      return fail(`unknown command ${JSON.stringify(command)}`);
    }
    skipBlanks();
    if (i < script.length && !/[\n;}#]/.test(at())) {
      return fail(`unexpected ${JSON.stringify(at())} after ${command}`);
    }
  }
  return effects;
}
