/**
 * Programs' options as data, and an argv parser that reads them the way GNU `getopt_long` and
 * git's parse-options do: long options by their full name or any unambiguous abbreviation (an exact
 * name wins), `--opt=value` and `--opt value`, combined short flags (`-rn`), a short option's value
 * attached or as the next word (`-n5`, `-n 5`), and `--` ending the options. An option the table
 * does not know, or an abbreviation that could mean two, makes the parse `unknown`: callers fail
 * closed on it.
 */

/**
 * What an option does beyond reading the files it is given:
 * - `exec`: runs a program; `write`: writes a file; `state`: changes system state;
 * - `follow`: follows symbolic links while walking, so it may read outside the working directories;
 * - `read`: its value names a file the program reads (checked like an operand);
 * - `chdir`: its value is a directory the program works in (later relative paths start there);
 * - `target`: its value names a file or directory the program writes (`cp -t DIR`).
 */
export type OptionEffect =
  | "exec"
  | "write"
  | "state"
  | "follow"
  | "read"
  | "chdir"
  | "target"
  /** Reads the files a list names (`--files0-from`, `md5sum -c`), which the check cannot see. */
  | "list";

/**
 * Whether an option takes a value: none, always (`--opt=v` or `--opt v`), only as `--opt=v`, or
 * two words (jq's `--slurpfile NAME FILE`; the value kept is the second).
 */
export type OptionValue = "none" | "required" | "optional" | "two";

export interface OptionSpec {
  /** The name as written: `-o` or `--output`. */
  name: string;
  value: OptionValue;
  effect?: OptionEffect;
}

/** A program's options: short letters and long names, each with its value and effect. */
export interface OptionTable {
  short: ReadonlyMap<string, OptionSpec>;
  long: ReadonlyMap<string, OptionSpec>;
  /** `-5` means a count (head, tail, uniq). */
  numeric: boolean;
}

/**
 * Builds a table from a compact description:
 * - `flags`: short letters that take no value, e.g. `"aAlR1"`;
 * - `values`: short letters that take a value, e.g. `"nI"`;
 * - `long`: space-separated long names; `name=` takes a value, `name[=]` an optional one, `name=2`
 *   two words;
 * - `effects`: option names (`-o`, `--output`) with their effect; a name listed here and not in
 *   the other fields is added as a long option with a value (`--output`) or a flag (`-C`), so the
 *   dangerous options are known to the abbreviation rules even when nothing else needs them.
 * `--help` and `--version` are always known.
 */
export function optionTable(description: {
  flags?: string;
  values?: string;
  long?: string;
  effects?: Record<string, OptionEffect | [OptionEffect, OptionValue]>;
  numeric?: boolean;
}): OptionTable {
  const short = new Map<string, OptionSpec>();
  const long = new Map<string, OptionSpec>();
  for (const c of description.flags ?? "")
    if (c !== " ") short.set(c, { name: `-${c}`, value: "none" });
  for (const c of description.values ?? "")
    if (c !== " ") short.set(c, { name: `-${c}`, value: "required" });
  for (const word of `help version ${description.long ?? ""}`.split(/\s+/)) {
    if (word === "") continue;
    const value: OptionValue = word.endsWith("[=]")
      ? "optional"
      : word.endsWith("=2")
        ? "two"
        : word.endsWith("=")
          ? "required"
          : "none";
    const name = word.replace(/(\[=\]|=2|=)$/, "");
    long.set(name, { name: `--${name}`, value });
  }
  for (const [name, described] of Object.entries(description.effects ?? {})) {
    const [effect, givenValue] = Array.isArray(described) ? described : [described, undefined];
    if (name.startsWith("--")) {
      const key = name.slice(2);
      const value =
        givenValue ?? long.get(key)?.value ?? (effect === "follow" ? "none" : "required");
      long.set(key, { name, value, effect });
    } else {
      const key = name.slice(1);
      const value = givenValue ?? short.get(key)?.value ?? "none";
      short.set(key, { name, value, effect });
    }
  }
  return { short, long, numeric: description.numeric === true };
}

/** One option as given, with its value. */
export interface GivenOption {
  spec: OptionSpec;
  value?: string;
}

export type ParsedArgs =
  | { ok: true; options: GivenOption[]; operands: string[] }
  /** Why the words could not be read: an unknown or ambiguous option, or a missing value. */
  | { ok: false; reason: string };

/** Finds a long option by exact name or unambiguous prefix. */
export function findLong(
  table: OptionTable,
  name: string,
): { spec: OptionSpec } | { error: string } {
  const exact = table.long.get(name);
  if (exact !== undefined) return { spec: exact };
  const matches = [...table.long.keys()].filter((key) => key.startsWith(name));
  if (matches.length === 1) return { spec: table.long.get(matches[0] as string) as OptionSpec };
  if (matches.length > 1) {
    return { error: `--${name} is ambiguous (${matches.map((m) => `--${m}`).join(", ")})` };
  }
  return { error: `unknown option --${name}` };
}

/**
 * Reads `args` (argv without the program name) against `table`. Options and operands may mix, as
 * GNU programs permute them; `-` alone is an operand (standard input). With `stopAtOperand` (a
 * wrapper such as `env` or `nice`), the first operand and every word after it are operands.
 */
export function parseArgs(
  table: OptionTable,
  args: readonly string[],
  stopAtOperand = false,
): ParsedArgs {
  const options: GivenOption[] = [];
  const operands: string[] = [];
  for (let k = 0; k < args.length; k += 1) {
    const arg = args[k] as string;
    if (arg === "--") {
      operands.push(...args.slice(k + 1));
      break;
    }
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      const found = findLong(table, name);
      if ("error" in found) return { ok: false, reason: found.error };
      const { spec } = found;
      if (eq !== -1) {
        if (spec.value === "none") return { ok: false, reason: `${spec.name} takes no value` };
        options.push({ spec, value: arg.slice(eq + 1) });
      } else if (spec.value === "required" || spec.value === "two") {
        const words = spec.value === "two" ? 2 : 1;
        const value = args[k + words];
        if (value === undefined) return { ok: false, reason: `${spec.name} needs a value` };
        options.push({ spec, value });
        k += words;
      } else options.push({ spec });
      continue;
    }
    if (!arg.startsWith("-") || arg === "-") {
      if (stopAtOperand) {
        operands.push(...args.slice(k));
        break;
      }
      operands.push(arg);
      continue;
    }
    if (table.numeric && /^-\d+$/.test(arg)) continue;
    for (let c = 1; c < arg.length; c += 1) {
      const letter = arg[c] as string;
      const spec = table.short.get(letter);
      if (spec === undefined) return { ok: false, reason: `unknown option -${letter}` };
      if (spec.value === "none") {
        options.push({ spec });
        continue;
      }
      const attached = arg.slice(c + 1);
      if (attached !== "" || spec.value === "optional") {
        options.push(attached === "" ? { spec } : { spec, value: attached });
      } else {
        const value = args[k + 1];
        if (value === undefined) return { ok: false, reason: `${spec.name} needs a value` };
        options.push({ spec, value });
        k += 1;
      }
      break;
    }
  }
  return { ok: true, options, operands };
}
