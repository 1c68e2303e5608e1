import { setTimeout as sleep } from "node:timers/promises";

/** How long a process group gets between SIGTERM and SIGKILL. */
export const KILL_GRACE_MS = 1000;
const POLL_MS = 10;

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
 * once the group is empty, or shortly after SIGKILL when members linger. Zombies count as members
 * until reaped: where PID 1 does not reap orphans (a container without an init), a group whose
 * background processes outlived bash takes the whole grace to resolve.
 */
export async function killGroup(pgid: number, graceMs = KILL_GRACE_MS): Promise<void> {
  if (!signalGroup(pgid, "SIGTERM")) return;
  if (await waitEmpty(pgid, graceMs)) return;
  signalGroup(pgid, "SIGKILL");
  await waitEmpty(pgid, Math.min(graceMs, 100));
}

/** Polls until group `pgid` is empty or `ms` have passed; true when it emptied. */
async function waitEmpty(pgid: number, ms: number): Promise<boolean> {
  for (let waited = 0; waited < ms; waited += POLL_MS) {
    if (!signalGroup(pgid, 0)) return true;
    await sleep(POLL_MS);
  }
  return !signalGroup(pgid, 0);
}
