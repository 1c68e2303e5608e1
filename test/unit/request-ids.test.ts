import { describe, expect, it } from "vitest";
import { RequestRecord } from "../../src/session/records.js";
import { checkRequestId, inputDigest } from "../../src/session/request-ids.js";
import type { SessionInput } from "../../src/session/session-input.js";
import { ParkwayError } from "../../src/common/errors.js";
import { decodeRecord } from "../../src/store/index.js";

const confirm = (toolCallId: string, confirmed = true): SessionInput => ({
  kind: "confirm",
  replyId: "",
  answers: [{ toolCallId, confirmed, rules: [], reason: "" }],
});

describe("request ids", () => {
  it("digest the input as decoded: equal inputs agree, key order does not count", () => {
    const a: SessionInput = {
      kind: "external_results",
      replyId: "r",
      answers: [
        { toolCallId: "c1", result: { state: "success", output: "x", metadata: { a: 1, b: 2 } } },
      ],
    };
    const b: SessionInput = {
      replyId: "r",
      kind: "external_results",
      answers: [
        { result: { metadata: { b: 2, a: 1 }, output: "x", state: "success" }, toolCallId: "c1" },
      ],
    };
    expect(inputDigest(a)).toBe(inputDigest(b));
    expect(inputDigest(a)).toMatch(/^[0-9a-f]{64}$/);
  });

  it("digest as every earlier version did: stored digests keep matching their retries", () => {
    const input = {
      kind: "confirm",
      replyId: "rep_1",
      answers: [
        {
          toolCallId: "c\u00e91",
          confirmed: true,
          editedInput: '{"z":1,"a":[1,2,{"y":null,"b":"\u00e9"}]}',
          rules: [{ tool: "Bash", pattern: "git *", scope: "session", b: undefined }],
          reason: 'ok \n"q"',
          extra: { Z: 1, a: [undefined, null, 1.5, -0, 1e21], "\u00e4": true, _: {}, 10: 1, 9: 2 },
        },
      ],
    };
    expect(inputDigest(input as unknown as SessionInput)).toBe(
      "274c69ff8f279b4ce53b731143a28e2051d24ee2342ec74d4e07c192942d38c4",
    );
  });

  it("digest a different kind, call id, answer or text differently", () => {
    const digests = [
      confirm("c1"),
      confirm("c2"),
      confirm("c1", false),
      { kind: "user_interrupt", replyId: "" },
      { kind: "user_message", text: "hi" },
      { kind: "user_message", text: "hi!" },
    ].map((input) => inputDigest(input as SessionInput));
    expect(new Set(digests).size).toBe(digests.length);
  });

  it("refuse an id longer than 256 characters, naming request_id", () => {
    expect(() => checkRequestId("x".repeat(256))).not.toThrow();
    try {
      checkRequestId("x".repeat(257));
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ParkwayError);
      expect((err as ParkwayError).code).toBe("invalid_argument");
      expect((err as ParkwayError).message).toContain("request_id");
    }
  });

  it("read a version 1 request record (no digest, no outcome)", () => {
    const raw = JSON.stringify({
      v: 1,
      d: { appliedAt: "2026-01-01T00:00:00.000Z", kind: "user_message" },
    });
    const record = decodeRecord(RequestRecord, "ses_x/req", raw);
    expect(record).toEqual({ appliedAt: "2026-01-01T00:00:00.000Z", kind: "user_message" });
  });
});
