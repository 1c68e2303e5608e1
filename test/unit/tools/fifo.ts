import { execFile } from "node:child_process";
import { promisify } from "node:util";

/** Creates a named pipe (Node has no mkfifo of its own). */
export async function mkfifo(path: string): Promise<void> {
  await promisify(execFile)("mkfifo", [path]);
}
