import { spawn } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";

/** How long a process group gets between SIGTERM and SIGKILL. */
export const KILL_GRACE_MS = 1000;
const POLL_MS = 10;
/** How long, at most, to wait for SIGKILLed members to be gone (a large group takes a moment). */
const AFTER_KILL_MS = 1000;
/** How often, at most, /proc is scanned for members that are zombies only. */
const SCAN_EVERY_MS = 100;
/** /proc entries read at once when counting a group. */
const SCAN_BATCH = 64;

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
 * A watcher that kills a process group should this process die first, even SIGKILLed. It runs
 * outside the group and reads its stdin, a pipe this process holds: `arm` tells it the group,
 * `release` tells it to go quietly (once the group is done); when the pipe closes without that
 * word (this process is gone), it kills the group.
 */
export interface GroupGuard {
  /** Tells the watcher the group; `armed` is called once the watcher has been told. */
  arm(pgid: number, armed: () => void): void;
  release(): void;
}

/** Starts a watcher (see `GroupGuard`), before the group it will watch exists. */
export function guardGroup(): GroupGuard {
  const guard = spawn("bash", ["-c", 'read -r g || exit 0; read -r _ || kill -KILL -- "-$g"'], {
    stdio: ["pipe", "ignore", "ignore"],
  });
  guard.on("error", () => undefined);
  guard.stdin.on("error", () => undefined);
  return {
    arm: (pgid, armed) => void guard.stdin.write(`${pgid}\n`, () => armed()),
    release: () => void guard.stdin.end("done\n"),
  };
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
  await waitStopped(pgid, AFTER_KILL_MS);
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

/**
 * The members of group `pgid` that are not zombies, from /proc; Infinity when /proc is unreadable.
 * With `stopAbove`, counting stops once more than that many are found (a growing fork bomb is
 * judged without reading all of it).
 */
async function runningMembers(pgid: number, stopAbove = Infinity): Promise<number> {
  let entries: string[];
  try {
    entries = await readdir("/proc");
  } catch {
    return Infinity;
  }
  const pids = entries.filter((name) => /^\d+$/.test(name));
  let running = 0;
  for (let i = 0; i < pids.length && running <= stopAbove; i += SCAN_BATCH) {
    const states = await Promise.all(
      pids.slice(i, i + SCAN_BATCH).map(async (pid) => {
        const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
        // "pid (comm) state ppid pgrp …"; comm may contain spaces and parentheses.
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        return Number(fields[2]) === pgid && fields[0] !== "Z";
      }),
    );
    running += states.filter(Boolean).length;
  }
  return running;
}

/**
 * Watches how many processes of group `pgid` are running, every `everyMs`, and calls `onExceeded`
 * once when more than `max` are. Contains fork bombs without a user-wide RLIMIT_NPROC (which would
 * count, and starve, every process of the server's user, and does not bind root): the group can
 * outgrow `max` only by what it forks between two counts before it is killed. Returns a function
 * that stops watching.
 */
export function watchGroupSize(
  pgid: number,
  max: number,
  onExceeded: (running: number) => void,
  everyMs = 50,
): () => void {
  let scanning = false;
  let done = false;
  const timer = setInterval(() => {
    if (scanning || done) return;
    scanning = true;
    void runningMembers(pgid, max).then((running) => {
      scanning = false;
      if (done || running === Infinity || running <= max) return;
      done = true;
      clearInterval(timer);
      onExceeded(running);
    });
  }, everyMs);
  return () => {
    done = true;
    clearInterval(timer);
  };
}
