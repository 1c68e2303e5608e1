import { z } from "zod";
import { openRegularFile, READ_FLAGS } from "./open-file.js";
import { OutputCap } from "./output-cap.js";
import { resolveInside } from "./paths.js";
import { readLineWindow } from "./read-line-window.js";
import type { Tool, ToolContext, ToolResult } from "./tool.js";
import { errorResult, interruptedResult } from "./tool-result.js";

export const READ_MAX_LINES = 2000;
/** Lines longer than this are cut with a marker. */
export const READ_MAX_LINE_CHARS = 2000;
/** Read looks for lines in the first this many bytes of a file only. */
export const READ_MAX_SCAN_BYTES = 128 * 1024 * 1024;

export const readInputSchema = z.strictObject({
  file_path: z
    .string()
    .min(1)
    .describe(
      "Absolute path of the file to read (a relative path is taken from the first working directory).",
    ),
  offset: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe("Line number to start at, counted from 1 (default 1). Use it for large files."),
  limit: z
    .number()
    .int()
    .min(1)
    .max(READ_MAX_LINES)
    .optional()
    .describe(`How many lines to read (default and max ${READ_MAX_LINES}).`),
});

export type ReadInput = z.infer<typeof readInputSchema>;

/**
 * Reads a text file inside the working directories and shows it like `cat -n`: each line as its
 * number right-aligned in six columns, a tab, and the text. Refuses directories, non-regular files,
 * files with more than one hard link and binary files (NUL bytes near the start). Only the requested
 * window of lines is read, and the output is capped at `ctx.maxOutputBytes` with a note saying which
 * offset to continue from.
 */
export const readTool: Tool<ReadInput> = {
  name: "Read",
  description:
    "Reads a text file and returns its lines numbered like `cat -n`. Reads up to 2000 lines from " +
    "`offset`; for longer files, read on with a larger `offset`. Lines over 2000 characters are " +
    "cut. Directories and binary files are refused; use Glob to list files.",
  inputSchema: readInputSchema,
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  run: runRead,
};

async function runRead(input: ReadInput, ctx: ToolContext): Promise<ToolResult> {
  if (ctx.signal.aborted) return interruptedResult();
  const where = await resolveInside(input.file_path, ctx.workingDirectories);
  if (!where.ok) return errorResult(where.error);
  const shown = where.requested;
  const opened = await openRegularFile(where.path, READ_FLAGS, shown, "Read");
  if (!opened.ok) return errorResult(opened.error);

  const offset = input.offset ?? 1;
  const limit = input.limit ?? READ_MAX_LINES;
  let window;
  try {
    window = await readLineWindow(opened.file, {
      offset,
      limit,
      maxLineChars: READ_MAX_LINE_CHARS,
      size: opened.size,
      maxScanBytes: READ_MAX_SCAN_BYTES,
      signal: ctx.signal,
    });
  } catch (err) {
    if (ctx.signal.aborted) return interruptedResult();
    return errorResult(`${shown}: ${(err as Error).message}`);
  } finally {
    await opened.file.close();
  }

  if (window.binary) {
    return errorResult(
      `${shown} appears to be a binary file (${opened.size} bytes, with NUL bytes near the start); Read shows text files only.`,
    );
  }
  if (window.scanStopped && window.lines.length === 0) {
    return errorResult(
      `${shown} is ${opened.size} bytes; line ${offset} lies beyond the first ${READ_MAX_SCAN_BYTES} bytes, which is as far as Read looks. Use Grep, or Bash (e.g. tail -c), for such files.`,
    );
  }
  if (window.totalLines === 0) {
    return { state: "success", output: `(${shown} is empty)`, metadata: { totalLines: 0 } };
  }
  if (window.lines.length === 0) {
    return errorResult(
      `${shown} has ${window.totalLines ?? 0} lines; offset ${offset} is past the end.`,
    );
  }

  const cap = new OutputCap(ctx.maxOutputBytes);
  let shownLines = 0;
  for (const line of window.lines) {
    const lineNo = offset + shownLines;
    cap.push(`${String(lineNo).padStart(6)}\t${line}\n`);
    if (cap.truncated) break;
    shownLines++;
  }
  const lastLine = offset + shownLines - 1;
  let output = cap.text();
  if (cap.truncated) {
    output += `${cap.note}; use offset ${lastLine + 1} to read on.`;
  } else if (window.scanStopped) {
    output += `\n(showing lines ${offset}–${lastLine}; Read stopped at byte ${READ_MAX_SCAN_BYTES} of ${opened.size}: the last line may be cut, and the rest of the file is beyond Read)`;
  } else if (window.more) {
    output += `\n(showing lines ${offset}–${lastLine}; the file continues: use offset ${lastLine + 1} to read on)`;
  }
  const metadata: Record<string, unknown> = {
    firstLine: offset,
    lastLine,
    more: window.more || cap.truncated,
  };
  if (window.totalLines !== undefined) metadata.totalLines = window.totalLines;
  if (cap.truncated) metadata.truncated = true;
  if (window.scanStopped) metadata.scanStopped = true;
  return { state: "success", output, metadata };
}
