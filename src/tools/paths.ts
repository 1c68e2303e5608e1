import { lstat, readlink, realpath } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";

/** Where a requested path really is, or why it may not be used. */
export type Resolved =
  | {
      ok: true;
      /** The requested path, made absolute and normalised (for messages). */
      requested: string;
      /** The real path: every symlink resolved; for a path that does not exist yet, its nearest
       *  existing ancestor's real path joined with the missing segments. Use this for I/O. */
      path: string;
      /** Whether something exists at the path. */
      exists: boolean;
    }
  | { ok: false; error: string };

/** Symlink hops followed before giving up, as the kernel's ELOOP limit. */
const MAX_LINK_HOPS = 40;

/** True when `real` (an absolute, resolved path) is one of `dirs` or lies below one of them. */
export function isInside(real: string, dirs: readonly string[]): boolean {
  return dirs.some((dir) => {
    const rel = relative(dir, real);
    return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
  });
}

/** The real paths of the working directories that exist, in order. */
export async function realWorkingDirectories(dirs: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const dir of dirs) {
    try {
      out.push(await realpath(dir));
    } catch {
      // A working directory that does not exist confines nothing.
    }
  }
  return out;
}

/**
 * Confines `path` to the working directories. A relative path is resolved against the first working
 * directory (`~` is not expanded); `..` segments are normalised; then every symlink is resolved (for a path that does not
 * exist yet, those of its nearest existing ancestor, and a dangling symlink is followed to where it
 * points). The result is accepted only when that real path lies inside one of the (real) working
 * directories, so `..` escapes and symlinks pointing out are refused while symlinks within are fine.
 *
 * The check holds at call time; callers open the returned real path with O_NOFOLLOW so that a final
 * component swapped for a symlink afterwards is refused rather than followed.
 */
export async function resolveInside(
  path: string,
  workingDirectories: readonly string[],
): Promise<Resolved> {
  const dirs = await realWorkingDirectories(workingDirectories);
  const first = dirs[0];
  if (first === undefined) return { ok: false, error: "There are no working directories." };
  if (path.includes("\0")) return { ok: false, error: "The path contains a NUL byte." };
  const requested = resolve(first, path);
  const outside = (real: string) =>
    real === requested
      ? `${requested} is outside the working directories: ${dirs.join(", ")}`
      : `${requested} resolves to ${real}, which is outside the working directories: ${dirs.join(", ")}`;

  let current = requested;
  const missing: string[] = [];
  let hops = 0;
  for (;;) {
    try {
      const real = join(await realpath(current), ...missing);
      if (!isInside(real, dirs)) return { ok: false, error: outside(real) };
      return { ok: true, requested, path: real, exists: missing.length === 0 };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ELOOP") return { ok: false, error: `${requested}: too many symbolic links.` };
      if (code === "ENOTDIR") {
        return { ok: false, error: `${requested}: a parent of this path is not a directory.` };
      }
      if (code !== "ENOENT") {
        return { ok: false, error: `${requested}: ${(err as Error).message}` };
      }
    }
    // `current` does not resolve: either it is missing, or it is a dangling symlink to follow.
    const link = await readlinkOrNull(current);
    if (link !== null) {
      if (++hops > MAX_LINK_HOPS) {
        return { ok: false, error: `${requested}: too many symbolic links.` };
      }
      current = resolve(dirname(current), link);
      continue;
    }
    const parent = dirname(current);
    if (parent === current) return { ok: false, error: outside(requested) };
    missing.unshift(basename(current));
    current = parent;
  }
}

/** The target of a symlink, or null when `path` is not one (or does not exist). */
async function readlinkOrNull(path: string): Promise<string | null> {
  try {
    if (!(await lstat(path)).isSymbolicLink()) return null;
    return await readlink(path);
  } catch {
    return null;
  }
}
