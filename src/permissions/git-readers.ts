import {
  type GivenOption,
  type OptionEffect,
  type OptionValue,
  optionTable,
} from "./command-options.js";
import { type ReaderSpec, alwaysWalks, given } from "./reader-spec.js";

/**
 * The git subcommands that only read, as data: each with the options the check accepts and the
 * ones that disqualify it (`--output`, `--ext-diff`, `--upload-pack`, `--open-files-in-pager`, …).
 * git accepts unambiguous abbreviations of long options (`--outp`), and so does the check. Every
 * operand (revisions included) is resolved as a path, so one that points outside the working
 * directories (`git diff --no-index /etc/passwd x`) disqualifies the call.
 */

type Effects = Record<string, OptionEffect | [OptionEffect, OptionValue]>;

const spec = (
  flags: string,
  values: string,
  long: string,
  effects: Effects = {},
  extra: Partial<ReaderSpec> = {},
): ReaderSpec => ({
  options: optionTable({ flags, values, long, effects, numeric: true }),
  operands: "files",
  ...extra,
});

const DIFF_LONG =
  "patch no-patch unified= raw patch-with-raw patch-with-stat stat[=] stat-width= stat-name-width= " +
  "stat-count= stat-graph-width= compact-summary numstat shortstat dirstat[=] cumulative " +
  "dirstat-by-file[=] summary name-only name-status submodule[=] color[=] no-color color-moved[=] " +
  "no-color-moved color-moved-ws= word-diff[=] word-diff-regex= color-words[=] no-renames " +
  "rename-empty no-rename-empty check ws-error-highlight= full-index binary abbrev[=] " +
  "break-rewrites[=] find-renames[=] find-copies[=] find-copies-harder irreversible-delete " +
  "diff-filter= pickaxe-all pickaxe-regex find-object= skip-to= rotate-to= relative[=] no-relative " +
  "text ignore-cr-at-eol ignore-space-at-eol ignore-space-change ignore-all-space " +
  "ignore-blank-lines ignore-matching-lines= indent-heuristic no-indent-heuristic minimal " +
  "patience histogram anchored= diff-algorithm= inter-hunk-context= function-context exit-code " +
  "quiet no-ext-diff textconv no-textconv ignore-submodules[=] src-prefix= dst-prefix= no-prefix " +
  "default-prefix line-prefix= ita-invisible-in-index ita-visible-in-index cached staged merge-base " +
  "no-index base ours theirs";
const DIFF_EFFECTS: Effects = {
  "--output": "write",
  "--ext-diff": ["exec", "none"],
  "-O": ["read", "required"],
};
const LOG_LONG =
  `${DIFF_LONG} oneline graph all decorate[=] no-decorate decorate-refs= decorate-refs-exclude= ` +
  "source mailmap use-mailmap full-diff log-size max-count= skip= since= after= until= before= " +
  "since-as-filter= author= committer= grep-reflog= grep= all-match invert-grep " +
  "regexp-ignore-case basic-regexp extended-regexp fixed-strings perl-regexp remove-empty merges " +
  "no-merges min-parents= max-parents= no-min-parents no-max-parents first-parent " +
  "exclude-first-parent-only not branches[=] tags[=] remotes[=] glob= exclude= reflog alternate-refs " +
  "single-worktree ignore-missing bisect stdin cherry-mark cherry-pick left-only right-only cherry " +
  "walk-reflogs merge boundary simplify-by-decoration show-pulls full-history dense sparse " +
  "simplify-merges ancestry-path[=] date-order author-date-order topo-order reverse no-walk[=] " +
  "do-walk format= pretty[=] abbrev-commit no-abbrev-commit encoding= expand-tabs[=] no-expand-tabs " +
  "notes[=] no-notes show-notes-by-default show-notes[=] standard-notes no-standard-notes " +
  "show-linear-break[=] relative-date date= parents children left-right cc combined-all-paths " +
  "dd remerge-diff[=] diff-merges= no-diff-merges follow count objects objects-edge " +
  "no-object-names object-names unpacked timestamp header clear-decorations";
