import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { EventRecord, ReplyRecord, SessionRecord } from "../../src/session/records.js";
import { checkEveryWriteFromEnv } from "../../src/config/check-writes.js";
import { decodeRecord, encodeRecord, RecordError } from "../../src/store/index.js";

const fixtures = JSON.parse(
  readFileSync(new URL("../fixtures/store/session-records.json", import.meta.url), "utf8"),
) as Record<string, string>;

describe("stored session records", () => {
  it("reads a version 1 session record", () => {
    const session = decodeRecord(SessionRecord, "ses_fixture", fixtures.session_v1!);
    expect(session.status).toBe("awaiting_permission");
    expect(session.lastSeq).toBe(9);
  });

  it("reads a reply record written before checkpoints carried a seq, as a checkpoint at seq 0", () => {
    const reply = decodeRecord(ReplyRecord, "ses_fixture", fixtures.reply_v1_without_snapshot!);
    expect(reply.snapshotSeq).toBe(0);
    expect(reply.message.content[0]).toMatchObject({ id: "c1", state: "asking" });
  });

  it("reads a version 1 event record (one event) as a chunk of one", () => {
    const chunk = decodeRecord(EventRecord, "ses_fixture/000000000003", fixtures.event_v1!);
    expect(chunk.events).toHaveLength(1);
    expect(chunk.events[0]).toMatchObject({ id: "evt_fixture", seq: 3, replyId: "reply_fixture" });
  });

  it.each([
    ["session_future", /version 2, newer than this server understands/],
    ["session_corrupt", /stored session record "ses_fixture" is invalid/],
  ])("refuses %s with a clear error", (name, message) => {
    expect(() => decodeRecord(SessionRecord, "ses_fixture", fixtures[name]!)).toThrow(RecordError);
    expect(() => decodeRecord(SessionRecord, "ses_fixture", fixtures[name]!)).toThrow(message);
  });

  it("refuses a truncated reply record with a clear error", () => {
    expect(() => decodeRecord(ReplyRecord, "ses_fixture", fixtures.reply_truncated!)).toThrow(
      /stored reply record "ses_fixture" is corrupt \(not JSON\)/,
    );
  });

  describe("records written unchecked in production are validated on write under PARKWAY_CHECK_WRITES=1", () => {
    const reply = {
      replyId: "reply_1",
      message: {
        id: "reply_1",
        role: "assistant",
        name: "agent",
        content: [],
        createdAt: "2026-01-01T00:00:00.000Z",
      },
      iteration: 0,
      state: "running",
      startedAt: "2026-01-01T00:00:00.000Z",
      snapshotSeq: 4,
    };

    it("is on in this suite, and only for the value 1", () => {
      expect(ReplyRecord.checkOnWrite).toBe(false);
      expect(checkEveryWriteFromEnv()).toBe(true);
      expect(checkEveryWriteFromEnv({ PARKWAY_CHECK_WRITES: "0" })).toBe(false);
      expect(checkEveryWriteFromEnv({})).toBe(false);
    });

    it("writes a value that is exactly its schema's reading, fields in any order", () => {
      const reordered = Object.fromEntries(Object.entries(reply).reverse());
      const raw = encodeRecord(ReplyRecord, "ses_1", reordered as never);
      expect(decodeRecord(ReplyRecord, "ses_1", raw)).toEqual(reply);
    });

    it("refuses an invalid value, naming the record", () => {
      expect(() =>
        encodeRecord(ReplyRecord, "ses_1", { ...reply, iteration: -1 } as never),
      ).toThrow(/stored reply record "ses_1" is invalid and was not written/);
    });

    it("refuses a value its schema would store differently (an extra field, a default to fill)", () => {
      expect(() => encodeRecord(ReplyRecord, "ses_1", { ...reply, extra: 1 } as never)).toThrow(
        /stored reply record "ses_1" differs from its schema's reading/,
      );
      const withoutSeq: Record<string, unknown> = { ...reply };
      delete withoutSeq.snapshotSeq;
      expect(() => encodeRecord(ReplyRecord, "ses_1", withoutSeq as never)).toThrow(
        /differs from its schema's reading/,
      );
    });
  });
});
