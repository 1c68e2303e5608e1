import { z } from "zod";
import { resolveInside } from "./paths.js";
import type { Tool, ToolContext, ToolResult } from "./tool.js";
import { errorResult, interruptedResult } from "./tool-result.js";
import { writeTextFile } from "./write-text-file.js";

export const writeInputSchema = z.strictObject({
  file_path: z
    .string()
    .min(1)
    .describe(
      "Absolute path of the file to write (a relative path is taken from the first working directory).",
    ),
  content: z.string().describe("The complete new content of the file."),
});

export type WriteInput = z.infer<typeof writeInputSchema>;

/**
 * Writes a file inside the working directories, replacing its content or creating it together with
 * its missing parent directories (which are then inside the working directories too). Refuses a
 * file with more than one hard link, leaving it unchanged.
 */
export const writeTool: Tool<WriteInput> = {
  name: "Write",
  description:
    "Writes a file with the given content, replacing what it held, or creating it (and its parent " +
    "directories). Prefer Edit to change part of an existing file.",
  inputSchema: writeInputSchema,
  isReadOnly: () => false,
  isConcurrencySafe: () => false,
  run: runWrite,
};

async function runWrite(input: WriteInput, ctx: ToolContext): Promise<ToolResult> {
  if (ctx.signal.aborted) return interruptedResult();
  const where = await resolveInside(input.file_path, ctx.workingDirectories);
  if (!where.ok) return errorResult(where.error);
  const error = await writeTextFile(where.path, input.content, where.requested, "Write");
  if (error !== null) return errorResult(error);
  const bytes = Buffer.byteLength(input.content);
  return {
    state: "success",
    output: `${where.exists ? "Wrote" : "Created"} ${where.requested} (${bytes} bytes).`,
    metadata: { path: where.requested, bytes, created: !where.exists },
  };
}
