import { optionTable } from "./command-options.js";
import { type ReaderSpec, anyText, none, text } from "./reader-spec.js";

/**
 * The read-only programs whose words are text (echo, printf, test, seq, basename) or that report
 * on the system (date, uname, id, ps, free, which), as data like reader-programs: none of them
 * reads a file its operands name, but some options and words make them more than a read.
 */

/**
 * `test -v NAME` and `-R NAME` evaluate an array subscript in NAME, where `$(…)` runs even from a
 * quoted word; `printf -v NAME` does too, and sets the variable for the rest of the line.
 */
const test: ReaderSpec = {
  ...anyText,
  looksUp: testedFiles,
  check: (_, words) =>
    words.some((word) => word === "-v" || word === "-R")
      ? "test -v/-R takes a variable, whose subscript may run commands"
      : undefined,
};
/** test's unary file tests (`-e FILE`); `-a` is one only where an expression starts. */
const FILE_TESTS = new Set(
  "-a -b -c -d -e -f -g -G -h -k -L -N -O -p -r -s -S -u -w -x".split(" "),
);
/** test's binary file comparisons (`A -nt B`). */
const FILE_COMPARISONS = new Set(["-nt", "-ot", "-ef"]);
const EXPRESSION_STARTS = new Set(["!", "(", "-a", "-o"]);

/**
 * The files `test` (or `[`) looks up: the operands of its file tests and comparisons, whose
 * answers tell whether a file exists and what it is, as `stat FILE` would.
 */
function testedFiles(operands: readonly string[]): string[] {
  const words = operands.at(-1) === "]" ? operands.slice(0, -1) : operands;
  const files: string[] = [];
  words.forEach((word, i) => {
    const next = words[i + 1];
    const unary =
      FILE_TESTS.has(word) &&
      next !== undefined &&
      (word !== "-a" || i === 0 || EXPRESSION_STARTS.has(words[i - 1] ?? ""));
    if (unary) files.push(next);
    if (FILE_COMPARISONS.has(word) && i > 0 && next !== undefined) {
      files.push(words[i - 1] ?? "", next);
    }
  });
  return files;
}

const printf: ReaderSpec = {
  ...anyText,
  check: (_, words) =>
    words[0]?.startsWith("-v") === true ? "printf -v sets a variable" : undefined,
};

/**
 * ps: procps reads BSD options from words without a dash, and `e` among them prints every
 * process's environment (the server's too). Words that are an option's value are skipped.
 */
const ps: ReaderSpec = {
  ...anyText,
  check: (_, words) => {
    let value = false;
    for (const word of words) {
      if (value) {
        value = false;
        continue;
      }
      if (word.startsWith("--")) value = PS_LONG_VALUE_OPTIONS.has(word);
      else if (word.startsWith("-")) value = /[oOpqugGUtsC]$/.test(word);
      else if (word.includes("e")) return "ps e prints the environment of processes";
      else value = /[oOpUtk]$/.test(word);
    }
    return undefined;
  },
};
const PS_LONG_VALUE_OPTIONS = new Set(
  (
    "--format --sort --pid --ppid --quick-pid --user --User --group --Group --tty --sid --cols " +
    "--columns --rows --lines --width"
  ).split(" "),
);

const date: ReaderSpec = {
  operands: "text",
  check: (_, operands) =>
    operands.some((operand) => !operand.startsWith("+"))
      ? "date with an operand that is not a +FORMAT sets the clock"
      : undefined,
  options: optionTable({
    // -I takes its format only attached (-Iseconds), so it is read as a flag.
    flags: "RuI",
    values: "d",
    long: "date= debug iso-8601[=] resolution rfc-email rfc-3339= utc universal",
    effects: {
      "-s": ["state", "required"],
      "--set": "state",
      "-f": ["read", "required"],
      "--file": "read",
      "-r": ["read", "required"],
      "--reference": "read",
    },
  }),
};

export const TEXT_AND_SYSTEM_READERS: Record<string, ReaderSpec> = {
  pwd: none(optionTable({ flags: "LP", long: "logical physical" })),
  echo: anyText,
  printf,
  basename: text(optionTable({ flags: "asz", long: "multiple suffix= zero" })),
  dirname: text(optionTable({ flags: "z", long: "zero" })),
  which: text(optionTable({ flags: "as" })),
  // Its -B, -M and -S would list directories anywhere.
  whereis: text(optionTable({ flags: "bmsulgf" })),
  type: text(optionTable({ flags: "afptP" })),
  printenv: text(optionTable({ flags: "0", long: "null" })),
  env: none(optionTable({ flags: "0", long: "null" })),
  seq: text(optionTable({ flags: "w", values: "fs", long: "format= separator= equal-width" })),
  true: anyText,
  false: anyText,
  test,
  "[": test,
  sleep: anyText,
  date,
  uname: none(
    optionTable({
      flags: "asnrvmpio",
      long:
        "all kernel-name nodename kernel-release kernel-version machine processor " +
        "hardware-platform operating-system",
    }),
  ),
  whoami: none(),
  id: text(optionTable({ flags: "agGnruzZ", long: "context group groups name real user zero" })),
  groups: anyText,
  hostname: none(
    optionTable({
      flags: "aAdfiIsy",
      long: "alias all-fqdns domain fqdn long all-ip-addresses ip-address short yp nis",
    }),
  ),
  nproc: none(optionTable({ long: "all ignore=" })),
  uptime: none(optionTable({ flags: "ps", long: "pretty since" })),
  ps,
  free: none(
    optionTable({
      flags: "bkmghlltvw",
      values: "sc",
      long:
        "bytes kibi mebi gibi tebi pebi kilo mega giga tera peta human lohi total seconds= " +
        "count= wide si committed",
    }),
  ),
};
