import { z } from "zod";
import { isReadOnlyCommand } from "./is-read-only-bash.js";
import { type ShellCommand, type ShellScript, parseShell } from "./parse-shell.js";
import { isInsideWorkingDirectory, resolvePath } from "./resolve-path.js";
import { pathArguments, splitAssignments } from "./shell-command.js";
import { BUILTIN_TOOL_NAMES, type BuiltinToolName, type PathContext } from "./types.js";

/** What the engine understands of one tool call; built once per call and shared by every step. */
export type CallView =
  | {
      kind: "bash";
      command: string;
      script: ShellScript;
      /**
       * Per simple command of `script`: whether it needs no allow rule inside a compound command,
       * because it only reads by itself; a directory change counts only when it stays inside the
       * working directories (`cd /tmp/x && npm test` must not run an allowed `npm test` elsewhere).
       */
      needsNoRule: boolean[];
    }
  /** Read, Write, Edit: the resolved `file_path`. */
  | { kind: "file"; path: string; rawPath: string }
  /** Glob, Grep: the resolved search root, then (Glob) the pattern resolved against it. */
  | { kind: "search"; root: string; targets: string[] }
  | { kind: "ask_user" }
  /** A custom or external tool: only tool-name rules apply. */
  | { kind: "custom" }
  /** A built-in whose input lacks what the engine needs. */
  | { kind: "invalid"; reason: string };

const bashInput = z.object({ command: z.string() });
const fileInput = z.object({ file_path: z.string().min(1) });
const searchInput = z.object({ pattern: z.string(), path: z.string().optional() });

/** Whether `toolName` is handled as a built-in: an external tool named like one is a custom tool. */
export function isBuiltin(toolName: string, external = false): toolName is BuiltinToolName {
  const builtin = (BUILTIN_TOOL_NAMES as readonly string[]).includes(toolName);
  return builtin && (!external || toolName === "AskUser");
}

/** Reads a tool call's input into the view the permission checks use. */
export function describeCall(
  toolName: string,
  input: unknown,
  context: PathContext,
  external = false,
): CallView {
  if (!isBuiltin(toolName, external)) return { kind: "custom" };
  switch (toolName) {
    case "AskUser":
      return { kind: "ask_user" };
    case "Bash": {
      const parsed = bashInput.safeParse(input);
      if (!parsed.success) return { kind: "invalid", reason: "Bash input needs a command string" };
      const script = parseShell(parsed.data.command);
      return {
        kind: "bash",
        command: parsed.data.command,
        script,
        needsNoRule: script.commands.map((command) => needsNoRule(command, context)),
      };
    }
    case "Read":
    case "Write":
    case "Edit": {
      const parsed = fileInput.safeParse(input);
      if (!parsed.success)
        return { kind: "invalid", reason: `${toolName} input needs a file_path` };
      const rawPath = parsed.data.file_path;
      return { kind: "file", path: resolvePath(rawPath, context), rawPath };
    }
    case "Glob":
    case "Grep": {
      const parsed = searchInput.safeParse(input);
      if (!parsed.success) return { kind: "invalid", reason: `${toolName} input needs a pattern` };
      const { pattern, path } = parsed.data;
      const root = resolvePath(path === undefined || path === "" ? "." : path, context);
      const targets = [root];
      if (toolName === "Glob") {
        targets.push(resolvePath(pattern, { ...context, workingDirectories: [root] }));
      }
      return { kind: "search", root, targets };
    }
  }
}

const DIRECTORY_CHANGES = new Set(["cd", "pushd", "popd"]);

/** See `needsNoRule` on the Bash view; a bare `cd` (home) or `popd` (unknown) needs a rule. */
function needsNoRule(command: ShellCommand, context: PathContext): boolean {
  if (!isReadOnlyCommand(command)) return false;
  const { argv } = splitAssignments(command);
  if (!DIRECTORY_CHANGES.has(argv[0] ?? "")) return true;
  const targets = pathArguments(argv);
  return (
    argv[0] !== "popd" &&
    targets.length > 0 &&
    targets.every((target) => isInsideWorkingDirectory(resolvePath(target, context), context))
  );
}
