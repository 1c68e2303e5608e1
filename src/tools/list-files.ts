import { stat, realpath } from "node:fs/promises";
import { dirname, isAbsolute } from "node:path";
import { glob } from "tinyglobby";
import { isInside, realWorkingDirectories, resolveInside } from "./paths.js";

/** Directories not searched unless a pattern names them as a path segment. */
const SKIPPED_DIRS = ["node_modules", ".git"];

export type SearchRoot =
  { ok: true; path: string; shown: string; isFile: boolean } | { ok: false; error: string };

/**
 * The directory a Glob or Grep searches: `path` (default: the first working directory), confined to
 * the working directories. With `allowFile`, a regular file is accepted too.
 */
export async function searchRoot(
  path: string | undefined,
  workingDirectories: readonly string[],
  allowFile: boolean,
): Promise<SearchRoot> {
  const where = await resolveInside(path ?? ".", workingDirectories);
  if (!where.ok) return where;
  if (!where.exists) return { ok: false, error: `Path does not exist: ${where.requested}` };
  let stats;
  try {
    stats = await stat(where.path);
  } catch (err) {
    return { ok: false, error: `${where.requested}: ${(err as Error).message}` };
  }
  if (stats.isDirectory()) {
    return { ok: true, path: where.path, shown: where.requested, isFile: false };
  }
  if (allowFile && stats.isFile()) {
    return { ok: true, path: where.path, shown: where.requested, isFile: true };
  }
  return { ok: false, error: `${where.requested} is not a directory.` };
}

/** Why a glob pattern may not be used (absolute, or a `..` segment), or null when it is fine. */
export function patternError(pattern: string): string | null {
  if (isAbsolute(pattern)) {
    return `The pattern ${JSON.stringify(pattern)} is absolute; give it relative to \`path\`.`;
  }
  if (pattern.split(/[/\\{},]/).includes("..")) {
    return `The pattern ${JSON.stringify(pattern)} contains "..": set \`path\` to search elsewhere.`;
  }
  return null;
}

/**
 * The regular files under `root` matching the glob `patterns` (relative to `root`; dot files
 * included), as absolute paths in no particular order. Symbolic links are neither listed nor
 * followed (as ripgrep does by default); a directory reached through a symlink that a pattern names
 * is kept only when its real path lies inside the working directories. `node_modules` and `.git`
 * are skipped unless a pattern names them. Rejects when `signal` aborts.
 */
export async function listFiles(
  root: string,
  patterns: readonly string[],
  workingDirectories: readonly string[],
  signal: AbortSignal,
): Promise<string[]> {
  const ignore = SKIPPED_DIRS.filter(
    (dir) => !patterns.some((p) => p.split(/[/\\]/).includes(dir)),
  ).map((dir) => `**/${dir}/**`);
  const found = await glob([...patterns], {
    cwd: root,
    absolute: true,
    dot: true,
    onlyFiles: true,
    followSymbolicLinks: false,
    expandDirectories: false,
    ignore,
    signal,
  });
  const allowed = await realWorkingDirectories(workingDirectories);
  const dirInside = new Map<string, Promise<boolean>>();
  const inside = (dir: string) => {
    let known = dirInside.get(dir);
    if (known === undefined) {
      known = realpath(dir).then(
        (real) => isInside(real, allowed),
        () => false,
      );
      dirInside.set(dir, known);
    }
    return known;
  };
  const keep = await Promise.all(found.map((file) => inside(dirname(file))));
  return found.filter((_, i) => keep[i] === true);
}
