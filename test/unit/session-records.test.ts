import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { EventRecord, ReplyRecord, SessionRecord } from "../../src/session/records.js";
import { decodeRecord, RecordError } from "../../src/store/index.js";

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
});
