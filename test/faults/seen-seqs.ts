import type { ParkwayClient } from "../../src/client/index.js";
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import { checkJumps, StreamWatchers, type WatchedSession } from "./stream-watchers.js";

/**
 * A Chat stream on each session of the SIGKILL harness, attached again after every restart from
 * the last seq it saw, and the check of what they saw against the stored logs: a client never sees
 * one seq with two different events, though the model's stream reaches it before it is written.
 */
export class SeenSeqs {
  private readonly sessions: WatchedSession[] = [];
  private readonly counts = { streamed: 0 };
  private readonly watchers: StreamWatchers;

  constructor(private readonly violations: string[]) {
    this.watchers = new StreamWatchers({
      violation: (text) => violations.push(text),
      counts: this.counts,
    });
  }

  /** Watches a new session. */
  async add(client: ParkwayClient, index: number, id: string): Promise<void> {
    const s: WatchedSession = { index, id, watchedSeq: 0, seen: new Map(), jumps: [] };
    this.sessions.push(s);
    await this.watchers.watch(client, s);
  }

  /** After a restart: ends what is left of the old streams and attaches every session again. */
  async rewatch(client: ParkwayClient): Promise<void> {
    await this.watchers.closeAll();
    for (const s of this.sessions) await this.watchers.watch(client, s);
  }

  /**
   * Ends the streams and compares what they saw with the stored logs (`logs`: session id → its
   * events): every seq seen that is stored holds the event seen. Returns how many events the
   * streams received, and how many they saw that a crash lost before they were written.
   */
  async check(
    logs: ReadonlyMap<string, ServerEvent[]>,
  ): Promise<{ streamed: number; lost: number }> {
    await this.watchers.closeAll();
    let lost = 0;
    for (const s of this.sessions) {
      const stored = new Map((logs.get(s.id) ?? []).map((e) => [e.seq, e.id]));
      checkJumps(s, new Set(stored.keys()), (text) => this.violations.push(text));
      for (const [seq, id] of s.seen) {
        const kept = stored.get(seq);
        if (kept === undefined) lost++;
        else if (kept !== id) {
          this.violations.push(
            `session s${s.index}: a stream saw ${id} at seq ${seq}, stored ${kept}`,
          );
        }
      }
    }
    return { streamed: this.counts.streamed, lost };
  }
}
