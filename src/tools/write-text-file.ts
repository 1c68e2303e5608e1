import { dirname } from "node:path";
import { makeDirectory } from "../common/make-directory.js";
import { openRegularFile, WRITE_FLAGS, type FileTool } from "./open-file.js";

/**
 * Replaces the content of `realPath` (already confined by `resolveInside`), creating the file and
 * its missing parent directories. Resolves with an error message, or null on success. The last
 * component is opened with O_NOFOLLOW and must be a regular file with one hard link (see
 * `openRegularFile`); the file is truncated only after that check, so a refused file is left as it
 * was. `tool` names the tool writing, for that refusal.
 */
export async function writeTextFile(
  realPath: string,
  content: string,
  shown: string,
  tool: FileTool,
): Promise<string | null> {
  try {
    await makeDirectory(dirname(realPath));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EEXIST" || code === "ENOTDIR") {
      return `Cannot create ${shown}: a parent of it is not a directory.`;
    }
    return `Cannot create the directory of ${shown}: ${(err as Error).message}`;
  }
  const opened = await openRegularFile(realPath, WRITE_FLAGS, shown, tool);
  if (!opened.ok) return opened.error;
  try {
    await opened.file.truncate(0);
    await opened.file.writeFile(content, "utf8");
    return null;
  } catch (err) {
    return `Could not write ${shown}: ${(err as Error).message}`;
  } finally {
    await opened.file.close();
  }
}
