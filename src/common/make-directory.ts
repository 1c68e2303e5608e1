import { mkdir, stat } from "node:fs/promises";
import path from "node:path";

/**
 * Creates `dir` and its missing parents, one level at a time from the root, as `mkdir -p` does.
 * Node's own `mkdir(dir, { recursive: true })` never settles where a directory cannot be made
 * although its parent exists (`/proc/x`: the mkdir says ENOENT, the parent's EEXIST, and it tries
 * again without end, ignoring signals); here the level that fails throws its error, whose `path`
 * names it. A file in the way throws ENOTDIR naming the file.
 */
export async function makeDirectory(dir: string): Promise<void> {
  // The common case, a directory that exists, costs one stat.
  if (
    await stat(dir).then(
      (found) => found.isDirectory(),
      () => false,
    )
  )
    return;
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
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
  }
}
