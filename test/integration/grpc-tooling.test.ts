import { status } from "@grpc/grpc-js";
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionStatus } from "../../src/generated/parkway/v1/agent_service.js";
import { type Harness, startHarness } from "../helpers/parkway-harness.js";
import { reflectedCall } from "../helpers/reflection-client.js";

let h: Harness;

beforeAll(async () => {
  h = await startHarness({
    turns: [
      { match: { lastUser: "^hello" }, text: "Hi there." },
      {
        match: { lastUser: "^make" },
        toolCalls: [{ name: "Bash", input: { command: "touch made.txt" } }],
      },
      { match: { toolName: "Bash" }, repeat: true, text: "Made." },
    ],
  });
});

afterAll(async () => {
  await h.close();
});

/** The event case of each ServerEvent in JSON (e.g. "replyStart", "inputAck"). */
const kinds = (responses: JsonValue[]) =>
  responses.map((r) => Object.keys(r as JsonObject).find((k) => !FIELDS.has(k)) ?? "none");
const FIELDS = new Set(["id", "seq", "sessionId", "replyId", "createdAt", "replayed"]);

describe("grpc tooling with reflection only (as grpcurl)", () => {
  it("checks health without a proto file", async () => {
    const res = await reflectedCall(h.parkway.address, "grpc.health.v1.Health/Check", [{}]);
    expect(res.code).toBe(status.OK);
    expect(res.responses).toEqual([{ status: "SERVING" }]);
  });

  it("ends a half-closed Chat with OK at once on an idle session", async () => {
    const session = await h.client.createSession({ agentId: "test" });
    const res = await reflectedCall(h.parkway.address, "parkway.v1.AgentService/Chat", [
      { attach: { sessionId: session.id } },
    ]);
    expect(res.code).toBe(status.OK);
    expect(kinds(res.responses)).toEqual(["inputAck"]);
  });

  it("ends a half-closed Chat with OK after the reply its message started ends", async () => {
    const session = await h.client.createSession({ agentId: "test" });
    const res = await reflectedCall(h.parkway.address, "parkway.v1.AgentService/Chat", [
      { attach: { sessionId: session.id } },
      { requestId: "r1", userMessage: { text: "hello" } },
    ]);
    expect(res.code).toBe(status.OK);
    const seen = kinds(res.responses);
    expect(seen).toContain("replyStart");
    expect(seen.at(-1)).toBe("replyEnd");
    const acks = res.responses.filter((r) => "inputAck" in (r as JsonObject));
    expect(acks.map((a) => ((a as JsonObject).inputAck as JsonObject).requestId)).toContain("r1");
  });

  it("ends a half-closed Chat with OK when its reply parks, and the park stays answerable", async () => {
    const session = await h.client.createSession({ agentId: "test" });
    const res = await reflectedCall(h.parkway.address, "parkway.v1.AgentService/Chat", [
      { attach: { sessionId: session.id } },
      { requestId: "m1", userMessage: { text: "make a file" } },
    ]);
    expect(res.code).toBe(status.OK);
    const seen = kinds(res.responses);
    expect(seen.slice(-2)).toEqual(["requireUserConfirm", "replyParked"]);
    const view = await h.client.getSession(session.id);
    expect(view.status).toBe(SessionStatus.SESSION_STATUS_AWAITING_PERMISSION);

    // A second half-closed stream answers the park and ends after the resumed reply.
    const callId = view.pendingToolCalls[0]!.id;
    const answered = await reflectedCall(h.parkway.address, "parkway.v1.AgentService/Chat", [
      { attach: { sessionId: session.id, afterSeq: String(view.lastSeq) } },
      {
        requestId: "c1",
        userConfirmResult: { confirmResults: [{ confirmed: true, toolCall: { id: callId } }] },
      },
    ]);
    expect(answered.code).toBe(status.OK);
    expect(kinds(answered.responses).at(-1)).toBe("replyEnd");
    expect((await h.client.getSession(session.id)).status).toBe(SessionStatus.SESSION_STATUS_IDLE);
  });

  it("reports a refused input in its ack and still ends with OK", async () => {
    const session = await h.client.createSession({ agentId: "test" });
    const res = await reflectedCall(h.parkway.address, "parkway.v1.AgentService/Chat", [
      { attach: { sessionId: session.id } },
      { requestId: "bad", userConfirmResult: { confirmResults: [{ confirmed: true }] } },
    ]);
    expect(res.details).toBe("");
    expect(res.code).toBe(status.OK);
    const ack = res.responses
      .map((r) => (r as JsonObject).inputAck as JsonObject | undefined)
      .find((a) => a?.requestId === "bad");
    expect((ack?.status as JsonObject | undefined)?.code).toBeGreaterThan(0);
  });
});
