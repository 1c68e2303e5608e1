import { optionTable } from "./command-options.js";
import {
  type ReaderSpec,
  files,
  given,
  plainFiles,
  text,
  alwaysWalks,
  walksCurrentDirectory,
  walksWhen,
  walksWith,
} from "./reader-spec.js";
import { TEXT_AND_SYSTEM_READERS } from "./text-and-system-readers.js";

/**
 * The programs that only read unless an option says otherwise, as data. Each lists every option
 * the check accepts (GNU spelling; abbreviations of long options are resolved against the whole
 * list) and, under `effects`, the options that disqualify it or whose value is a file it reads.
 * An option not listed disqualifies the call. git, find and sed have their own files; programs
 * whose words are text, or that report on the system, are in text-and-system-readers.
 */

const ls = files(
  optionTable({
    flags: "aAbBcCdDfFgGhHiklLmnNopqQrRsStuUvxXZ1",
    values: "IwT",
    long:
      "all almost-all author escape block-size= ignore-backups color[=] colour[=] directory dired " +
      "classify[=] file-type format= full-time group-directories-first no-group human-readable " +
      "si dereference-command-line dereference-command-line-symlink-to-dir hide= hyperlink[=] " +
      "indicator-style= inode ignore= kibibytes dereference numeric-uid-gid literal " +
      "hide-control-chars show-control-chars quote-name quoting-style= reverse recursive size " +
      "sort= time= time-style= tabsize= width= context zero",
    effects: { "-L": "follow", "--dereference": "follow" },
  }),
  { defaultOperand: walksCurrentDirectory, walks: walksWith("-R", "--recursive") },
);

const cat = files(
  optionTable({
    flags: "AbeEnstTuv",
    long: "show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting",
  }),
);

const head = files(
  optionTable({
    flags: "qvz",
    values: "cn",
    long: "bytes= lines= quiet silent verbose zero-terminated",
    numeric: true,
  }),
);

const tail = files(
  optionTable({
    flags: "fFqvz",
    values: "cns",
    long:
      "bytes= follow[=] lines= max-unchanged-stats= pid= quiet silent retry sleep-interval= " +
      "verbose zero-terminated",
    numeric: true,
  }),
);

const wc = files(
  optionTable({
    flags: "clmwL",
    long: "bytes chars lines words max-line-length total=",
    effects: { "--files0-from": "list" },
  }),
);

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

const sort = files(
  optionTable({
    flags: "bdfgiMhnRrVcCmsuz",
    values: "ktS",
    long:
      "ignore-leading-blanks dictionary-order ignore-case general-numeric-sort ignore-nonprinting " +
      "month-sort human-numeric-sort numeric-sort random-sort reverse sort= version-sort check[=] " +
      "debug merge key= stable unique zero-terminated field-separator= buffer-size= parallel=",
    effects: {
      "-o": ["write", "required"],
      "--output": "write",
      "-T": ["write", "required"],
      "--temporary-directory": "write",
      "--compress-program": "exec",
      "--files0-from": "list",
      "--random-source": "read",
    },
  }),
);

const uniq = files(
  optionTable({
    flags: "cdDiuz",
    values: "fsw",
    long:
      "count repeated all-repeated[=] skip-fields= group[=] ignore-case skip-chars= unique " +
      "zero-terminated check-chars=",
  }),
  { writesFrom: 1 },
);

const tree = files(
  optionTable({
    flags: "adfixqNQpugshDFvtcUrCAS",
    values: "LPIH",
    long:
      "noreport charset= filelimit= timefmt= dirsfirst filesfirst sort= du si prune matchdirs " +
      "ignore-case gitignore info inodes device nolinks",
    effects: {
      "-o": ["write", "required"],
      "-l": "follow",
      "-R": ["write", "none"],
      "--fromfile": ["read", "none"],
      "--gitfile": "read",
    },
  }),
  { defaultOperand: walksCurrentDirectory, walks: alwaysWalks },
);

