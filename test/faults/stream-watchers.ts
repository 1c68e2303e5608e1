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
 * after another, but past a crash's skip (see `crashSkip`) and at the first of an attach. A stream that broke (its server went away) may be attached again, to the same
 * server or another one.
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
        if (first ? event.seq < next : event.seq !== next && !crashSkip(next, event.seq)) {
          this.ledger.violation(
            `session s${s.index}: its stream got seq ${event.seq} after ${s.watchedSeq}`,
          );
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
