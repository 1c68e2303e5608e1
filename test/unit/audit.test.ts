import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { DecisionInfo, Msg, ToolCallBlock } from "../../src/agent/types.js";
import { isParkwayError } from "../../src/common/errors.js";
import { newId } from "../../src/common/ids.js";
import { confirmAudit, decisionAudit, externalAudit } from "../../src/session/audit-entries.js";
import { decodePageToken, encodePageToken } from "../../src/session/audit-log.js";
import { AuditRecord } from "../../src/session/audit-records.js";
import { decodeRecord, RecordError } from "../../src/store/index.js";

const fixtures = JSON.parse(
  readFileSync(new URL("../fixtures/store/audit-records.json", import.meta.url), "utf8"),
) as Record<string, string>;

const call: ToolCallBlock = {
  type: "tool_call",
  id: "c1",
  name: "Bash",
  input: '{"command":"npm test"}',
  state: "asking",
};
const decision = (over: Partial<DecisionInfo>): DecisionInfo => ({
  behavior: "allow",
  reason: "why",
  check: "read_only",
  bypassImmune: false,
  suggestedRules: [],
  ...over,
});

describe("audit records", () => {
  it("reads a version 1 record and refuses unknown kinds and versions", () => {
    expect(decodeRecord(AuditRecord, "acme/aud_x", fixtures.audit_v1!)).toMatchObject({
      kind: "confirmed",
      acceptedRules: ["Bash(npm test:*)"],
    });
    expect(() => decodeRecord(AuditRecord, "acme/aud_x", fixtures.audit_unknown_kind!)).toThrow(
      RecordError,
    );
    expect(() => decodeRecord(AuditRecord, "acme/aud_x", fixtures.audit_future!)).toThrow(
      /newer than this server understands/,
    );
  });

  it.each([
    [
      decision({
        behavior: "allow",
        check: "rule.allow",
        rule: { toolName: "Bash", ruleContent: "npm:*", behavior: "allow" },
      }),
      "allowed_by_rule",
      "Bash(npm:*)",
    ],
    [decision({ behavior: "allow", check: "mode.bypass" }), "allowed_by_check", undefined],
    [
      decision({
        behavior: "deny",
        check: "rule.deny",
        rule: { toolName: "Bash", behavior: "deny" },
      }),
      "denied_by_rule",
      "Bash",
    ],
    [decision({ behavior: "deny", check: "mode.dont_ask" }), "denied_by_check", undefined],
    [decision({ behavior: "ask", check: "mode.default" }), "asked", undefined],
  ])("names the engine's decision %#", (d, kind, rule) => {
    const draft = decisionAudit("ses_1", "reply_1", call, d);
    expect(draft).toMatchObject({ kind, actor: "server", toolCallId: "c1", check: d.check });
    expect(draft.rule).toBe(rule);
  });

  it("summarises confirmations and AskUser answers", () => {
    const before: Msg = {
      id: "reply_1",
      role: "assistant",
      name: "a",
      content: [call],
      createdAt: "",
    };
    const [edited, denied] = confirmAudit(
      "ses_1",
      before,
      [
        {
          toolCallId: "c1",
          confirmed: true,
          editedInput: '{"command":"npm t"}',
          rules: [],
          reason: "",
        },
        { toolCallId: "c1", confirmed: false, rules: [], reason: "no" },
      ],
      "alice",
    );
    expect(edited).toMatchObject({ kind: "confirmed", inputEdited: true, acceptedRules: [] });
    expect(denied).toMatchObject({ kind: "denied", reason: "no", actor: "alice" });
    const after: Msg = {
      ...before,
      content: [
        { ...call, id: "q1", name: "AskUser", state: "finished" },
        {
          type: "tool_result",
          id: "q1",
          name: "AskUser",
          output: "",
          state: "success",
          metadata: { answers: [{ question: "Q", selected: ["A", "B"], other: "more" }] },
        },
      ],
    };
    const [answered] = externalAudit(
      "ses_1",
      after,
      [{ toolCallId: "q1", result: { state: "success", output: "" } }],
      "alice",
    );
    expect(answered).toMatchObject({ kind: "answered", selected: ["A", "B"], answeredOther: true });
  });

  it("round-trips page tokens and refuses forged ones naming page_token", () => {
    const id = newId("aud");
    expect(decodePageToken(encodePageToken(id))).toBe(id);
    for (const bad of [
      "",
      "abc",
      encodePageToken("ses_x"),
      Buffer.from(`a2:${id}`).toString("base64url"),
    ]) {
      let err: unknown;
      try {
        decodePageToken(bad);
      } catch (e) {
        err = e;
      }
      expect(isParkwayError(err, "invalid_argument")).toBe(true);
      expect(
        (err as { details: { fieldViolations: { field: string }[] } }).details.fieldViolations[0]!
          .field,
      ).toBe("page_token");
    }
  });
});
