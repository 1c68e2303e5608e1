import { mkdir, rmdir, stat } from "node:fs/promises";
import path from "node:path";

/**
 * Creates `dir` and its missing parents, one level at a time from the root, as `mkdir -p` does.
 * Node's own `mkdir(dir, { recursive: true })` never settles where a directory cannot be made
 * although its parent exists (`/proc/x`: the mkdir says ENOENT, the parent's EEXIST, and it tries
 * again without end, ignoring signals); here the level that fails throws its error, whose `path`
 * names it. A file in the way throws ENOTDIR naming the file. Resolves with the directories it
 * made, the outermost first (none when `dir` existed).
 */
export async function makeDirectory(dir: string): Promise<string[]> {
  // The common case, a directory that exists, costs one stat.
  if (
    await stat(dir).then(
      (found) => found.isDirectory(),
      () => false,
    )
  )
    return [];
  const made: string[] = [];
  const chain: string[] = [];
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    chain.unshift(at);
    if (path.dirname(at) === at) break;
  }
  for (const at of chain) {
    const found = await stat(at).catch((err: NodeJS.ErrnoException) => {
      if (err.code === "ENOENT") return undefined;
      throw err;
    });
    if (found?.isDirectory()) continue;
    if (found) {
      throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${at}'`), {
        code: "ENOTDIR",
        path: at,
      });
    }
    try {
      await mkdir(at);
      made.push(at);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
  }
  return made;
}

/**
 * Removes directories `makeDirectory` made, the innermost first, each only while it is empty:
 * what a failed start made and left unused goes, anything written into them stays.
 */
export async function removeEmptyDirectories(made: readonly string[]): Promise<void> {
  for (const dir of [...made].reverse()) {
    await rmdir(dir).catch(() => undefined);
  }
}
