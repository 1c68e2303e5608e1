import { z } from "zod";
import { contentLines, GrepOutput } from "./grep-output.js";
import { listFiles, patternError, searchRoot } from "./list-files.js";
import { matchLines } from "./match-lines.js";
import { openRegularFile, READ_FLAGS } from "./open-file.js";
import { RegexBudget, RegexTimeoutError } from "./regex-budget.js";
import type { Tool, ToolContext, ToolResult } from "./tool.js";
import { errorResult, interruptedResult } from "./tool-result.js";

/** Files larger than this are skipped (and counted in the output). */
export const GREP_MAX_FILE_BYTES = 8 * 1024 * 1024;
/** The default of `GrepOptions.fileTimeMs`. */
export const GREP_FILE_TIME_MS = 5000;
/** Files read at the same time. */
const READ_BATCH = 8;
const BINARY_PROBE_BYTES = 8000;

export const grepInputSchema = z.strictObject({
  pattern: z
    .string()
    .min(1)
    .describe('Regular expression to search for (JavaScript syntax), e.g. "function\\s+\\w+".'),
  path: z
    .string()
    .min(1)
    .optional()
    .describe("File or directory to search (default: the first working directory)."),
  glob: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Only search files matching this glob, e.g. "*.ts" or "src/**/*.{ts,tsx}"; a glob without "/" matches file names at any depth.',
    ),
  output_mode: z
    .enum(["content", "files_with_matches", "count"])
    .default("files_with_matches")
    .describe(
      '"files_with_matches" (default): paths of matching files, most recently modified first; "content": matching lines as path:line:text; "count": matching lines per file.',
    ),
  "-A": z
    .number()
    .int()
    .min(0)
    .optional()
    .describe('Lines of context after each match ("content" only).'),
  "-B": z
    .number()
    .int()
    .min(0)
    .optional()
    .describe('Lines of context before each match ("content" only).'),
  "-C": z
    .number()
    .int()
    .min(0)
    .optional()
    .describe('Lines of context around each match ("content" only).'),
  "-i": z.boolean().optional().describe("Case-insensitive search (default false)."),
  multiline: z
    .boolean()
    .optional()
    .describe("Let the pattern span lines; `.` then matches newlines too (default false)."),
  head_limit: z
    .number()
    .int()
    .positive()
    .optional()
    .describe("Return only the first N entries (lines, files or counts)."),
});

export type GrepInput = z.infer<typeof grepInputSchema>;

export interface GrepOptions {
  /** The longest one file's matching may take before the pattern is given up on. */
  fileTimeMs?: number;
}

/**
 * Searches file contents with a JavaScript regular expression, in Node (no ripgrep needed). Binary
 * files (NUL bytes near the start) and files over GREP_MAX_FILE_BYTES are skipped; so are
 * `node_modules` and `.git` unless the glob names them, and symlinks (see `listFiles`). Lines are
 * split at "\n" with "\r" dropped; "count" counts matching lines. Matching runs under a time budget
 * per file so a catastrophic pattern cannot stall the server. Output is capped at
 * `ctx.maxOutputBytes`; content and count searches stop once the output is full.
 */
export function createGrepTool(options: GrepOptions = {}): Tool<GrepInput> {
  const fileTimeMs = options.fileTimeMs ?? GREP_FILE_TIME_MS;
  return {
    name: "Grep",
    description:
      "Searches file contents with a regular expression (JavaScript syntax). By default returns the " +
      'paths of matching files; output_mode "content" shows matching lines (with -A/-B/-C context), ' +
      '"count" the number per file. Filter files with `glob`; -i ignores case; multiline lets a ' +
      "pattern span lines. Skips binary files, node_modules and .git.",
    inputSchema: grepInputSchema,
    isReadOnly: () => true,
    isConcurrencySafe: () => true,
    run: (input, ctx) => runGrep(input, ctx, fileTimeMs),
  };
}

/** The Grep tool with the default time budget. */
export const grepTool: Tool<GrepInput> = createGrepTool();

