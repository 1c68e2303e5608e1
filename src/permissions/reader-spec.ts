import { type GivenOption, type OptionTable, optionTable } from "./command-options.js";

/**
 * How a program on the read-only list is read: its options (with the ones that disqualify it), what
 * its operands are, and which of them it reads.
 */
export interface ReaderSpec {
  options: OptionTable;
  /** `files`: operands are files it reads; `text`: they are not paths; `none`: it takes none. */
  operands: "files" | "text" | "none";
  /** Every word is an operand, even one that starts with `-` (echo, printf, test). */
  anyArgs?: true;
  /**
   * Operands before the files that are not paths (grep's pattern, jq's filter), unless one of
   * `unless` gave them already (`grep -e PATTERN file`).
   */
  leading?: { count: number; unless: readonly string[] };
  /** Operands from this index on (after `leading`) are written, not read (uniq's output file). */
  writesFrom?: number;
  /** With no file operand, what it reads: `.` for programs that walk the current directory. */
  defaultOperand?: (options: readonly GivenOption[]) => string | undefined;
  /** Whether it reads the whole tree under each directory it is given (`grep -r`, `du`). */
  walks?: (options: readonly GivenOption[]) => boolean;
  /** Of a program whose every word is text (`anyArgs`), those it looks up on disk (`test -e FILE`). */
  looksUp?: (operands: readonly string[]) => string[];
  /** A last check on the parsed words; says why the call is not read-only. */
  check?: (options: readonly GivenOption[], operands: readonly string[]) => string | undefined;
}

/** Whether any of `names` was given. */
export function given(options: readonly GivenOption[], ...names: string[]): boolean {
  return options.some((option) => names.includes(option.spec.name));
}

/** `.` when no file operand is given: the program walks the current directory. */
export const walksCurrentDirectory = (): string => ".";

/** `.` when one of the recursion options was given (grep -r). */
export const walksWhen =
  (...names: string[]) =>
  (options: readonly GivenOption[]): string | undefined =>
    given(options, ...names) ? "." : undefined;

/** Always reads the whole tree under a directory it is given. */
export const alwaysWalks = (): boolean => true;

/** Reads the whole tree under a directory it is given when one of `names` was given (`ls -R`). */
export const walksWith =
  (...names: string[]) =>
  (options: readonly GivenOption[]): boolean =>
    given(options, ...names);

/** A program whose operands are files it reads. */
export const files = (options: OptionTable, extra: Partial<ReaderSpec> = {}): ReaderSpec => ({
  options,
  operands: "files",
  ...extra,
});

/** A file reader from its flag letters, value letters and long options. */
export const plainFiles = (flags: string, values: string, long: string): ReaderSpec =>
  files(optionTable({ flags, values, long }));

/** A program whose operands are text, not paths. */
export const text = (options: OptionTable): ReaderSpec => ({ options, operands: "text" });

/** A program whose every word is text, options included (`echo -delete` prints `-delete`). */
export const anyText: ReaderSpec = { options: optionTable({}), operands: "text", anyArgs: true };

/** A program that takes no operand. */
export const none = (options: OptionTable = optionTable({})): ReaderSpec => ({
  options,
  operands: "none",
});
