import { posix } from "node:path";
import type { PathContext } from "./types.js";

/**
 * Resolves a path the way a shell or a file tool would see it, without touching the file system:
 * `~`, `~/…`, `$HOME` and `$HOME/…` become the home directory, `~user` a sibling of it, a relative
 * path is taken from the first working directory (or `/` when there is none), and `.`/`..` are
 * folded. Symbolic links are not resolved (the tools confine real paths when they run).
 */
export function resolvePath(path: string, context: PathContext): string {
  let expanded = path;
  if (path === "~" || path.startsWith("~/")) expanded = context.homeDir + path.slice(1);
  else if (path === "$HOME" || path.startsWith("$HOME/"))
    expanded = context.homeDir + path.slice(5);
  else if (path.startsWith("~"))
    expanded = posix.join(posix.dirname(context.homeDir), path.slice(1));
  const cwd = context.workingDirectories[0];
  const base = cwd !== undefined && posix.isAbsolute(cwd) ? cwd : "/";
  return posix.resolve(base, expanded);
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