const file = files(
  optionTable({
    flags: "bcdEhiklLNnprsvz0SI",
    values: "eFP",
    long:
      "brief checking-printout exclude= exclude-quiet= extension separator= no-dereference mime " +
      "mime-type mime-encoding keep-going list dereference no-buffer no-pad print0 " +
      "preserve-date raw special-files uncompress uncompress-noreport no-sandbox parameter= apple",
    effects: {
      "-C": "write",
      "--compile": ["write", "none"],
      "-m": ["read", "required"],
      "--magic-file": "read",
      "-f": ["list", "required"],
      "--files-from": "list",
    },
  }),
  {
    check: (options) =>
      options.some((option) => given([option], "-m", "--magic-file") && option.value?.includes(":"))
        ? "file -m with a list of magic files"
        : undefined,
  },
);

const stat = files(
  optionTable({
    flags: "LfLt",
    values: "c",
    long: "dereference file-system format= printf= terse cached=",
  }),
);

const du = files(
  optionTable({
    flags: "0abcDhHklmsSxPL",
    values: "BdtX",
    long:
      "null all apparent-size block-size= bytes total dereference-args max-depth= human-readable " +
      "inodes si summarize separate-dirs one-file-system threshold= time[=] time-style= " +
      "exclude= exclude-from= no-dereference count-links",
    effects: {
      "-L": "follow",
      "--dereference": "follow",
      "--files0-from": "list",
      "-X": ["read", "required"],
      "--exclude-from": "read",
    },
  }),
  { defaultOperand: walksCurrentDirectory, walks: alwaysWalks },
);

const diff = files(
  optionTable({
    flags: "iEZbwBIaqsyceunpNrtTdl",
    values: "CUFSWxX",
    long:
      "normal brief report-identical-files context[=] unified[=] ed rcs side-by-side width= " +
      "left-column suppress-common-lines show-c-function show-function-line= label= expand-tabs " +
      "initial-tab tabsize= suppress-blank-empty paginate recursive no-dereference new-file " +
      "unidirectional-new-file ignore-file-name-case no-ignore-file-name-case exclude= " +
      "starting-file= ignore-case ignore-tab-expansion " +
      "ignore-trailing-space ignore-space-change ignore-all-space ignore-blank-lines " +
      "ignore-matching-lines= text strip-trailing-cr minimal horizon-lines= speed-large-files " +
      "color[=] palette= line-format= old-line-format= new-line-format= unchanged-line-format= " +
      "old-group-format= new-group-format= changed-group-format= unchanged-group-format=",
    effects: {
      "--exclude-from": "read",
      "-X": ["read", "required"],
      "--from-file": "read",
      "--to-file": "read",
    },
  }),
  {
    walks: walksWith("-r", "--recursive"),
    check: (options) =>
      given(options, "-r", "--recursive") && !given(options, "--no-dereference")
        ? "diff -r follows symbolic links while it walks, possibly outside the working directories"
        : undefined,
  },
);

const cmp = files(
  optionTable({
    flags: "blsv",
    values: "in",
    long: "print-bytes ignore-initial= verbose bytes= quiet silent",
  }),
);

const hexdump = files(
  optionTable({
    flags: "bcCdoxv",
    values: "enNs",
    long: "one-byte-octal one-byte-char canonical two-bytes-decimal two-bytes-octal",
    effects: { "-f": ["read", "required"] },
  }),
);

const checksum = files(
  optionTable({
    flags: "btwz",
    values: "l",
    long: "binary tag text zero ignore-missing quiet status strict warn length= base64 raw untagged",
    effects: { "-c": ["list", "none"], "--check": ["list", "none"] },
  }),
);

