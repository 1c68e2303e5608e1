import type { CallView } from "./describe-call.js";
import { dotGlobVariants } from "./dot-globs.js";
import { EDIT_PROGRAM_NAMES, readEdit } from "./edit-programs.js";
import { dependsOnVariable, isInsideWorkingDirectory, locate } from "./resolve-path.js";
import { readSed } from "./sed-script.js";
import { expandBraces, splitAssignments } from "./shell-command.js";
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
  const { script, analysis } = view;
  if (script.risks.length > 0 || context.workingDirectories.length === 0) return false;
  const inside = (word: string): boolean =>
    expandBraces(word)
      .flatMap(dotGlobVariants)
      .every(
        (path) =>
          !dependsOnVariable(path) &&
          isInsideWorkingDirectory(locate(path, context, undefined, true).real, context),
      );
  let edits = 0;
  for (const [k, command] of script.commands.entries()) {
    const facts = analysis.commands[k];
    if (facts === undefined || facts.directoryChange !== undefined) return false;
    if (facts.readOnly) continue;
    const { assignments, argv } = splitAssignments(command);
    if (assignments.length > 0) return false;
    if (!facts.writes.every((write) => isInsideWorkingDirectory(write.real, context))) return false;
    const program = argv[0] ?? "";
    if (EDIT_PROGRAM_NAMES.has(program)) {
      const files = editedFiles(argv);
      if (files === undefined || ![...files.reads, ...files.writes].every(inside)) return false;
    } else if (!facts.readerApartFromOutput || facts.writes.length === 0) return false;
    edits += 1;
  }
  return edits > 0;
}

/** The files an edit program reads and writes, or undefined when it is more than an edit. */
function editedFiles(argv: readonly string[]): { reads: string[]; writes: string[] } | undefined {
  if (argv[0] === "sed") {
    const sed = readSed(argv.slice(1));
    if (!sed.ok || !sed.inPlace || sed.followsLinks || sed.files.length === 0) return undefined;
    return { reads: sed.effects.reads, writes: sed.files };
  }
  const edit = readEdit(argv);
  return edit.ok ? edit : undefined;
}