/** A format that verifies signatures (`%G?`, `%(signature)`) runs gpg, or the program configured. */
const verifiesSignatures = (options: readonly GivenOption[]): string | undefined =>
  options.some((option) => /%G|%\(signature/.test(option.value ?? ""))
    ? "a format that verifies signatures runs gpg"
    : undefined;
/**
 * What a command prints of the files in the repository when no path limits it: `git diff` and
 * `git show` print changes to any file, `git log -p` the history of every file, `git cat-file` any
 * object. It reads the whole repository from its top (`:/`), so a `Read(…)` rule on a part of it
 * covers the call; with paths (`git diff -- src`), what they name.
 */
const wholeRepository = (): string => ":/";
const LOG_PATCH = [
  "-p",
  "-u",
  "-U",
  "-W",
  "-L",
  "-c",
  "--patch",
  "--unified",
  "--patch-with-raw",
  "--patch-with-stat",
  "--word-diff",
  "--word-diff-regex",
  "--color-words",
  "--function-context",
  "--binary",
  "--cc",
  "--dd",
  "--remerge-diff",
  "--combined-all-paths",
];
const printsFiles = { defaultOperand: wholeRepository, walks: alwaysWalks };
const log = spec("pusimnMCBDRWwbzRaG", "nUSGlLlO", LOG_LONG, DIFF_EFFECTS, {
  check: verifiesSignatures,
  defaultOperand: (options) => (given(options, ...LOG_PATCH) ? wholeRepository() : undefined),
  walks: (options) => given(options, ...LOG_PATCH),
});
const show: ReaderSpec = { ...log, ...printsFiles };
const diff = spec("pusRzabwWMCBD", "UlSGO", DIFF_LONG, DIFF_EFFECTS, printsFiles);

const grep = spec(
  "aiIrwvhHEGPFnlLzocpWq",
  "ABCmfe",
  "text textconv no-textconv ignore-case max-depth= recursive no-recursive word-regexp " +
    "invert-match full-name extended-regexp basic-regexp perl-regexp fixed-strings line-number " +
    "column files-with-matches name-only files-without-match null only-matching count color[=] " +
    "no-color break heading show-function context= after-context= before-context= " +
    "function-context max-count= threads= and or not all-match quiet cached untracked no-index " +
    "exclude-standard no-exclude-standard recurse-submodules parent-basename=",
  {
    "-O": ["exec", "optional"],
    "--open-files-in-pager": ["exec", "optional"],
    "-f": ["read", "required"],
    "--file": "read",
  },
  {
    leading: { count: 1, unless: ["-e", "-f", "--file"] },
    defaultOperand: () => ".",
    walks: alwaysWalks,
  },
);

const blame = spec(
  "bltpcsewnfM",
  "LC",
  "root show-stats reverse= first-parent porcelain line-porcelain incremental encoding= date= " +
    "progress no-progress score-debug show-name show-number show-email abbrev= ignore-rev= " +
    "color-lines color-by-age minimal",
  { "--contents": "read", "-S": ["read", "required"], "--ignore-revs-file": "read" },
);

const text = (flags: string, values: string, long: string, effects: Effects = {}): ReaderSpec => ({
  ...spec(flags, values, long, effects),
  operands: "text",
});

const config: ReaderSpec = {
  operands: "text",
  options: optionTable({
    flags: "lz",
    long:
      "get get-all get-regexp get-urlmatch list global system local worktree blob= show-origin " +
      "show-scope name-only null type= default= includes no-includes bool int bool-or-int path " +
      "expiry-date fixed-value",
    effects: { "-f": ["read", "required"], "--file": "read" },
  }),
  check: (options, operands) => {
    const reads =
      given(options, "--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l") ||
      operands[0] === "get" ||
      operands[0] === "list";
    if (!reads) return "git config without --get or --list may change the configuration";
    // Only a file's own settings are read: `--includes` follows its include.path anywhere.
    if (given(options, "--includes")) {
      return "git config --includes reads the files that include.path names, anywhere";
    }
    return given(options, "--local", "--worktree", "-f", "--file", "--blob")
      ? undefined
      : "git config without --local also reads the user's and the system's configuration";
  },
};

/** `git branch`, `git tag`, … that list only with these exact words. */
const onlyWords = (what: string, ok: (args: readonly string[]) => boolean): ReaderSpec => ({
  ...text("", "", ""),
  anyArgs: true,
  check: (_, operands) => (ok(operands) ? undefined : `git ${what} may change the repository`),
});

const BRANCH_LISTING = new Set([
  "-a",
  "-r",
  "-v",
  "-vv",
  "-l",
  "--all",
  "--remotes",
  "--list",
  "--show-current",
]);

/**
 * Whether git reads `repository` as an address rather than a remote's name or a local path: a URL
 * (`scheme://…`) or the scp-like `host:path` (a colon before any slash).
 */
function namesHost(repository: string): boolean {
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(repository)) return true;
  const colon = repository.indexOf(":");
  const slash = repository.indexOf("/");
  return colon > 0 && (slash === -1 || colon < slash);
}

