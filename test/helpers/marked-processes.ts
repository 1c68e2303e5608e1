import { readdirSync, readFileSync } from "node:fs";

/**
 * The processes (other than this one) whose environment holds `name=value`: every process a test
 * started inherits the marker its test file sets, unless it was given an environment of its own.
 * Reads /proc, so it finds nothing where there is none.
 */
export function markedProcesses(name: string, value: string): { pid: number; command: string }[] {
  const wanted = `${name}=${value}`;
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const found: { pid: number; command: string }[] = [];
  for (const entry of entries) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const environ = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
      if (!environ.includes(wanted)) continue;
      const command = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
      found.push({ pid, command });
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}
