import { posix } from "node:path";
import { type OptionTable, optionTable, parseArgs } from "./command-options.js";
import { effectText } from "./read-only-wrappers.js";

/**
 * The programs accept_edits and dont_ask allow inside the working directories, as data: the
 * options each may be given (anything else makes the call an ordinary ASK), and the ones whose
 * value is a file it reads or writes. `sed -i` is read by sed-script.
 */
const EDIT_PROGRAMS: Record<string, OptionTable> = {
  mkdir: optionTable({ flags: "pvZ", values: "m", long: "mode= parents verbose context[=]" }),
  touch: optionTable({
    flags: "acfhm",
    values: "dt",
    long: "no-create date= no-dereference time=",
    effects: { "-r": ["read", "required"], "--reference": "read" },
  }),
  rm: optionTable({
    flags: "dfirRIv",
    long: "force interactive[=] one-file-system no-preserve-root preserve-root[=] recursive dir verbose",
  }),
  rmdir: optionTable({ flags: "pv", long: "ignore-fail-on-non-empty parents verbose" }),
  mv: optionTable({
    flags: "bfinuvTZ",
    values: "S",
    long:
      "backup[=] force interactive no-clobber no-copy strip-trailing-slashes suffix= " +
      "no-target-directory update[=] verbose context exchange debug",
    effects: { "-t": ["target", "required"], "--target-directory": "target" },
  }),
  cp: optionTable({
    flags: "abdfHilnPprsTuvxZ",
    values: "S",
    long:
      "archive attributes-only backup[=] copy-contents force interactive link no-dereference " +
      "no-clobber parents recursive preserve[=] no-preserve= reflink[=] remove-destination " +
      "sparse= strip-trailing-slashes symbolic-link suffix= no-target-directory update[=] " +
      "verbose one-file-system context[=] debug keep-directory-symlink",
    effects: {
      "-t": ["target", "required"],
      "--target-directory": "target",
      "-L": "follow",
      "--dereference": "follow",
    },
  }),
};

/** cp's and mv's options that keep what was at the target under another name (or swap the two). */
const KEEPS_TARGET: ReadonlySet<string> = new Set([
  "-b",
  "--backup",
  "-S",
  "--suffix",
  "--exchange",
]);

/** cp's options that copy a tree into the target, writing through any link already in it. */
const COPIES_TREES: ReadonlySet<string> = new Set(["-a", "-r", "--archive", "--recursive"]);

/** The names of the edit programs, sed included. */
export const EDIT_PROGRAM_NAMES: ReadonlySet<string> = new Set([
  ...Object.keys(EDIT_PROGRAMS),
  "sed",
]);

export type EditCall =
  | {
      ok: true;
      reads: string[];
      writes: string[];
      /**
       * A recursive copy's landing places (DIR/name of each source when the target is a
       * directory): one that exists already is a tree the copy writes into, through its links.
       */
      landings?: string[];
      /** What a copy or a move takes (its content ends up elsewhere): read, tree and all. */
      sources?: string[];
    }
  | { ok: false; reason: string };

/**
 * Reads an edit program's words (`argv` with the program name): the files it writes (its operands
 * and `-t` directory; a copy's or move's sources too, since they must also lie inside) and reads.
 */
export function readEdit(argv: readonly string[]): EditCall {
  const [name = "", ...args] = argv;
  const table = Object.hasOwn(EDIT_PROGRAMS, name) ? EDIT_PROGRAMS[name] : undefined;
  if (table === undefined) return { ok: false, reason: `${name} is not an edit program` };
  const parsed = parseArgs(table, args);
  if (!parsed.ok) return { ok: false, reason: `${name}: ${parsed.reason}` };
  const reads: string[] = [];
  const writes = [...parsed.operands];
  for (const option of parsed.options) {
    const effect = option.spec.effect;
    if (effect === "read") reads.push(option.value ?? "");
    else if (effect === "target") writes.push(option.value ?? "");
    else if (effect !== undefined) {
      return { ok: false, reason: `${name} ${option.spec.name} ${effectText(effect)}` };
    }
  }
  if (writes.length === 0) return { ok: false, reason: `${name} without an operand` };
  if (
    name === "rmdir" &&
    parsed.options.some((option) => option.spec.name === "-p" || option.spec.name === "--parents")
  ) {
    // rmdir -p a/b/c removes a/b and a too (an absolute path's parents up to /).
    for (const operand of parsed.operands) {
      for (let dir = posix.dirname(operand); !/^(\.|\/)?$/.test(dir); dir = posix.dirname(dir)) {
        writes.push(dir);
      }
    }
  }
  if (name !== "cp" && name !== "mv") return { ok: true, reads, writes };
  // Into a directory, each source lands at DIR/its name (with --parents, DIR/its path), which may
  // be a link that leads out.
  const given = (names: ReadonlySet<string>) =>
    parsed.options.some((option) => names.has(option.spec.name));
  const target = parsed.options.find((option) => option.spec.effect === "target")?.value;
  const sources = target === undefined ? parsed.operands.slice(0, -1) : parsed.operands;
  const dir = (target ?? parsed.operands.at(-1) ?? "").replace(/\/+$/, "");
  const parents = name === "cp" && given(new Set(["--parents"]));
  const landings = sources.map((source) => `${dir}/${parents ? source : posix.basename(source)}`);
  writes.push(...landings);
  // A backup or an exchange moves what was at the target aside, where rules on the target miss it.
  const taken = given(KEEPS_TARGET) ? [...sources, dir, ...landings] : sources;
  return name === "cp" && given(COPIES_TREES)
    ? { ok: true, reads, writes, landings, sources: taken }
    : { ok: true, reads, writes, sources: taken };
}