/** The read-only programs outside git, find and sed. */
export const READER_PROGRAMS: Record<string, ReaderSpec> = {
  ...TEXT_AND_SYSTEM_READERS,
  ls,
  dir: ls,
  vdir: ls,
  cat,
  head,
  tail,
  wc,
  grep,
  egrep: grep,
  fgrep: grep,
  rg,
  tree,
  file,
  stat,
  du,
  df: text(
    optionTable({
      flags: "ahHiklPTvx",
      values: "BtF",
      long:
        "all block-size= human-readable si inodes local no-sync output[=] portability print-type " +
        "sync total type= exclude-type=",
    }),
  ),
  diff,
  cmp,
  comm: plainFiles(
    "123iz",
    "",
    "check-order nocheck-order output-delimiter= total zero-terminated",
  ),
  cut: plainFiles(
    "nsz",
    "bcdf",
    "bytes= characters= delimiter= fields= complement only-delimited output-delimiter= " +
      "zero-terminated",
  ),
  tr: text(
    optionTable({ flags: "cCdst", long: "complement delete squeeze-repeats truncate-set1" }),
  ),
  nl: plainFiles(
    "p",
    "bdfhilnsvw",
    "body-numbering= section-delimiter= footer-numbering= header-numbering= line-increment= " +
      "join-blank-lines= number-format= no-renumber number-separator= starting-line-number= " +
      "number-width=",
  ),
  sort,
  uniq,
  // util-linux 2.38's column.
  column: plainFiles(
    "tdeLJx",
    "nONlEHRTWripcos",
    "table table-name= table-order= table-columns= table-columns-limit= table-noextreme= " +
      "table-noheadings table-header-repeat table-hide= table-right= table-truncate= " +
      "table-wrap= keep-empty-lines json tree= tree-id= tree-parent= output-width= " +
      "output-separator= separator= fillrows",
  ),
  fold: plainFiles("bs", "w", "bytes spaces width="),
  rev: plainFiles("0", "", "zero"),
  tac: plainFiles("br", "s", "before regex separator="),
  paste: plainFiles("sz", "d", "delimiters= serial zero-terminated"),
  expand: plainFiles("i", "t", "initial tabs="),
  unexpand: plainFiles("a", "t", "all first-only tabs="),
  od: files(
    optionTable({
      // -w takes its width only attached (-w16), so it is read as a flag.
      flags: "bcdfilosxvw",
      values: "AjNSt",
      long:
        "address-radix= endian= skip-bytes= read-bytes= strings[=] format= output-duplicates " +
        "width[=] traditional",
    }),
  ),
  hexdump,
  strings: {
    ...plainFiles(
      "afwd",
      "nteTs",
      "all data bytes= radix= encoding= target= print-file-name include-all-whitespace " +
        "output-separator= unicode=",
    ),
    // binutils read every word that starts with @ as a file of more words, option values too.
    check: (options, operands) =>
      [...operands, ...options.map((option) => option.value ?? "")].some((word) =>
        word.startsWith("@"),
      )
        ? "strings reads options from an @FILE"
        : undefined,
  },
  md5sum: checksum,
  sha1sum: checksum,
  sha224sum: checksum,
  sha256sum: checksum,
  sha384sum: checksum,
  sha512sum: checksum,
  b2sum: checksum,
  cksum: files(
    optionTable({
      flags: "z",
      values: "al",
      long: "algorithm= base64 length= raw tag untagged zero ignore-missing quiet status strict warn",
      effects: { "--check": ["list", "none"] },
    }),
  ),
  base64: plainFiles("diw", "", "decode ignore-garbage wrap="),
  realpath: files(
    optionTable({
      flags: "eLmPqsz",
      long: "canonicalize-existing canonicalize-missing logical physical quiet strip no-symlinks zero",
      // The directory it prints paths relative to is resolved too, its links followed.
      effects: { "--relative-to": "read", "--relative-base": "read" },
    }),
  ),
  readlink: files(
    optionTable({
      flags: "femnqsvz",
      long: "canonicalize canonicalize-existing canonicalize-missing no-newline quiet silent verbose zero",
    }),
  ),
  jq: files(
    optionTable({
      flags: "rjacnseSCMh",
      long:
        "raw-output join-output ascii-output compact-output null-input slurp exit-status " +
        "sort-keys color-output monochrome-output tab indent= arg=2 argjson=2 args jsonargs seq " +
        "stream stream-errors raw-input raw-output0 unbuffered",
      effects: {
        "-f": ["read", "required"],
        "--from-file": "read",
        "--slurpfile": ["read", "two"],
        "--rawfile": ["read", "two"],
        "-L": ["read", "required"],
      },
    }),
    {
      leading: { count: 1, unless: ["-f", "--from-file"] },
      check: (options, operands) => {
        if (given(options, "-f", "--from-file")) {
          return "jq -f runs a program from a file, whose imports the check does not see";
        }
        return /\b(import|include|modulemeta)\b/.test(operands[0] ?? "")
          ? "jq import/include/modulemeta reads modules, possibly outside the working directories"
          : undefined;
      },
    },
  ),
};