async function runGrep(
  input: GrepInput,
  ctx: ToolContext,
  fileTimeMs: number,
): Promise<ToolResult> {
  if (ctx.signal.aborted) return interruptedResult();
  const multiline = input.multiline ?? false;
  let regex: RegExp;
  try {
    regex = new RegExp(input.pattern, (multiline ? "gms" : "") + (input["-i"] ? "i" : ""));
  } catch (err) {
    return errorResult(`Invalid regular expression: ${(err as Error).message}`);
  }
  if (input.glob !== undefined) {
    const bad = patternError(input.glob);
    if (bad !== null) return errorResult(bad);
  }
  const root = await searchRoot(input.path, ctx.workingDirectories, true);
  if (!root.ok) return errorResult(root.error);

  let files: string[];
  try {
    files = root.isFile
      ? [root.path]
      : await listFiles(root.path, globPatterns(input.glob), ctx.workingDirectories, ctx.signal);
  } catch (err) {
    if (ctx.signal.aborted) return interruptedResult();
    return errorResult(`Could not search ${root.shown}: ${(err as Error).message}`);
  }
  files.sort();

  const mode = input.output_mode;
  const before = input["-B"] ?? input["-C"] ?? 0;
  const after = input["-A"] ?? input["-C"] ?? 0;
  const out = new GrepOutput(ctx.maxOutputBytes, input.head_limit);
  const budget = new RegexBudget(fileTimeMs);
  const matched: { file: string; mtimeMs: number }[] = [];
  let skippedLarge = 0;

  search: for (let i = 0; i < files.length; i += READ_BATCH) {
    if (ctx.signal.aborted) return interruptedResult();
    const batch = files.slice(i, i + READ_BATCH);
    const texts = await Promise.all(batch.map(readForGrep));
    for (const [j, read] of texts.entries()) {
      const file = batch[j] ?? "";
      if (read === "large") skippedLarge++;
      if (typeof read === "string") continue;
      let matches: number[];
      try {
        matches = budget.run(() =>
          matchLines(regex, read.text, read.lines, multiline, mode === "files_with_matches"),
        );
      } catch (err) {
        if (!(err instanceof RegexTimeoutError)) throw err;
        return errorResult(
          `The pattern took more than ${fileTimeMs} ms on ${file}; it likely backtracks catastrophically. Simplify it.`,
        );
      }
      if (matches.length === 0) continue;
      matched.push({ file, mtimeMs: read.mtimeMs });
      if (mode === "count") out.add(`${file}:${matches.length}`);
      if (mode === "content") {
        if (matched.length > 1 && (before > 0 || after > 0)) out.add("--");
        for (const line of contentLines(file, read.lines, matches, before, after)) out.add(line);
      }
      if (out.full) break search;
    }
  }

  if (mode === "files_with_matches") {
    matched.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.file < b.file ? -1 : 1));
    for (const m of matched) if (!out.add(m.file)) break;
  }
  let output = matched.length === 0 ? "No matches found." : out.text();
  if (matched.length > 0 && mode === "files_with_matches") {
    output = `Found ${matched.length} file${matched.length === 1 ? "" : "s"}\n${output}`;
  }
  if (skippedLarge > 0) {
    output += `\n(skipped ${skippedLarge} file${skippedLarge === 1 ? "" : "s"} larger than ${GREP_MAX_FILE_BYTES} bytes)`;
  }
  const metadata: Record<string, unknown> = { files: matched.length, entries: out.count };
  if (out.full) metadata.truncated = true;
  return { state: "success", output, metadata };
}

/** The glob filter as listFiles patterns; one without "/" matches file names at any depth. */
function globPatterns(glob: string | undefined): string[] {
  if (glob === undefined) return ["**/*"];
  return [glob.includes("/") ? glob : `**/${glob}`];
}

type GrepText = { text: string; lines: string[]; mtimeMs: number };

/** A text file's content and lines, or why it is skipped. */
async function readForGrep(file: string): Promise<GrepText | "large" | "skip"> {
  const opened = await openRegularFile(file, READ_FLAGS, file);
  if (!opened.ok) return "skip";
  try {
    if (opened.size > GREP_MAX_FILE_BYTES) return "large";
    const bytes = await opened.file.readFile();
    if (bytes.subarray(0, BINARY_PROBE_BYTES).includes(0)) return "skip";
    let text = bytes.toString("utf8");
    if (text.includes("\r")) text = text.replace(/\r\n/g, "\n");
    const lines = text.split("\n");
    if (text.endsWith("\n")) lines.pop();
    return { text, lines, mtimeMs: opened.mtimeMs };
  } catch {
    return "skip";
  } finally {
    await opened.file.close();
  }
}
