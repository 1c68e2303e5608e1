import { z } from "zod";
import { isReadOnlyCommand } from "./is-read-only-bash.js";
import { type ShellScript, parseShell } from "./parse-shell.js";
import { resolvePath } from "./resolve-path.js";
import { BUILTIN_TOOL_NAMES, type BuiltinToolName, type PathContext } from "./types.js";

/** What the engine understands of one tool call; built once per call and shared by every step. */
export type CallView =
  | {
      kind: "bash";
      command: string;
      script: ShellScript;
      /** Per simple command of `script`: whether it only reads by itself. */
      readOnly: boolean[];
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
        readOnly: script.commands.map(isReadOnlyCommand),
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
