import { stat, realpath } from "node:fs/promises";
import { basename, dirname, isAbsolute, join } from "node:path";
import { glob } from "tinyglobby";
import { globTooComplex } from "../permissions/index.js";
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

/**
 * Why a glob pattern may not be used (absolute, a `..` segment, or too complex to match quickly:
 * see `globTooComplex`), or null when it is fine.
 */
export function patternError(pattern: string): string | null {
  if (isAbsolute(pattern)) {
    return `The pattern ${JSON.stringify(pattern)} is absolute; give it relative to \`path\`.`;
  }
  if (pattern.split(/[/\\{},]/).includes("..")) {
    return `The pattern ${JSON.stringify(pattern)} contains "..": set \`path\` to search elsewhere.`;
  }
  const complex = globTooComplex(pattern);
  if (complex !== undefined) return `The pattern ${JSON.stringify(pattern)} ${complex}.`;
  return null;
}

/** What a search lists: the files, and how many each permission rule kept out (by the rule). */
export interface ListedFiles {
  files: string[];
  withheld: Map<string, number>;
}

/**
 * The regular files under `root` matching the glob `patterns` (relative to `root`; dot files
 * included), as absolute paths in no particular order. Symbolic links are neither listed nor
 * followed (as ripgrep does by default); a directory reached through a symlink that a pattern names
 * is kept only when its real path lies inside the working directories. `node_modules` and `.git`
 * are skipped unless a pattern names them; so is a file a deny or ask rule keeps from being read
 * (`readRule`), counted in `withheld`. Rejects when `signal` aborts.
 */
export async function listFiles(
  root: string,
  patterns: readonly string[],
  workingDirectories: readonly string[],
  signal: AbortSignal,
  readRule?: (path: string, real: string) => string | undefined,
): Promise<ListedFiles> {
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
    extglob: false,
    ignore,
    signal,
  });
  const allowed = await realWorkingDirectories(workingDirectories);
  // Each directory's real path when it lies inside the working directories.
  const realDirs = new Map<string, Promise<string | undefined>>();
  const realInside = (dir: string) => {
    let known = realDirs.get(dir);
    if (known === undefined) {
      known = realpath(dir).then(
        (real) => (isInside(real, allowed) ? real : undefined),
        () => undefined,
      );
      realDirs.set(dir, known);
    }
    return known;
  };
  const reals = await Promise.all(found.map((file) => realInside(dirname(file))));
  const files: string[] = [];
  const withheld = new Map<string, number>();
  found.forEach((file, i) => {
    const dir = reals[i];
    if (dir === undefined) return;
    const rule = readRule?.(file, join(dir, basename(file)));
    if (rule === undefined) files.push(file);
    else withheld.set(rule, (withheld.get(rule) ?? 0) + 1);
  });
  return { files, withheld };
}

/** A line that says how many files the permission rules kept out of a search; empty when none. */
export function withheldNote(withheld: ReadonlyMap<string, number>): string {
  if (withheld.size === 0) return "";
  const count = [...withheld.values()].reduce((a, b) => a + b, 0);
  const rules = [...withheld.keys()].join(", ");
  const files = count === 1 ? "1 file" : `${count} files`;
  return `\n(left out ${files} covered by the permission rules ${rules})`;
}
