import { HARMLESS_DEVICES } from "./dangerous-path.js";
import { isReadOnlyCommand, writesFile } from "./is-read-only-bash.js";
import type { ShellScript } from "./parse-shell.js";
import { isInsideWorkingDirectory, resolvePath } from "./resolve-path.js";
import { pathArguments, splitAssignments } from "./shell-command.js";
import type { PathContext } from "./types.js";

/** File-editing programs that accept_edits and dont_ask allow inside the working directories. */
const EDIT_COMMANDS = new Set(["mkdir", "touch", "rm", "rmdir", "mv", "cp", "sed"]);

/** Commands that change the shell's directory, after which relative paths cannot be placed. */
const DIRECTORY_CHANGES = new Set(["cd", "pushd", "popd"]);

/**
 * Whether a command line (already free of safety findings) only edits files inside the working
 * directories. Every simple command is a reader (its output redirections, if any, inside a working
 * directory: `cat > notes.md <<EOF`), or an edit command (`mkdir`, `touch`, `rm`, `rmdir`, `mv`,
 * `cp`, `sed`) run directly, with no variable assignment, whose every operand and output
 * redirection resolves inside a working directory; at least one command edits. A directory
 * change anywhere makes relative paths unknowable, so it answers false.
 */
export function editsInsideWorkingDirectories(script: ShellScript, context: PathContext): boolean {
  if (script.risks.length > 0 || context.workingDirectories.length === 0) return false;
  let edits = 0;
  for (const command of script.commands) {
    const { assignments, argv } = splitAssignments(command);
    if (DIRECTORY_CHANGES.has(argv[0] ?? "")) return false;
    if (isReadOnlyCommand(command)) continue;
    const outputs = command.redirects.filter(writesFile);
    const reader = isReadOnlyCommand({
      ...command,
      redirects: command.redirects.filter((redirect) => !writesFile(redirect)),
    });
    if (!reader && (assignments.length > 0 || !EDIT_COMMANDS.has(argv[0] ?? ""))) return false;
    const targets = [
      ...(reader ? [] : pathArguments(argv)),
      ...outputs.map((redirect) => redirect.target?.value ?? ""),
    ];
    if (targets.length === 0) return false;
    const inside = targets.every(
      (target) =>
        HARMLESS_DEVICES.has(target) ||
        isInsideWorkingDirectory(resolvePath(target, context), context),
    );
    if (!inside) return false;
    edits += 1;
  }
  return edits > 0;
}
