import type { BinaryWriter } from "@bufbuild/protobuf/wire";
import { describe, expect, it } from "vitest";
import { ServerEvent } from "../../../src/generated/parkway/v1/events.js";
import { pooledSerializer } from "../../../src/server/pooled-serializer.js";
import { eventToPb } from "../../../src/server/mappers/events.js";
import type { StoredEvent } from "../../../src/session/stored-event.js";

const generated = (message: ServerEvent): Buffer =>
  Buffer.from(ServerEvent.encode(message).finish());

function event(seq: number, body: StoredEvent["body"]): ServerEvent {
  return eventToPb({
    id: `evt_${seq}`,
    seq,
    sessionId: "ses_1",
    replyId: "rep_1",
    createdAt: "2026-12-04T05:00:00.123Z",
    body,
  });
}

// Small and large, ASCII and not, nested forks past 127 bytes (a two-byte length prefix).
const events: ServerEvent[] = [
  event(1, { type: "text_block_delta", blockId: "blk_1", delta: "hello" }),
  event(2, { type: "text_block_delta", blockId: "blk_1", delta: "héllo ✓ ".repeat(40) }),
  event(3_000_000_000, { type: "text_block_delta", blockId: "blk_1", delta: "x".repeat(70_000) }),
  event(4, { type: "tool_call_start", toolCallId: "call_1", toolCallName: "bash" }),
  event(5, { type: "text_block_delta", blockId: "blk_1", delta: "" }),
];

describe("pooledSerializer", () => {
  it("writes the same bytes as the generated serializer, message after message", () => {
    const serialize = pooledSerializer<ServerEvent>((m, w) => ServerEvent.encode(m, w));
    for (const round of [1, 2]) {
      for (const message of events) {
        const bytes = serialize(message);
        expect(bytes.equals(generated(message)), `round ${round}, seq ${message.seq}`).toBe(true);
        expect(ServerEvent.decode(bytes)).toEqual(message);
      }
    }
  });

  it("returns bytes a later message does not overwrite", () => {
    const serialize = pooledSerializer<ServerEvent>((m, w) => ServerEvent.encode(m, w));
    const first = serialize(events[0]!);
    const copy = Buffer.from(first);
    serialize(events[1]!);
    serialize(events[2]!);
    expect(first.equals(copy)).toBe(true);
  });

  it("starts clean after an encode that threw half-way", () => {
    let fail = true;
    const serialize = pooledSerializer((message: ServerEvent, writer: BinaryWriter) => {
      if (fail) {
        writer.uint32(10).fork().string("half a message");
        throw new Error("encode failed");
      }
      return ServerEvent.encode(message, writer);
    });
    expect(() => serialize(events[0]!)).toThrow("encode failed");
    fail = false;
    for (const message of events) {
      expect(serialize(message).equals(generated(message))).toBe(true);
    }
  });
});
