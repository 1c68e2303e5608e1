import { z } from "zod";
import { type BashAnalysis, analyzeBash } from "./bash-analysis.js";
import { type ShellScript, parseShell } from "./parse-shell.js";
import { type Located, locate } from "./resolve-path.js";
import { BUILTIN_TOOL_NAMES, type BuiltinToolName, type PathContext } from "./types.js";

/** What the engine understands of one tool call; built once per call and shared by every step. */
export type CallView =
  | {
      kind: "bash";
      command: string;
      script: ShellScript;
      /** What each simple command reads and writes, and whether it only reads. */
      analysis: BashAnalysis;
      /**
       * Per simple command of `script`: whether it needs no allow rule inside a compound command,
       * because it only reads by itself; a directory change counts only when it stays inside the
       * working directories (`cd /tmp/x && npm test` must not run an allowed `npm test` elsewhere).
       */
      needsNoRule: boolean[];
    }
  /**
   * Read, Write, Edit: `file_path` where it really leads (`path`, links followed), as written
   * (`rawPath`), and resolved as written (`located`).
   */
  | { kind: "file"; path: string; rawPath: string; located: Located; writes: boolean }
  /**
   * Glob, Grep: the search root (links followed), then (Glob) the pattern resolved against it;
   * `located` also keeps each as written.
   */
  | { kind: "search"; root: string; targets: string[]; located: Located[] }
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
      const analysis = analyzeBash(script, context);
      return {
        kind: "bash",
        command: parsed.data.command,
        script,
        analysis,
        needsNoRule: analysis.commands.map(
          (command) => command.readOnly && (command.directoryChange?.inside ?? true),
        ),
      };
    }
    case "Read":
    case "Write":
    case "Edit": {
      const parsed = fileInput.safeParse(input);
      if (!parsed.success)
        return { kind: "invalid", reason: `${toolName} input needs a file_path` };
      const rawPath = parsed.data.file_path;
      const located = locate(rawPath, context);
      return { kind: "file", path: located.real, rawPath, located, writes: toolName !== "Read" };
    }
    case "Glob":
    case "Grep": {
      const parsed = searchInput.safeParse(input);
      if (!parsed.success) return { kind: "invalid", reason: `${toolName} input needs a pattern` };
      const { pattern, path } = parsed.data;
      const root = locate(path === undefined || path === "" ? "." : path, context);
      const located = [root];
      if (toolName === "Glob") located.push(locate(pattern, context, root.real));
      return { kind: "search", root: root.real, targets: located.map((l) => l.real), located };
    }
  }
}
