import { z } from "zod";
import { contentLines, GrepOutput } from "./grep-output.js";
import { listFiles, patternError, searchRoot, withheldNote } from "./list-files.js";
import { createLineMatcher, type LineMatcher } from "./line-matcher.js";
import { openRegularFile, READ_FLAGS } from "./open-file.js";
import { RegexBudget, RegexTimeoutError } from "./regex-budget.js";
import type { Tool, ToolContext, ToolResult } from "./tool.js";
import { errorResult, interruptedResult } from "./tool-result.js";

/** Files larger than this are skipped (and counted in the output). */
export const GREP_MAX_FILE_BYTES = 8 * 1024 * 1024;
/** The default of `GrepOptions.batchTimeMs`. */
export const GREP_BATCH_TIME_MS = 5000;
/** Files read at the same time, then matched under one time budget. */
const READ_BATCH = 16;
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
  /** The longest the matching of one batch of files may take before the pattern is given up on. */
  batchTimeMs?: number;
}

/**
 * Searches file contents with a JavaScript regular expression, in Node (no ripgrep needed). Binary
 * files (NUL bytes near the start) and files over GREP_MAX_FILE_BYTES are skipped; so are
 * `node_modules` and `.git` unless the glob names them, and symlinks (see `listFiles`). Files with
 * more than one hard link are skipped with a note saying how many, and refused when named as `path`
 * (see `openRegularFile`). Lines are split at "\n" with "\r" dropped; "count" counts matching
 * lines. Files are read 16 at a time and matched under a time budget (see RegexBudget) so a
 * catastrophic pattern cannot stall the server. Output is capped at `ctx.maxOutputBytes`; content
 * and count searches stop once the output is full.
 */
export function createGrepTool(options: GrepOptions = {}): Tool<GrepInput> {
  const batchTimeMs = options.batchTimeMs ?? GREP_BATCH_TIME_MS;
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
    run: (input, ctx) => runGrep(input, ctx, batchTimeMs),
  };
}

/** The Grep tool with the default time budget. */
export const grepTool: Tool<GrepInput> = createGrepTool();

async function runGrep(
  input: GrepInput,
  ctx: ToolContext,
  batchTimeMs: number,
): Promise<ToolResult> {
  if (ctx.signal.aborted) return interruptedResult();
  let matcher: LineMatcher;
  try {
    matcher = createLineMatcher(input.pattern, {
      ignoreCase: input["-i"] ?? false,
      multiline: input.multiline ?? false,
    });
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
  let withheld: ReadonlyMap<string, number> = new Map();
  try {
    if (root.isFile) files = [root.path];
    else {
      ({ files, withheld } = await listFiles(
        root.path,
        globPatterns(input.glob),
        ctx.workingDirectories,
        ctx.signal,
        ctx.readRule,
      ));
    }
  } catch (err) {
    if (ctx.signal.aborted) return interruptedResult();
    return errorResult(`Could not search ${root.shown}: ${(err as Error).message}`);
  }
  files.sort();

  const mode = input.output_mode;
  const before = input["-B"] ?? input["-C"] ?? 0;
  const after = input["-A"] ?? input["-C"] ?? 0;
  const out = new GrepOutput(ctx.maxOutputBytes, input.head_limit);
  const budget = new RegexBudget(batchTimeMs);
  const matched: { file: string; mtimeMs: number }[] = [];
  let skippedLarge = 0;
  let skippedHardLinked = 0;

  for (let i = 0; i < files.length && !out.full; i += READ_BATCH) {
    if (ctx.signal.aborted) return interruptedResult();
    const batch = files.slice(i, i + READ_BATCH);
    const texts = await Promise.all(
      batch.map((file) => readForGrep(file, root.isFile ? root.shown : file)),
    );
    skippedLarge += texts.filter((t) => t === "large").length;
    for (const read of texts) {
      if (typeof read === "string" || !("refused" in read)) continue;
      if (root.isFile) return errorResult(read.refused);
      skippedHardLinked++;
    }
    let current = "";
    try {
      budget.run(() => {
        for (const [j, read] of texts.entries()) {
          if (typeof read === "string" || "refused" in read || out.full) continue;
          current = batch[j] ?? "";
          const lines = matcher.matchLines(read.text, mode === "files_with_matches");
          if (lines.length === 0) continue;
          matched.push({ file: current, mtimeMs: read.mtimeMs });
          if (mode === "count") out.add(`${current}:${lines.length}`);
          if (mode === "content") {
            if (matched.length > 1 && (before > 0 || after > 0)) out.add("--");
            const all = splitLines(read.text);
            for (const line of contentLines(current, all, lines, before, after)) out.add(line);
          }
        }
      });
    } catch (err) {
      if (!(err instanceof RegexTimeoutError)) throw err;
      return errorResult(
        `The pattern took more than ${batchTimeMs} ms searching ${current}; it likely backtracks catastrophically. Simplify it.`,
      );
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
  if (skippedHardLinked > 0) {
    output += `\n(skipped ${skippedHardLinked} file${skippedHardLinked === 1 ? "" : "s"} with more than one hard link: a hard-linked file may also be reachable from outside the working directories, so Grep does not search hard-linked files)`;
  }
  output += withheldNote(withheld);
  const metadata: Record<string, unknown> = { files: matched.length, entries: out.count };
  if (skippedHardLinked > 0) metadata.skippedHardLinked = skippedHardLinked;
  if (withheld.size > 0) metadata.withheld = [...withheld.values()].reduce((a, b) => a + b);
  if (out.full) metadata.truncated = true;
  return { state: "success", output, metadata };
}

/** The glob filter as listFiles patterns; one without "/" matches file names at any depth. */
function globPatterns(glob: string | undefined): string[] {
  if (glob === undefined) return ["**/*"];
  return [glob.includes("/") ? glob : `**/${glob}`];
}

type GrepText = { text: string; mtimeMs: number };
/** A file refused for having more than one hard link, with the error naming it as `shown`. */
type GrepRefused = { refused: string };

/** A text file's content with "\r\n" made "\n", or why it is skipped or refused. */
async function readForGrep(
  file: string,
  shown: string,
): Promise<GrepText | GrepRefused | "large" | "skip"> {
  const opened = await openRegularFile(file, READ_FLAGS, shown, "Grep");
  if (!opened.ok) return opened.hardLinked === true ? { refused: opened.error } : "skip";
  try {
    if (opened.size > GREP_MAX_FILE_BYTES) return "large";
    const bytes = Buffer.allocUnsafe(opened.size);
    let length = 0;
    while (length < bytes.length) {
      const { bytesRead } = await opened.file.read(bytes, length, bytes.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    const content = bytes.subarray(0, length);
    if (content.subarray(0, BINARY_PROBE_BYTES).includes(0)) return "skip";
    const text = content.toString("utf8");
    return {
      text: text.includes("\r") ? text.replace(/\r\n/g, "\n") : text,
      mtimeMs: opened.mtimeMs,
    };
  } catch {
    return "skip";
  } finally {
    await opened.file.close();
  }
}

/** The lines of a text, a final "\n" not starting another line. */
function splitLines(text: string): string[] {
  const lines = text.split("\n");
  if (text.endsWith("\n")) lines.pop();
  return lines;
}
