import { readFile } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { type ParkwayClient, ParkwayClientError } from "../../src/client/index.js";
import { confirmInput } from "../helpers/confirm-input.js";
import { checkEffects, readEventLog, transient } from "./fault-checks.js";
import type { WitnessedCall } from "./model-witness.js";
import type { NodeLife } from "./node-cluster.js";
import { checkOverlaps, type OverlapCounts } from "./reply-overlaps.js";
import { checkJumps, type WatchedSession } from "./stream-watchers.js";

/** A session as its driver knows it. */
export interface DrivenSession extends WatchedSession {
  /** Messages sent so far: numbers tags and request ids. */
  n: number;
  /** The call parked by an acknowledged reply, not yet answered, with its message's tag. */
  parked: { callId: string; tag: string } | undefined;
  /** Every call id parked in the session: the server names each call afresh. */
  parkedIds: Set<string>;
  /** Answers acknowledged. */
  confirmed: { callId: string; tag: string }[];
}

/** What the checks need. */
export interface FinalCheck {
  /** A random node's client. */
  anyClient: () => ParkwayClient;
  sessions: readonly DrivenSession[];
  /** Tags whose answer was acknowledged with the reply completed. */
  completed: ReadonlySet<string>;
  effects: string;
  runs: string;
  lives: readonly NodeLife[];
  /** The model calls, as the model saw them. */
  modelCalls: readonly WitnessedCall[];
  /** When PostgreSQL was crashed (ms since the epoch). */
  postgresCrashes: readonly number[];
  violations: string[];
}

/** What the final checks counted. */
export interface FinalCounts extends OverlapCounts {
  effects: number;
  /** Events the streams saw that are not stored: shown ahead of a write that a node's death lost. */
  lost: number;
  /** Gaps a stream crossed after events it saw were lost (see `checkJumps`). */
  crossed: number;
}

/** `f` on random nodes until it does not fail with a transient error (20 tries at most). */
async function anyNode<T>(check: FinalCheck, f: (c: ParkwayClient) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await f(check.anyClient());
    } catch (err) {
      if (!transient(err) || attempt >= 20) throw err;
      await sleep(250);
    }
  }
}

/**
 * When the event with this id was made (an id starts with its time: 9 base36 characters of
 * milliseconds), relative to the first PostgreSQL crash after it.
 */
function crashAfter(eventId: string, crashes: readonly number[]): string {
  const made = Number.parseInt(eventId.slice(eventId.indexOf("_") + 1).slice(0, 9), 36);
  const crash = crashes.find((c) => c >= made);
  return crash === undefined
    ? " (no PostgreSQL crash after it)"
    : ` (made ${crash - made} ms before a PostgreSQL crash)`;
}

const codeOf = (err: unknown) => (err instanceof ParkwayClientError ? err.codeName : String(err));

/**
 * The promises, checked over what the cluster stored once the faults are over: every tool ran at
 * most once, and once for every completed answer; every acknowledged park is still parked and its
 * tool did not run; no answered call is parked again or was asked twice; each session's event log
 * is gap-free, holds every event its stream saw, and explains every gap its stream crossed; an answer sent again is refused; and no two
 * nodes ran one reply at once (see `checkOverlaps`).
 */
export async function finalCheck(check: FinalCheck): Promise<FinalCounts> {
  const { violations } = check;
  const effects = await checkEffects(check.effects, check.completed, violations);
  const effectLines = new Set((await readFile(check.effects, "utf8").catch(() => "")).split("\n"));
  let lost = 0;
  let crossed = 0;
  for (const s of check.sessions) {
    const name = `session s${s.index} (${s.id})`;
    const state = await anyNode(check, (c) => c.getSession(s.id));
    const pending = new Set(state.pendingToolCalls.map((c) => c.id));
    if (s.parked && !pending.has(s.parked.callId)) {
      violations.push(`${name}: acknowledged park of ${s.parked.callId} (${s.parked.tag}) is gone`);
    }
    if (s.parked && effectLines.has(s.parked.tag)) {
      violations.push(`${name}: ${s.parked.tag} is parked, but its tool ran`);
    }
    for (const c of s.confirmed) {
      if (pending.has(c.callId)) violations.push(`${name}: answered ${c.callId} is parked again`);
    }
    const events = await anyNode(check, (c) => readEventLog(c, s.id, state.lastSeq, violations));
    const asked = new Map<string, number>();
    const replaced: string[] = [];
    for (const e of events) {
      const seen = s.seen.get(e.seq);
      if (seen !== undefined && seen !== e.id) {
        replaced.push(
          `${e.seq}: saw ${seen}${crashAfter(seen, check.postgresCrashes)}, stored ${e.id}`,
        );
      }
      if (e.event?.$case === "requireUserConfirm") {
        for (const call of e.event.value.toolCalls) {
          asked.set(call.id, (asked.get(call.id) ?? 0) + 1);
        }
      }
    }
    const stored = new Set(events.map((e) => e.seq));
    checkJumps(s, stored, (text) => violations.push(text));
    crossed += s.jumps.length;
    for (const seq of s.seen.keys()) if (!stored.has(seq)) lost++;
    if (replaced.length > 0) {
      violations.push(
        `${name}: ${replaced.length} events its stream saw were replaced in the log (${replaced.slice(0, 3).join("; ")})`,
      );
    }
    if (s.watchedSeq > state.lastSeq) {
      violations.push(
        `${name}: its stream saw seq ${s.watchedSeq}, the log ends at ${state.lastSeq}`,
      );
    }
    for (const [id, times] of asked) {
      if (times > 1) violations.push(`${name}: ${id} was asked for ${times} times`);
    }
    const last = s.confirmed.at(-1);
    if (last) {
      // Sent again without its request id, an answer is refused: it was applied once.
      const again = await anyNode(check, (c) =>
        c.reply({ sessionId: s.id, input: confirmInput(last.callId) }).then(
          () => "OK",
          (err: unknown) => {
            if (transient(err)) throw err;
            return codeOf(err);
          },
        ),
      );
      if (again !== "FAILED_PRECONDITION" && again !== "NOT_FOUND") {
        violations.push(`${name}: the answer of ${last.tag} sent again got ${again}`);
      }
    }
  }
  const runs = await readFile(check.runs, "utf8").catch(() => "");
  return {
    effects,
    lost,
    crossed,
    ...checkOverlaps(check.modelCalls, runs, check.lives, violations),
  };
}
