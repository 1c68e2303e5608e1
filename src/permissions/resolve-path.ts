import { posix } from "node:path";
import type { PathContext } from "./types.js";

/**
 * Resolves a path the way a shell or a file tool would see it, without touching the file system:
 * `~`, `~/…`, `$HOME` and `$HOME/…` become the home directory, `~user` a sibling of it, a relative
 * path is taken from the first working directory (or `/` when there is none), and `.`/`..` are
 * folded. Symbolic links are not resolved (the tools confine real paths when they run).
 */
export function resolvePath(path: string, context: PathContext, cwd?: string): string {
  return posix.resolve(unfolded(path, context, cwd));
}

/** `path` made absolute as `resolvePath` does, its `.` and `..` segments left as written. */
export function unfolded(path: string, context: PathContext, cwd?: string): string {
  let expanded = path;
  if (path === "~" || path.startsWith("~/")) expanded = context.homeDir + path.slice(1);
  else if (path === "$HOME" || path.startsWith("$HOME/"))
    expanded = context.homeDir + path.slice(5);
  else if (path.startsWith("~"))
    expanded = posix.join(posix.dirname(context.homeDir), path.slice(1));
  if (posix.isAbsolute(expanded)) return expanded;
  const first = cwd ?? context.workingDirectories[0];
  const base = first !== undefined && posix.isAbsolute(first) ? first : "/";
  return `${base}/${expanded}`;
}

/**
 * A path as written, resolved as written (`path`), and where it really leads (`real`); `below`: a
 * directory whose whole tree is read (`grep -r`, `find`, `du`).
 */
export interface Located {
  written: string;
  path: string;
  real: string;
  below?: true;
}

/**
 * Resolves `written` from `cwd` (default: the first working directory), then follows its links.
 * With `physical` (a path a program opens through the system, as a shell command's are) where it
 * leads is found with its `..` segments as written: the system takes `link/..` to the parent of
 * the link's target, not to the directory that holds the link. The file tools fold `..` first,
 * and open what the folded path leads to.
 */
export function locate(
  written: string,
  context: PathContext,
  cwd?: string,
  physical = false,
): Located {
  const path = resolvePath(written, context, cwd);
  if (!context.realPath) return { written, path, real: path };
  // The links under /proc/self and /dev/fd lead into the process that opens them: for a shell
  // command that is bash, not the server that judges it, so they are taken as written.
  if (physical && /^\/(proc|dev\/fd)(\/|$)/.test(path)) return { written, path, real: path };
  const raw = physical ? unfolded(written, context, cwd) : path;
  return { written, path, real: context.realPath(/(^|\/)\.\.(\/|$)/.test(raw) ? raw : path) };
}

/**
 * Whether something is at `path` (from `cwd`, default the first working directory), where it leads;
 * undefined when directories cannot be listed.
 */
export function existsAt(path: string, context: PathContext, cwd?: string): boolean | undefined {
  if (context.listDirectory === undefined) return undefined;
  const real = locate(path, context, cwd, true).real;
  if (real === "/") return true;
  return context.listDirectory(posix.dirname(real))?.includes(posix.basename(real)) === true;
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
