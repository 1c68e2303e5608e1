import { readdir, readFile } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";

/** How long a process group gets between SIGTERM and SIGKILL. */
export const KILL_GRACE_MS = 1000;
const POLL_MS = 10;
/** How often, at most, /proc is scanned for members that are zombies only. */
const SCAN_EVERY_MS = 100;

/** Sends `signal` to every process of group `pgid`; false when the group no longer exists. */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * Ends process group `pgid`: SIGTERM, then SIGKILL to whatever is left after `graceMs`. Resolves
 * once no member is running. Zombies (exited, not yet reaped — orphans stay so where PID 1 does not
 * reap, as in a container without an init) are not running; on Linux they are told apart through
 * /proc, elsewhere they hold the call until shortly after SIGKILL.
 */
export async function killGroup(pgid: number, graceMs = KILL_GRACE_MS): Promise<void> {
  if (!signalGroup(pgid, "SIGTERM")) return;
  if (await waitStopped(pgid, graceMs)) return;
  signalGroup(pgid, "SIGKILL");
  await waitStopped(pgid, Math.min(graceMs, 100));
}

/** Polls until no member of group `pgid` is running or `ms` have passed; true when none is. */
async function waitStopped(pgid: number, ms: number): Promise<boolean> {
  let nextScan = POLL_MS * 2;
  for (let waited = 0; ; waited += POLL_MS) {
    if (!signalGroup(pgid, 0)) return true;
    if (waited >= nextScan) {
      nextScan = waited + SCAN_EVERY_MS;
      if ((await runningMembers(pgid)) === 0) return true;
    }
    if (waited >= ms) return false;
    await sleep(POLL_MS);
  }
}

/** The members of group `pgid` that are not zombies, from /proc; Infinity when /proc is unreadable. */
async function runningMembers(pgid: number): Promise<number> {
  let entries: string[];
  try {
    entries = await readdir("/proc");
  } catch {
    return Infinity;
  }
  let running = 0;
  await Promise.all(
    entries
      .filter((name) => /^\d+$/.test(name))
      .map(async (pid) => {
        const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
        // "pid (comm) state ppid pgrp …"; comm may contain spaces and parentheses.
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        if (Number(fields[2]) === pgid && fields[0] !== "Z") running++;
      }),
  );
  return running;
}
