import { z } from "zod";
import { openRegularFile, READ_FLAGS } from "./open-file.js";
import { resolveInside } from "./paths.js";
import type { Tool, ToolContext, ToolResult } from "./tool.js";
import { errorResult, interruptedResult } from "./tool-result.js";
import { writeTextFile } from "./write-text-file.js";

/** Files larger than this are not edited (Write replaces them whole). */
export const EDIT_MAX_BYTES = 10 * 1024 * 1024;
/** Lines of context shown around the first replacement. */
const SNIPPET_CONTEXT = 3;
/** Most lines the snippet shows. */
const SNIPPET_MAX_LINES = 40;

export const editInputSchema = z.strictObject({
  file_path: z
    .string()
    .min(1)
    .describe(
      "Absolute path of the file to edit (a relative path is taken from the first working directory).",
    ),
  old_string: z
    .string()
    .describe(
      "The exact text to replace, including whitespace and indentation. It must occur exactly once " +
        "unless replace_all is true. Empty only to create a file that does not exist yet.",
    ),
  new_string: z.string().describe("The text to put in its place; must differ from old_string."),
  replace_all: z
    .boolean()
    .default(false)
    .describe("Replace every occurrence of old_string instead of exactly one (default false)."),
});

export type EditInput = z.infer<typeof editInputSchema>;

/**
 * Replaces exact text in a file inside the working directories. Errors, changing nothing, when
 * old_string equals new_string, is not found, or occurs more than once without replace_all, or when
 * the file has more than one hard link. An empty old_string creates a file that does not exist yet
 * (or fills an empty one). When the file uses CRLF line endings and the strings use LF, they are
 * matched and written with CRLF.
 */
export const editTool: Tool<EditInput> = {
  name: "Edit",
  description:
    "Replaces exact text in a file: old_string must match the file's text exactly (whitespace " +
    "included) and occur once, unless replace_all is set to replace every occurrence. Read the " +
    "file first so old_string is exact.",
  inputSchema: editInputSchema,
  isReadOnly: () => false,
  isConcurrencySafe: () => false,
  run: runEdit,
};

async function runEdit(input: EditInput, ctx: ToolContext): Promise<ToolResult> {
  if (ctx.signal.aborted) return interruptedResult();
  if (input.old_string === input.new_string) {
    return errorResult("old_string and new_string are the same; there is nothing to change.");
  }
  const where = await resolveInside(input.file_path, ctx.workingDirectories);
  if (!where.ok) return errorResult(where.error);
  const shown = where.requested;

  if (!where.exists) {
    if (input.old_string !== "") return errorResult(`File does not exist: ${shown}`);
    const error = await writeTextFile(where.path, input.new_string, shown, "Edit");
    if (error !== null) return errorResult(error);
    return {
      state: "success",
      output: `Created ${shown}.`,
      metadata: { path: shown, created: true },
    };
  }

  const current = await readText(where.path, shown);
  if (!current.ok) return errorResult(current.error);
  const text = current.text;
  let oldString = input.old_string;
  let newString = input.new_string;

  if (oldString === "") {
    if (text !== "") {
      return errorResult(
        `${shown} already has content; old_string must be the text to replace (use Write to replace the whole file).`,
      );
    }
  } else if (!text.includes(oldString) && text.includes("\r\n") && oldString.includes("\n")) {
    oldString = oldString.replace(/\r?\n/g, "\r\n");
    newString = newString.replace(/\r?\n/g, "\r\n");
  }

  const count = oldString === "" ? 1 : countOccurrences(text, oldString);
  if (count === 0) {
    return errorResult(
      `old_string was not found in ${shown}. It must match exactly, including whitespace and indentation.`,
    );
  }
  if (count > 1 && !input.replace_all) {
    return errorResult(
      `old_string occurs ${count} times in ${shown}. Include more surrounding text to make it unique, or set replace_all to replace every occurrence.`,
    );
  }
  const first = oldString === "" ? 0 : text.indexOf(oldString);
  const updated =
    oldString === ""
      ? newString
      : input.replace_all
        ? text.split(oldString).join(newString)
        : text.slice(0, first) + newString + text.slice(first + oldString.length);

  const error = await writeTextFile(where.path, updated, shown, "Edit");
  if (error !== null) return errorResult(error);
  const replaced = input.replace_all ? count : 1;
  const output =
    `Edited ${shown}: replaced ${replaced} occurrence${replaced === 1 ? "" : "s"}.\n` +
    snippet(updated, first, newString);
  return { state: "success", output, metadata: { path: shown, replacements: replaced } };
}

type Text = { ok: true; text: string } | { ok: false; error: string };

async function readText(realPath: string, shown: string): Promise<Text> {
  const opened = await openRegularFile(realPath, READ_FLAGS, shown, "Edit");
  if (!opened.ok) return opened;
  try {
    if (opened.size > EDIT_MAX_BYTES) {
      return {
        ok: false,
        error: `${shown} is too large to edit (${opened.size} bytes; at most ${EDIT_MAX_BYTES}).`,
      };
    }
    const bytes = await opened.file.readFile();
    if (bytes.includes(0)) {
      return {
        ok: false,
        error: `${shown} appears to be a binary file; Edit changes text files only.`,
      };
    }
    return { ok: true, text: bytes.toString("utf8") };
  } finally {
    await opened.file.close();
  }
}

/** Non-overlapping occurrences of `needle` (not empty) in `haystack`. */
function countOccurrences(haystack: string, needle: string): number {
  let count = 0;
  for (
    let at = haystack.indexOf(needle);
    at !== -1;
    at = haystack.indexOf(needle, at + needle.length)
  ) {
    count++;
  }
  return count;
}

/** The lines around the text inserted at `start`, numbered like Read's output. */
function snippet(text: string, start: number, inserted: string): string {
  const firstLine = text.slice(0, start).split("\n").length;
  const lastLine = firstLine + inserted.split("\n").length - 1;
  const lines = text.split("\n");
  if (text.endsWith("\n")) lines.pop();
  const from = Math.max(1, firstLine - SNIPPET_CONTEXT);
  const to = Math.min(lines.length, lastLine + SNIPPET_CONTEXT, from + SNIPPET_MAX_LINES - 1);
  const out: string[] = [];
  for (let n = from; n <= to; n++) {
    out.push(`${String(n).padStart(6)}\t${(lines[n - 1] ?? "").replace(/\r$/, "")}`);
  }
  return out.join("\n");
}
