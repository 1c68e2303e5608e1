import { optionTable } from "./command-options.js";
import {
  type ReaderSpec,
  files,
  given,
  text,
  alwaysWalks,
  walksCurrentDirectory,
  walksWith,
} from "./reader-spec.js";

/**
 * The read-only programs that report on files, directories and file systems (listings, types,
 * sizes, where links lead) rather than print what files hold, as data like reader-programs.
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

/** ls and its dir and vdir, tree, file, stat, du, df, realpath and readlink. */
export const FILE_SYSTEM_READERS: Record<string, ReaderSpec> = {
  ls,
  dir: ls,
  vdir: ls,
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
};
