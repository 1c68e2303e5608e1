import { posix } from "node:path";
import type { PathContext } from "./types.js";

/**
 * Resolves a path the way a shell or a file tool would see it, without touching the file system:
 * `~`, `~/…`, `$HOME` and `$HOME/…` become the home directory, `~user` a sibling of it, a relative
 * path is taken from the first working directory (or `/` when there is none), and `.`/`..` are
 * folded. Symbolic links are not resolved (the tools confine real paths when they run).
 */
export function resolvePath(path: string, context: PathContext, cwd?: string): string {
  let expanded = path;
  if (path === "~" || path.startsWith("~/")) expanded = context.homeDir + path.slice(1);
  else if (path === "$HOME" || path.startsWith("$HOME/"))
    expanded = context.homeDir + path.slice(5);
  else if (path.startsWith("~"))
    expanded = posix.join(posix.dirname(context.homeDir), path.slice(1));
  const first = cwd ?? context.workingDirectories[0];
  const base = first !== undefined && posix.isAbsolute(first) ? first : "/";
  return posix.resolve(base, expanded);
}

/** A path as written, resolved as written (`path`), and where it really leads (`real`). */
export interface Located {
  written: string;
  path: string;
  real: string;
}

/** Resolves `written` from `cwd` (default: the first working directory), then follows its links. */
export function locate(written: string, context: PathContext, cwd?: string): Located {
  const path = resolvePath(written, context, cwd);
  return { written, path, real: context.realPath?.(path) ?? path };
}

/** Whether `path` is `dir` or below it; both must be absolute and resolved. */
export function isInside(path: string, dir: string): boolean {
  const root = posix.normalize(dir).replace(/\/+$/, "");
  if (root === "") return true;
  return path === root || path.startsWith(`${root}/`);
}

/** Whether `path` is inside one of the working directories. */
export function isInsideWorkingDirectory(path: string, context: PathContext): boolean {
  return context.workingDirectories.some((dir) => isInside(path, dir));
}

/** Whether a path is only known once a variable is expanded (`$HOME` itself is known). */
export function dependsOnVariable(word: string): boolean {
  return word.replace(/^\$HOME(?=\/|$)/, "").includes("$");
}
