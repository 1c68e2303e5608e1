import type { CallView } from "./describe-call.js";
import { readSed } from "./sed-script.js";
import { isInsideWorkingDirectory } from "./resolve-path.js";
import { splitAssignments } from "./shell-command.js";
import type { PathContext } from "./types.js";

/** File-editing programs that accept_edits and dont_ask allow inside the working directories. */
const EDIT_COMMANDS = new Set(["mkdir", "touch", "rm", "rmdir", "mv", "cp", "sed"]);

/**
 * Whether a command line (already free of safety findings) only edits files inside the working
 * directories. Every simple command is a reader (its output redirections, if any, inside a working
 * directory: `cat > notes.md <<EOF`), or an edit command (`mkdir`, `touch`, `rm`, `rmdir`, `mv`,
 * `cp`, `sed -i`) run directly, with no variable assignment, whose every operand and output
 * redirection leads (links followed) inside a working directory; at least one command edits. A
 * directory change anywhere makes relative paths unknowable, so it answers false.
 */
export function editsInsideWorkingDirectories(
  view: Extract<CallView, { kind: "bash" }>,
  context: PathContext,
): boolean {
  const { script, analysis } = view;
  if (script.risks.length > 0 || context.workingDirectories.length === 0) return false;
  let edits = 0;
  for (const [k, command] of script.commands.entries()) {
    const facts = analysis.commands[k];
    if (facts === undefined || facts.directoryChange !== undefined) return false;
    if (facts.readOnly) continue;
    const { assignments, argv } = splitAssignments(command);
    const program = argv[0] ?? "";
    if (assignments.length > 0) return false;
    if (!EDIT_COMMANDS.has(program) && !facts.readerApartFromOutput) return false;
    if (program === "sed") {
      const sed = readSed(argv.slice(1));
      if (!sed.ok || !sed.inPlace || sed.files.length === 0) return false;
    }
    if (facts.writes.length === 0) return false;
    const outsideRead = facts.reads.some((read) => !isInsideWorkingDirectory(read.real, context));
    if (outsideRead) return false;
    if (!facts.writes.every((write) => isInsideWorkingDirectory(write.real, context))) return false;
    edits += 1;
  }
  return edits > 0;
}
