import { readFile } from "node:fs/promises";
import { type ParkwayClient, ParkwayClientError } from "../../src/client/index.js";
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import { VISIBLE_AHEAD } from "../../src/session/seq-epoch.js";
import { countLines } from "./storage-fault-ledger.js";

/**
 * Checks shared by the SIGKILL harnesses (one node, several nodes): what a client may retry, and
 * the promises checked over what was stored once the faults are over.
 */

/** An error a client retries: the server went away or could not serve the call just now. */
export const transient = (err: unknown): boolean =>
  !(err instanceof ParkwayClientError) ||
  ["UNAVAILABLE", "CANCELLED", "UNKNOWN", "INTERNAL", "DEADLINE_EXCEEDED"].includes(err.codeName);

/**
 * No tool ran twice (each run appends its message's tag, a line of its own, to `effects`) and
 * every answer acknowledged as completed ran its tool once. Returns the number of effects.
 */
export async function checkEffects(
  effects: string,
  completed: ReadonlySet<string>,
  violations: string[],
): Promise<number> {
  const counts = countLines(await readFile(effects, "utf8").catch(() => ""));
  for (const [line, count] of counts) {
    if (count > 1) violations.push(`tool ran ${count} times for ${line}`);
  }
  for (const tag of completed) {
    if (counts.get(tag) !== 1) violations.push(`completed ${tag} has no side effect`);
  }
  return [...counts.values()].reduce((a, b) => a + b, 0);
}

/** More crashes than any harness causes in one run (its long mode: 20 SIGKILLs, 50 full disks). */
const MOST_CRASHES = 64;

/**
 * Whether a stored log may go on at `seq` where `expected` was due: after crashes a session skips,
 * per crash, `VISIBLE_AHEAD` seqs when stored as running and one when stored as idle (see
 * `SeqEpoch`); any other gap is a violation.
 */
export function crashSkip(expected: number, seq: number): boolean {
  const gap = seq - expected;
  return gap > 0 && (gap % VISIBLE_AHEAD === 0 || gap <= MOST_CRASHES);
}

/**
 * Every event of a session's log, read by attaching from the start through `client`: seqs 1 to
 * `lastSeq`, each once and in order (a gap other than a crash's skip, or a duplicate, is a
 * violation, and ends the reading).
 */
export async function readEventLog(
  client: ParkwayClient,
  sessionId: string,
  lastSeq: number,
  violations: string[],
): Promise<ServerEvent[]> {
  const events: ServerEvent[] = [];
  const chat = await client.attach(sessionId, { reconnectForMs: 0 });
  try {
    let expected = 1;
    while (expected <= lastSeq) {
      const event = await chat.next(AbortSignal.timeout(10_000));
      if (!event) {
        violations.push(`session ${sessionId}: the event log ends before seq ${expected}`);
        break;
      }
      if (event.seq === 0) continue;
      if (event.seq !== expected && !crashSkip(expected, event.seq)) {
        violations.push(`session ${sessionId}: seq ${event.seq} where ${expected} was due`);
        break;
      }
      events.push(event);
      expected = event.seq + 1;
    }
  } finally {
    chat.close();
  }
  return events;
}
