import { optionTable } from "./command-options.js";
import { type ReaderSpec, files, given, plainFiles, text, walksWith } from "./reader-spec.js";

/**
 * The read-only programs that read what files hold and print it, a part of it, a transformation
 * of it, a comparison or a checksum (cat, sort, diff, od, sha256sum, jq, …), as data like
 * reader-programs.
 */

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

/** cat, head, tail, wc, the text filters, diff and cmp, the dumps, the checksums and jq. */
export const FILE_CONTENT_READERS: Record<string, ReaderSpec> = {
  cat,
  head,
  tail,
  wc,
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
