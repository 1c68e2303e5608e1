import type { ParkwayClient, ParkwaySession } from "../../src/client/index.js";
import { crashSkip } from "./fault-checks.js";

/** What a watcher needs of a session: where its stream is, and what it saw. */
export interface WatchedSession {
  /** The harness's number for it, in messages. */
  readonly index: number;
  readonly id: string;
  /** The last seq its Chat stream saw. */
  watchedSeq: number;
  /** The events its Chat stream saw (since the last check): seq → event id. */
  seen: Map<number, string>;
  /**
   * Where one stream went on past a gap that is not a crash's skip from the seq it saw last
   * (`[last seen, next seen]`): checked against the stored log (see `checkJumps`).
   */
  jumps: [number, number][];
  /** Not found after a restart (a violation): no longer watched. */
  lost?: boolean;
}

/** Where a watcher reports: the broken promises, and how many events it received. */
export interface WatchLedger {
  violation(text: string): void;
  readonly counts: { streamed: number };
}

/**
 * One Chat stream per session, attached through the real client as a reconnecting client does:
 * from the last seq it saw. Each event seen is noted (seq → event id) for a check against what was
 * stored: a client must never have seen an event that a restart replaced. Seqs must arrive one
 * after another, but past a crash's skip (see `crashSkip`) and at the first of an attach; a stream
 * that outlived the node that showed it events before they were written (a stream following the
 * session on that node, which lost its lease) goes on after the skip its next holder took from the
 * stored log (`jumps`). A stream that broke (its server went away) may be attached again, to the
 * same server or another one.
 */
export class StreamWatchers {
  private readonly streams = new Map<
    WatchedSession,
    { chat: ParkwaySession; read: Promise<void> }
  >();

  constructor(private readonly ledger: WatchLedger) {}

  /**
   * Attaches to a session after the last seq its stream saw, unless a stream is attached. Resolves
   * with the error when the attach failed (the server failed meanwhile: the caller attaches again
   * later).
   */
  async watch(client: ParkwayClient, s: WatchedSession): Promise<unknown> {
    if (s.lost || this.streams.has(s)) return undefined;
    let chat: ParkwaySession;
    try {
      chat = await client.attach(s.id, { afterSeq: s.watchedSeq, reconnectForMs: 0 });
    } catch (err) {
      return err;
    }
    const entry = { chat, read: this.read(s, chat) };
    this.streams.set(s, entry);
    void entry.read.then(() => {
      if (this.streams.get(s) === entry) this.streams.delete(s);
    });
    return undefined;
  }

  /** Resolves when the session's stream ended (at once when none is attached). */
  async ended(s: WatchedSession): Promise<void> {
    await this.streams.get(s)?.read;
  }

  private async read(s: WatchedSession, chat: ParkwaySession): Promise<void> {
    let first = true;
    try {
      for (;;) {
        const event = await chat.next();
        if (!event) return;
        if (event.seq === 0) continue;
        // One by one, but past the seqs a crash skipped (see `SeqEpoch`): a replay crosses those
        // skips, and the first event of an attach may follow one the crash lost.
        const next = s.watchedSeq + 1;
        if (event.seq < next) {
          this.ledger.violation(
            `session s${s.index}: its stream got seq ${event.seq} after ${s.watchedSeq}`,
          );
        } else if (!first && event.seq !== next && !crashSkip(next, event.seq)) {
          s.jumps.push([s.watchedSeq, event.seq]);
        }
        first = false;
        s.watchedSeq = event.seq;
        s.seen.set(event.seq, event.id);
        this.ledger.counts.streamed++;
      }
    } catch {
      // The stream broke with the server.
    }
  }

  /** Ends every stream and waits until what they received is noted. */
  async closeAll(): Promise<void> {
    const streams = [...this.streams.values()];
    this.streams.clear();
    for (const { chat } of streams) chat.close();
    await Promise.all(streams.map((s) => s.read));
  }
}

/**
 * Checks each of `s`'s jumps against the seqs of its stored log: a stream may go from seq `a` to
 * `b` past a gap that is not a crash's skip only when the events it saw after the last stored one
 * (`base`) were lost (shown before their write, which never came), nothing is stored between `a`
 * and `b`, and `b` follows `base` by a crash's skip.
 */
export function checkJumps(
  s: WatchedSession,
  stored: ReadonlySet<number>,
  violation: (text: string) => void,
): void {
  for (const [a, b] of s.jumps) {
    let base = a;
    while (base > 0 && !stored.has(base)) base--;
    let between = false;
    for (let seq = a + 1; seq < b && !between; seq++) between = stored.has(seq);
    if (between || !crashSkip(base + 1, b)) {
      violation(`session s${s.index}: its stream got seq ${b} after ${a} (${base} stored before)`);
    }
  }
}
