import { Duplex } from "node:stream";
import { setImmediate as nextTurn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { sendQueuedTogether } from "../../../src/server/batched-writes.js";

/** A call stream shaped as grpc-js's: `_write` hands each message to `call.sendMessage`. */
class CallStream extends Duplex {
  /** What was sent, and on which turn of the event loop. */
  readonly sent: [string, number][] = [];
  private turn = 0;
  readonly call = {
    sendMessage: (message: string, sent: () => void) => {
      this.sent.push([message, this.turn]);
      // HTTP/2 reports a write done on a later turn.
      setImmediate(sent);
    },
  };

  constructor() {
    super({ objectMode: true });
    const tick = () => {
      this.turn += 1;
      if (!this.destroyed) setImmediate(tick).unref();
    };
    setImmediate(tick).unref();
  }

  override _read(): void {}

  override _write(chunk: string, _: BufferEncoding, callback: () => void): void {
    this.call.sendMessage(chunk, callback);
  }
}

async function writeAll(stream: CallStream, messages: string[]): Promise<void> {
  for (const m of messages) stream.write(m);
  await new Promise<void>((resolve) => stream.end(resolve));
}

describe("sendQueuedTogether", () => {
  it("sends every message queued behind the one in flight on one turn, in order", async () => {
    const stream = new CallStream();
    sendQueuedTogether(stream);
    await writeAll(stream, ["a", "b", "c", "d"]);
    expect(stream.sent.map(([m]) => m)).toEqual(["a", "b", "c", "d"]);
    const turns = stream.sent.map(([, turn]) => turn);
    expect(turns[1]).toBeGreaterThan(turns[0]!); // "b" waited for "a"'s write
    expect(new Set(turns.slice(1)).size).toBe(1); // then "b", "c" and "d" went together
    stream.destroy();
  });

  it("sends a corked batch in one go, its first message with the rest", async () => {
    const stream = new CallStream();
    sendQueuedTogether(stream);
    stream.cork();
    for (const m of ["a", "b", "c"]) stream.write(m);
    stream.uncork();
    await new Promise<void>((resolve) => stream.end(resolve));
    expect(stream.sent.map(([m]) => m)).toEqual(["a", "b", "c"]);
    expect(new Set(stream.sent.map(([, turn]) => turn)).size).toBe(1);
    stream.destroy();
  });

  it("is what a call stream without it does not do: one message per turn", async () => {
    const stream = new CallStream();
    await writeAll(stream, ["a", "b", "c", "d"]);
    const turns = stream.sent.map(([, turn]) => turn);
    expect(new Set(turns).size).toBe(4);
    stream.destroy();
  });

  it("keeps flow control: a full queue drains only once all of it is written", async () => {
    const stream = new CallStream();
    sendQueuedTogether(stream);
    const accepted: boolean[] = [];
    for (let i = 0; i < 40; i++) accepted.push(stream.write(`m${i}`));
    expect(accepted.at(-1)).toBe(false); // past the high-water mark, as before
    await new Promise((resolve) => stream.once("drain", resolve));
    expect(stream.sent).toHaveLength(40);
    await nextTurn();
    stream.destroy();
  });

  it("leaves a stream that does not have grpc-js's shape as it is", () => {
    const plain = new Duplex({ objectMode: true, read() {}, write: (_c, _e, cb) => cb() });
    sendQueuedTogether(plain);
    expect(typeof (plain as unknown as { _writev?: unknown })._writev).not.toBe("function");
  });
});