/** The read-only git subcommands. */
export const GIT_READERS: Record<string, ReaderSpec> = {
  status: spec(
    "sbvuz",
    "",
    "short branch porcelain[=] long verbose untracked-files[=] ignored[=] ignore-submodules[=] " +
      "column[=] no-column ahead-behind no-ahead-behind renames no-renames find-renames[=] show-stash",
  ),
  log,
  whatchanged: log,
  show,
  diff,
  shortlog: spec("nsecw", "", `numbered summary email committer group= ${LOG_LONG}`, DIFF_EFFECTS, {
    check: verifiesSignatures,
  }),
  "rev-list": log,
  blame,
  describe: text(
    "",
    "",
    "all tags contains abbrev= candidates= exact-match debug long match= exclude= always " +
      "first-parent dirty[=] broken[=]",
  ),
  "rev-parse": text(
    "q",
    "",
    "show-toplevel abbrev-ref[=] short[=] verify quiet git-dir is-inside-work-tree " +
      "is-inside-git-dir show-prefix show-cdup symbolic symbolic-full-name all branches[=] tags[=] " +
      "remotes[=] absolute-git-dir git-common-dir is-bare-repository is-shallow-repository sq " +
      "default= revs-only no-revs flags no-flags local-env-vars show-object-format[=] " +
      "path-format= git-path= show-superproject-working-tree shared-index-path since= until= " +
      "prefix= verify end-of-options",
    // It reads the path it is given, to tell whether it is a repository or a gitfile.
    { "--resolve-git-dir": "read" },
  ),
  "ls-files": spec(
    "cdmoisukztvf",
    "x",
    "cached deleted modified others ignored stage killed directory no-empty-directory unmerged " +
      "resolve-undo exclude= exclude-per-directory= exclude-standard error-unmatch with-tree= " +
      "full-name recurse-submodules abbrev[=] debug eol deduplicate sparse format=",
    { "--exclude-from": "read", "-X": ["read", "required"] },
    { defaultOperand: () => ".", walks: alwaysWalks },
  ),
  "ls-tree": spec(
    "drtlz",
    "",
    "long name-only name-status object-only full-name full-tree abbrev[=] format=",
  ),
  "ls-remote": {
    ...spec(
      "qbt",
      "o",
      "heads tags branches refs quiet exit-code get-url symref sort= server-option=",
      { "--upload-pack": "exec", "--exec": "exec" },
    ),
    check: (_, operands) => {
      if (operands.some((operand) => operand.includes("::"))) {
        return "a remote helper URL (::) runs a program";
      }
      const repository = operands[0];
      if (repository !== undefined && namesHost(repository)) {
        return "a repository named by URL or host:path is reached outside the working directories";
      }
      // A remote's name (or none: the default remote) stands for a URL the check does not read.
      return repository !== undefined && /^(\.\.?)?(\/|$)/.test(repository)
        ? undefined
        : "git ls-remote reaches a configured remote, wherever its URL leads";
    },
  },
  "cat-file": spec(
    "tsepZ",
    "",
    "textconv filters batch[=] batch-check[=] batch-command[=] batch-all-objects " +
      "follow-symlinks buffer unordered allow-unknown-type path= use-mailmap no-use-mailmap",
    {},
    printsFiles,
  ),
  "show-ref": text(
    "dsq",
    "",
    "head heads tags branches dereference hash[=] verify abbrev[=] quiet exclude-existing[=] exists",
  ),
  "merge-base": text("a", "", "all octopus independent is-ancestor fork-point"),
  "name-rev": text("", "", "tags refs= exclude= all annotate-stdin name-only no-undefined always"),
  "for-each-ref": {
    ...text(
      "",
      "",
      "count= shell perl python tcl sort= format= color[=] points-at= merged[=] no-merged[=] " +
        "contains[=] no-contains[=] ignore-case omit-empty exclude= include-root-refs",
    ),
    check: verifiesSignatures,
  },
  "check-ignore": spec("qvnz", "", "quiet verbose non-matching no-index"),
  "count-objects": text("vH", "", "verbose human-readable"),
  grep,
  reflog: onlyWords("reflog", (args) => args.length === 0),
  // Read by their first two words: `git stash list` takes log's options, `show` diff's.
  "reflog show": log,
  stash: onlyWords("stash", () => false),
  "stash list": log,
  "stash show": show,
  worktree: onlyWords("worktree", (args) => args[0] === "list"),
  remote: onlyWords(
    "remote",
    (args) => args.every((arg) => arg === "-v" || arg === "--verbose") || args[0] === "get-url",
  ),
  branch: onlyWords("branch", (args) => args.every((arg) => BRANCH_LISTING.has(arg))),
  tag: onlyWords("tag", (args) => args.length === 0 || args[0] === "-l" || args[0] === "--list"),
  config,
  help: onlyWords("help", (args) => args.every((arg) => !arg.startsWith("-"))),
  version: text("", "", "build-options"),
};
