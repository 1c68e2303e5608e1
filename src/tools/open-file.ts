import { constants } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";

export type Opened =
  | { ok: true; file: FileHandle; size: number; mtimeMs: number }
  | {
      ok: false;
      error: string;
      /** Set when the file was refused for having more than one hard link. */
      hardLinked?: true;
    };

/** The tools that open files, each with how it says it refuses a hard-linked file. */
const REFUSALS = {
  Read: "Read does not open it",
  Write: "Write does not write to it",
  Edit: "Edit does not edit it",
  Grep: "Grep does not search it",
} as const;

/** The tool opening a file; it is named when a hard-linked file is refused. */
export type FileTool = keyof typeof REFUSALS;

/** Flags for reading; O_NONBLOCK keeps a FIFO from blocking the open. */
export const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
/**
 * Flags for replacing a file's content, creating it when missing. There is no O_TRUNC: the file is
 * checked first, then truncated through the handle.
 */
export const WRITE_FLAGS =
  constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * Opens `realPath` (a path already confined by `resolveInside`) without following a symlink in its
 * last component, and checks that it is a regular file with exactly one hard link. Another hard link
 * may lie outside the working directories and cannot be found cheaply, so such a file is refused
 * (`hardLinked` set) and nothing is done to it. `shown` names the file in error messages and `tool`
 * the tool refusing it. The caller closes the handle.
 */
export async function openRegularFile(
  realPath: string,
  flags: number,
  shown: string,
  tool: FileTool,
): Promise<Opened> {
  let file: FileHandle;
  try {
    file = await open(realPath, flags, 0o666);
  } catch (err) {
    return { ok: false, error: openError(err, shown) };
  }
  try {
    const stats = await file.stat();
    if (stats.isDirectory()) {
      await file.close();
      return { ok: false, error: `${shown} is a directory, not a file.` };
    }
    if (!stats.isFile()) {
      await file.close();
      return { ok: false, error: `${shown} is not a regular file.` };
    }
    if (stats.nlink > 1) {
      await file.close();
      return {
        ok: false,
        error: `${shown} has ${stats.nlink} hard links; a hard-linked file may also be reachable from outside the working directories, so ${REFUSALS[tool]}.`,
        hardLinked: true,
      };
    }
    return { ok: true, file, size: stats.size, mtimeMs: stats.mtimeMs };
  } catch (err) {
    await file.close();
    return { ok: false, error: `${shown}: ${(err as Error).message}` };
  }
}

function openError(err: unknown, shown: string): string {
  switch ((err as NodeJS.ErrnoException).code) {
    case "ENOENT":
      return `File does not exist: ${shown}`;
    case "EISDIR":
      return `${shown} is a directory, not a file.`;
    case "ELOOP":
      return `${shown} changed into a symbolic link; it was not opened.`;
    case "EACCES":
    case "EPERM":
      return `Permission denied: ${shown}`;
    case "ENXIO":
      return `${shown} is not a regular file.`;
    default:
      return `${shown}: ${(err as Error).message}`;
  }
}
