import type { ParkwayClient, ParkwaySession } from "../../src/client/index.js";
import type { Ledger, TrackedSession } from "./storage-fault-ledger.js";

/**
 * One Chat stream per session, attached through the real client as a reconnecting client does:
 * from the last seq it saw. Each event seen is noted (seq → event id) for the check after the next
 * restart, which compares them with what was stored: a client must never have seen an event that
 * the restart lost or replaced. Seqs must arrive one after another.
 */
export class StreamWatchers {
  private readonly streams = new Map<
    TrackedSession,
    { chat: ParkwaySession; read: Promise<void> }
  >();

  constructor(private readonly ledger: Ledger) {}

  /** Attaches to a session after the last seq its stream saw (once per server life). */
  async watch(client: ParkwayClient, s: TrackedSession): Promise<void> {
    if (s.lost || this.streams.has(s)) return;
    let chat: ParkwaySession;
    try {
      chat = await client.attach(s.id, { afterSeq: s.watchedSeq, reconnectForMs: 0 });
    } catch {
      return; // the server failed meanwhile; the next life attaches again
    }
    this.streams.set(s, { chat, read: this.read(s, chat) });
  }

  private async read(s: TrackedSession, chat: ParkwaySession): Promise<void> {
    try {
      for (;;) {
        const event = await chat.next();
        if (!event) return;
        if (event.seq === 0) continue;
        if (event.seq !== s.watchedSeq + 1) {
          this.ledger.violation(
            `session s${s.index}: its stream got seq ${event.seq} after ${s.watchedSeq}`,
          );
        }
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
