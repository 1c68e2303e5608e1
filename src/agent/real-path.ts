import { readdirSync, realpathSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/**
 * Where an absolute path really leads: every symbolic link resolved, and `..` taken as the system
 * takes it (the parent of where the path so far leads); for a path that does not exist yet, its
 * nearest existing ancestor's real path joined with the missing segments. A path that cannot be
 * resolved (a loop, no permission) is returned as it is.
 */
export function realPathOf(path: string): string {
  const missing: string[] = [];
  let current = path;
  for (;;) {
    try {
      return join(realpathSync.native(current), ...missing);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR") return path;
    }
    const parent = dirname(current);
    if (parent === current) return path;
    missing.unshift(basename(current));
    current = parent;
  }
}

/** The names in the directory at `path` (links followed), or undefined when it cannot be listed. */
export function listDirectoryOf(path: string): readonly string[] | undefined {
  try {
    return readdirSync(path);
  } catch {
    return undefined;
  }
}
