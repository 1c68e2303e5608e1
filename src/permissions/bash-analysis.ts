import { type CommandAnalysis, analyzeCommand } from "./analyze-command.js";
import { walkDirectories } from "./directory-walk.js";
import { findInjection } from "./find-injection.js";
import type { ShellScript } from "./parse-shell.js";
import { ProbeRefused } from "./probe-budget.js";
import type { PathContext } from "./types.js";

/**
 * What a Bash command line reads and writes, command by command, and whether each only reads.
 * A command is read-only when it is a known reader (see reader-verdict and its tables) run
 * directly or through a read-only wrapper, no option of it can run a program, write a file,
 * change system state or follow links, it sets no variables, it redirects output only to a
 * harmless device, and every file it reads resolves (links followed)
 * inside the working directories from every directory it may run in (see directory-walk: a `cd`
 * may fail; after a change the walk cannot follow, such as `cd -`, relative paths are unknown).
 */

export interface BashAnalysis {
  commands: CommandAnalysis[];
  /** Whether the whole line only reads: no injection risk, and every command reads. */
  readOnly: boolean;
  /** Why it does not, for reasons. */
  why?: string;
  /** The first `notable` why of a command (see CommandAnalysis), or an injection risk. */
  detail?: string;
}

/** Analyses every simple command of `script`, in order, from each directory it may run in. */
export function analyzeBash(script: ShellScript, context: PathContext): BashAnalysis {
  let commands: CommandAnalysis[];
  try {
    commands = walkDirectories(script.commands, context.workingDirectories[0], (command, cwd) =>
      analyzeCommand(command, context, cwd),
    ).map(merge);
  } catch (err) {
    if (!(err instanceof ProbeRefused)) throw err;
    const why = err.message;
    commands = script.commands.map(() => ({
      readOnly: false,
      why,
      notable: true,
      reads: [],
      writes: [],
      readerApartFromOutput: false,
    }));
  }
  const injection = findInjection(script);
  const firstNo = commands.find((command) => !command.readOnly);
  const why = injection ?? firstNo?.why ?? (commands.length === 0 ? "no command" : undefined);
  if (why === undefined) return { commands, readOnly: true };
  const detail = injection ?? commands.find((command) => command.notable === true)?.why;
  return detail === undefined
    ? { commands, readOnly: false, why }
    : { commands, readOnly: false, why, detail };
}

/** One command's analyses from the directories it may run in, as one: read-only from each. */
function merge(analyses: readonly CommandAnalysis[]): CommandAnalysis {
  const [only, ...others] = analyses as [CommandAnalysis, ...CommandAnalysis[]];
  if (others.length === 0) return only;
  const verdict = analyses.find((analysis) => !analysis.readOnly) ?? only;
  const merged: CommandAnalysis = {
    ...verdict,
    reads: analyses.flatMap((analysis) => analysis.reads),
    names: analyses.flatMap((analysis) => analysis.names ?? []),
    writes: analyses.flatMap((analysis) => analysis.writes),
    readerApartFromOutput: analyses.every((analysis) => analysis.readerApartFromOutput),
  };
  if (verdict.directoryChange !== undefined) {
    merged.directoryChange = {
      inside: analyses.every((analysis) => analysis.directoryChange?.inside === true),
    };
  }
  return merged;
}
