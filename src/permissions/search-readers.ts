import { optionTable } from "./command-options.js";
import {
  type ReaderSpec,
  files,
  given,
  alwaysWalks,
  walksCurrentDirectory,
  walksWhen,
  walksWith,
} from "./reader-spec.js";

/**
 * The read-only programs that search what files hold (grep and its egrep and fgrep, ripgrep), as
 * data like reader-programs: a file operand is read, and searching recursively walks directories.
 */

const grepOptions = optionTable({
  flags: "EFGPiyvwxcLloqsbHhnTZzUraI",
  values: "ABCDdem",
  long:
    "extended-regexp fixed-strings basic-regexp perl-regexp regexp= ignore-case no-ignore-case " +
    "word-regexp line-regexp null-data no-messages invert-match max-count= byte-offset " +
    "line-number no-line-number line-buffered with-filename no-filename label= only-matching " +
    "quiet silent binary-files= text directories= devices= recursive include= exclude= " +
    "exclude-dir= files-without-match files-with-matches count initial-tab null " +
    "before-context= after-context= context= color[=] colour[=] binary",
  effects: {
    "-f": ["read", "required"],
    "--file": "read",
    "--exclude-from": "read",
    "-R": "follow",
    "--dereference-recursive": "follow",
  },
});
const grep = files(grepOptions, {
  leading: { count: 1, unless: ["-e", "--regexp", "-f", "--file"] },
  defaultOperand: walksWhen("-r", "--recursive"),
  walks: walksWith("-r", "--recursive"),
  // -d recurse (or an abbreviation) is -r; with no file it walks the current directory.
  check: (options) =>
    options.some(
      (option) =>
        given([option], "-d", "--directories") && !["read", "skip"].includes(option.value ?? ""),
    )
      ? "grep -d with other than read or skip walks directories"
      : undefined,
});

const rg = files(
  optionTable({
    flags: "abcFHhIilNnopqSsUuVvwx0",
    values: "ABCdEegjMmrTt",
    long:
      "text byte-offset count count-matches fixed-strings with-filename no-filename ignore-case " +
      "smart-case case-sensitive files-with-matches files-without-match line-number " +
      "no-line-number only-matching pretty quiet stats trim unrestricted invert-match " +
      "word-regexp line-regexp null null-data after-context= before-context= context= " +
      "max-depth= encoding= regexp= glob= iglob= glob-case-insensitive threads= max-columns= " +
      "max-columns-preview max-count= replace= type= type-not= type-list hidden no-hidden " +
      "no-ignore no-ignore-vcs no-ignore-dot no-ignore-global no-ignore-parent no-ignore-files " +
      "no-messages no-config column no-column heading no-heading json vimgrep multiline " +
      "multiline-dotall pcre2 engine= sort= sortr= files binary no-binary passthru " +
      "max-filesize= color= colors= line-buffered block-buffered crlf context-separator= " +
      "field-match-separator= field-context-separator= path-separator= one-file-system " +
      "include-zero no-unicode auto-hybrid-regex",
    effects: {
      "--pre": "exec",
      "--pre-glob": ["exec", "required"],
      "--hostname-bin": "exec",
      "-z": "exec",
      "--search-zip": ["exec", "none"],
      "-L": "follow",
      "--follow": "follow",
      "-f": ["read", "required"],
      "--file": "read",
      "--ignore-file": "read",
    },
  }),
  {
    leading: { count: 1, unless: ["-e", "--regexp", "-f", "--file", "--files", "--type-list"] },
    defaultOperand: walksCurrentDirectory,
    walks: alwaysWalks,
  },
);

/** grep, egrep, fgrep and rg. */
export const SEARCH_READERS: Record<string, ReaderSpec> = {
  grep,
  egrep: grep,
  fgrep: grep,
  rg,
};
