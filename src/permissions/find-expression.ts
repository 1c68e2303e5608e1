/**
 * Reads a `find` command line: its starting points, and the first primary of its expression that
 * runs a program (`-exec`, `-execdir`, `-ok`, `-okdir`), writes (`-delete`, `-fprint`, `-fprint0`,
 * `-fprintf`, `-fls`) or follows symbolic links (`-L`, `-follow`). A primary the table does not know
 * disqualifies the call.
 */

const NO_ARGUMENT = new Set([
  "-print",
  "-print0",
  "-ls",
  "-prune",
  "-quit",
  "-true",
  "-false",
  "-empty",
  "-nouser",
  "-nogroup",
  "-readable",
  "-writable",
  "-executable",
  "-depth",
  "-mount",
  "-xdev",
  "-daystart",
  "-noleaf",
  "-ignore_readdir_race",
  "-noignore_readdir_race",
  "-not",
  "!",
  "-a",
  "-and",
  "-o",
  "-or",
  ",",
  "(",
  ")",
  "-help",
  "--help",
  "-version",
  "--version",
]);

const ONE_ARGUMENT = new Set([
  "-name",
  "-iname",
  "-path",
  "-ipath",
  "-wholename",
  "-iwholename",
  "-regex",
  "-iregex",
  "-regextype",
  "-type",
  "-xtype",
  "-size",
  "-mtime",
  "-mmin",
  "-atime",
  "-amin",
  "-ctime",
  "-cmin",
  "-perm",
  "-user",
  "-group",
  "-uid",
  "-gid",
  "-maxdepth",
  "-mindepth",
  "-printf",
  "-links",
  "-inum",
  "-lname",
  "-ilname",
  "-used",
  "-fstype",
  "-context",
]);

/** Primaries whose argument is a file find reads. */
const READS_FILE = /^-(samefile|newer|anewer|cnewer|newer[aBcmt][aBcmt])$/;

/** What find does beyond reading its starting points. */
const DISQUALIFYING: Record<string, string> = {
  "-exec": "runs a program",
  "-execdir": "runs a program",
  "-ok": "runs a program",
  "-okdir": "runs a program",
  "-delete": "deletes files",
  "-fprint": "writes a file",
  "-fprint0": "writes a file",
  "-fprintf": "writes a file",
  "-fls": "writes a file",
  "-follow": "follows symbolic links, possibly outside the working directories",
  "-L": "follows symbolic links, possibly outside the working directories",
};

/** find's starting points (whose trees it walks) and the files its primaries read. */
export type FindCall =
  { ok: true; roots: string[]; reads: string[] } | { ok: false; reason: string };

/** Reads find's arguments (`args` without the program name). */
export function readFind(args: readonly string[]): FindCall {
  let k = 0;
  for (; k < args.length; k += 1) {
    const arg = args[k] as string;
    if (arg === "-H" || arg === "-P" || /^-O\d$/.test(arg)) continue;
    if (arg === "-D") {
      k += 1;
      continue;
    }
    if (arg === "-L") return { ok: false, reason: `find -L ${DISQUALIFYING["-L"]}` };
    break;
  }
  const roots: string[] = [];
  while (k < args.length && !isExpressionStart(args[k] as string)) {
    roots.push(args[k] as string);
    k += 1;
  }
  if (roots.length === 0) roots.push(".");
  const reads: string[] = [];
  for (; k < args.length; k += 1) {
    const arg = args[k] as string;
    const why = Object.hasOwn(DISQUALIFYING, arg) ? DISQUALIFYING[arg] : undefined;
    if (why !== undefined) return { ok: false, reason: `find ${arg} ${why}` };
    if (NO_ARGUMENT.has(arg)) continue;
    const value = args[k + 1];
    if (ONE_ARGUMENT.has(arg) || READS_FILE.test(arg)) {
      if (value === undefined) return { ok: false, reason: `find ${arg} needs a value` };
      if (READS_FILE.test(arg)) reads.push(value);
      k += 1;
      continue;
    }
    return { ok: false, reason: `find: unknown primary ${arg}` };
  }
  return { ok: true, roots, reads };
}

function isExpressionStart(arg: string): boolean {
  return arg.startsWith("-") || arg === "(" || arg === ")" || arg === "!" || arg === ",";
}
