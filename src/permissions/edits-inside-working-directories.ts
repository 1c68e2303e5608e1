import type { CallView } from "./describe-call.js";
import { dotGlobVariants } from "./dot-globs.js";
import { expandWords } from "./expand-words.js";
import { EDIT_PROGRAM_NAMES, type EditCall, readEdit } from "./edit-programs.js";
import { dependsOnVariable, existsAt, isInsideWorkingDirectory, locate } from "./resolve-path.js";
import { ProbeRefused } from "./probe-budget.js";
import { readSed } from "./sed-script.js";
import { flagsOf, splitAssignments } from "./shell-command.js";
import type { PathContext } from "./types.js";

/**
 * Whether a command line (already free of safety findings) only edits files inside the working
 * directories. Every simple command is a reader (its output redirections, if any, inside a working
 * directory: `cat > notes.md <<EOF`), or an edit program (`mkdir`, `touch`, `rm`, `rmdir`, `mv`,
 * `cp`, `sed -i`; see edit-programs) run directly, with no variable assignment and only options
 * its table knows, whose every operand, file option and output redirection leads (links followed)
 * inside a working directory; at least one command edits. A directory change anywhere makes
 * relative paths unknowable, so it answers false.
 */
export function editsInsideWorkingDirectories(
  view: Extract<CallView, { kind: "bash" }>,
  context: PathContext,
): boolean {
  if (view.script.risks.length > 0 || context.workingDirectories.length === 0) return false;
  try {
    return editsInside(view, context);
  } catch (err) {
    if (err instanceof ProbeRefused) return false;
    throw err;
  }
}

function editsInside(view: Extract<CallView, { kind: "bash" }>, context: PathContext): boolean {
  const { script, analysis } = view;
  // The words were expanded (braces, wildcards) as bash expands them, before they were read.
  const inside = (word: string): boolean =>
    dotGlobVariants(word).every(
      (path) =>
        !dependsOnVariable(path) &&
        isInsideWorkingDirectory(locate(path, context, undefined, true).real, context),
    );
  let edits = 0;
  for (const [k, command] of script.commands.entries()) {
    const facts = analysis.commands[k];
    if (facts === undefined || facts.directoryChange !== undefined) return false;
    if (facts.readOnly) continue;
    const { assignments } = splitAssignments(command);
    if (assignments.length > 0) return false;
    const expanded = expandWords(command.words, context, undefined);
    if (!expanded.ok) return false;
    const argv = expanded.words;
    // A move, or a copy of links as links, may carry a relative link to where it leads
    // elsewhere: what comes after it would be judged against the tree as it was before.
    if (k < script.commands.length - 1 && (argv[0] === "mv" || copiesLinks(argv))) return false;
    if (!facts.writes.every((write) => isInsideWorkingDirectory(write.real, context))) return false;
    const program = argv[0] ?? "";
    if (EDIT_PROGRAM_NAMES.has(program)) {
      const files = editedFiles(argv);
      if (files === undefined || ![...files.reads, ...files.writes].every(inside)) return false;
      if (files.landings?.some((landing) => existsAt(landing, context) !== false)) return false;
    } else if (!facts.readerApartFromOutput || facts.writes.length === 0) return false;
    edits += 1;
  }
  return edits > 0;
}

type EditedFiles = Omit<Extract<EditCall, { ok: true }>, "ok">;

/**
 * Whether `argv` is a cp that copies links as links: `-P`, `-d`, `-a`, `--no-dereference`, or a
 * recursive copy without `-L`.
 */
function copiesLinks(argv: readonly string[]): boolean {
  if (argv[0] !== "cp") return false;
  const flags = flagsOf([...argv]);
  const recursive = flags.has("r") || flags.has("R") || flags.has("--recursive");
  return (
    ["P", "d", "a", "--no-dereference"].some((flag) => flags.has(flag)) ||
    (recursive && !flags.has("L") && !flags.has("--dereference"))
  );
}

/** The files an edit program reads and writes, or undefined when it is more than an edit. */
function editedFiles(argv: readonly string[]): EditedFiles | undefined {
  if (argv[0] === "sed") {
    const sed = readSed(argv.slice(1));
    if (!sed.ok || !sed.inPlace || sed.followsLinks || sed.files.length === 0) return undefined;
    // A backup suffix with a `/` puts the backup in another directory, `*` names it after the file.
    if (sed.backupSuffix !== undefined && /[/*]/.test(sed.backupSuffix)) return undefined;
    return { reads: sed.effects.reads, writes: sed.files };
  }
  const edit = readEdit(argv);
  return edit.ok ? edit : undefined;
}
