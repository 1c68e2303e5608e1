import { lstat } from "node:fs/promises";
import { z } from "zod";
import { listFiles, patternError, searchRoot, withheldNote } from "./list-files.js";
import { OutputCap } from "./output-cap.js";
import type { Tool, ToolContext, ToolResult } from "./tool.js";
import { errorResult, interruptedResult } from "./tool-result.js";

/** Most paths a Glob returns. */
export const GLOB_MAX_RESULTS = 100;
const STAT_BATCH = 256;

export const globInputSchema = z.strictObject({
  pattern: z
    .string()
    .min(1)
    .describe('Glob pattern relative to `path`, e.g. "**/*.ts" or "src/**/*.{js,jsx}".'),
  path: z
    .string()
    .min(1)
    .optional()
    .describe("Directory to search in (default: the first working directory)."),
});

export type GlobInput = z.infer<typeof globInputSchema>;

/**
 * Lists the files under `path` matching `pattern`, most recently modified first (ties by path),
 * at most GLOB_MAX_RESULTS, as absolute paths one per line. See `listFiles` for what is skipped.
 */
export const globTool: Tool<GlobInput> = {
  name: "Glob",
  description:
    'Finds files by glob pattern (e.g. "**/*.ts", "src/**/test_*.py") and returns their absolute ' +
    `paths, most recently modified first, at most ${GLOB_MAX_RESULTS}. node_modules and .git are ` +
    "skipped unless the pattern names them. Use Grep to search file contents.",
  inputSchema: globInputSchema,
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  run: runGlob,
};

async function runGlob(input: GlobInput, ctx: ToolContext): Promise<ToolResult> {
  if (ctx.signal.aborted) return interruptedResult();
  const bad = patternError(input.pattern);
  if (bad !== null) return errorResult(bad);
  const root = await searchRoot(input.path, ctx.workingDirectories, false);
  if (!root.ok) return errorResult(root.error);

  let files: string[];
  let withheld: ReadonlyMap<string, number>;
  try {
    ({ files, withheld } = await listFiles(
      root.path,
      [input.pattern],
      ctx.workingDirectories,
      ctx.signal,
      ctx.readRule,
    ));
  } catch (err) {
    if (ctx.signal.aborted) return interruptedResult();
    return errorResult(`Could not search ${root.shown}: ${(err as Error).message}`);
  }
  const note = withheldNote(withheld);
  const left =
    withheld.size > 0 ? { withheld: [...withheld.values()].reduce((a, b) => a + b) } : {};
  if (files.length === 0) {
    return { state: "success", output: `No files found.${note}`, metadata: { count: 0, ...left } };
  }

  const dated: { file: string; mtime: number }[] = [];
  for (let i = 0; i < files.length; i += STAT_BATCH) {
    if (ctx.signal.aborted) return interruptedResult();
    const batch = files.slice(i, i + STAT_BATCH);
    const times = await Promise.all(
      batch.map((file) =>
        lstat(file).then(
          (s) => s.mtimeMs,
          () => -1,
        ),
      ),
    );
    batch.forEach((file, j) => {
      const mtime = times[j] ?? -1;
      if (mtime >= 0) dated.push({ file, mtime });
    });
  }
  dated.sort((a, b) => b.mtime - a.mtime || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));

  const cap = new OutputCap(ctx.maxOutputBytes);
  const shown = dated.slice(0, GLOB_MAX_RESULTS);
  cap.push(shown.map((d) => d.file).join("\n"));
  let output = cap.text() + cap.note;
  if (dated.length > shown.length) {
    output += `\n(showing the ${shown.length} most recently modified of ${dated.length} files; narrow the pattern or path to see others)`;
  }
  output += note;
  const metadata: Record<string, unknown> = { count: dated.length, ...left };
  if (dated.length > shown.length || cap.truncated) metadata.truncated = true;
  return { state: "success", output, metadata };
}
