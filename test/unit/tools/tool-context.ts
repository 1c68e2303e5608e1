import { mkdir, mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { ToolContext } from "../../../src/tools/index.js";

/** A ToolContext over real directories that records what the tool emits. */
export interface TestContext extends ToolContext {
  readonly emitted: string[];
  readonly controller: AbortController;
}

export function toolContext(
  workingDirectories: readonly string[],
  options: { maxOutputBytes?: number; controller?: AbortController } = {},
): TestContext {
  const controller = options.controller ?? new AbortController();
  const emitted: string[] = [];
  return {
    signal: controller.signal,
    workingDirectories,
    maxOutputBytes: options.maxOutputBytes ?? 100_000,
    emitText: (delta) => emitted.push(delta),
    emitted,
    controller,
  };
}

/**
 * A fresh sandbox: `root/work` is the working directory and `root/outside` a sibling outside it
 * (both real paths). `cleanup` removes everything.
 */
export async function sandbox(): Promise<{
  root: string;
  work: string;
  outside: string;
  cleanup: () => Promise<void>;
}> {
  const root = await realpath(await mkdtemp(path.join(tmpdir(), "parkway-tools-")));
  const work = path.join(root, "work");
  const outside = path.join(root, "outside");
  await mkdir(work);
  await mkdir(outside);
  return { root, work, outside, cleanup: () => rm(root, { recursive: true, force: true }) };
}
