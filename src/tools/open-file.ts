import { constants } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";

export type Opened =
  { ok: true; file: FileHandle; size: number; mtimeMs: number } | { ok: false; error: string };

/** Flags for reading; O_NONBLOCK keeps a FIFO from blocking the open. */
export const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
/** Flags for replacing a file's content, creating it when missing. */
export const WRITE_FLAGS =
  constants.O_WRONLY |
  constants.O_CREAT |
  constants.O_TRUNC |
  constants.O_NOFOLLOW |
  constants.O_NONBLOCK;

/**
 * Opens `realPath` (a path already confined by `resolveInside`) without following a symlink in its
 * last component, and checks that it is a regular file. `shown` names the file in error messages.
 * The caller closes the handle.
 */
export async function openRegularFile(
  realPath: string,
  flags: number,
  shown: string,
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
