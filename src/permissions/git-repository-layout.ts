import { posix } from "node:path";
import { isInsideWorkingDirectory } from "./resolve-path.js";
import type { PathContext } from "./types.js";

/**
 * Where a repository's files really are. git opens what it finds in its repository directory
 * through links: a `.git` that is a link, or an `objects`, `refs`, `index` or pack inside it that
 * leads elsewhere, makes `git show` print files from a repository outside the working directories;
 * so does `objects/info/alternates`, which lends git the objects of other repositories, and a
 * `--git-dir` that names a `.git` file (`gitdir: /elsewhere`). Such a repository is not followed:
 * its git commands are not read-only.
 */

/**
 * The directories inside a repository whose entries git opens besides its top's: packs, the
 * alternates, `info/exclude` and `info/attributes`. The 256 directories of loose objects, and what
 * they hold, are not followed one by one (a link among them is not seen): it would cost a probe
 * each on every git command.
 */
const OBJECT_DIRECTORIES = ["objects/info", "objects/pack", "info"];

/**
 * Why the repository directory `gitDir` (resolved, links not followed) holds files outside the
 * working directories, or undefined. Without a way to list directories, nothing is checked.
 */
export function repositoryLayoutVerdict(gitDir: string, context: PathContext): string | undefined {
  const { listDirectory, realPath } = context;
  if (listDirectory === undefined || realPath === undefined) return undefined;
  const names = listDirectory(gitDir);
  if (names === undefined) {
    return `${gitDir} is not a directory (a .git file names a repository elsewhere), not followed`;
  }
  const outside = (path: string): string | undefined => {
    const real = realPath(path);
    return isInsideWorkingDirectory(real, context)
      ? undefined
      : `the repository's ${path} leads to ${real}, outside the working directories`;
  };
  const top = outside(gitDir);
  if (top !== undefined) return top;
  for (const name of names) {
    const why = outside(posix.join(gitDir, name));
    if (why !== undefined) return why;
  }
  for (const dir of OBJECT_DIRECTORIES) {
    const entries = listDirectory(posix.join(gitDir, dir)) ?? [];
    if (dir === "objects/info" && entries.includes("alternates")) {
      return `the repository borrows objects from elsewhere (${gitDir}/objects/info/alternates), not followed`;
    }
    for (const name of entries) {
      const why = outside(posix.join(gitDir, dir, name));
      if (why !== undefined) return why;
    }
  }
  return undefined;
}
