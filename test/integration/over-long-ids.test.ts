import { type ServiceError, status } from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import type { ParkwayClientError } from "../../src/client/index.js";
import { type Harness, startHarness } from "../helpers/parkway-harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function refusal(call: () => Promise<unknown>): Promise<ParkwayClientError> {
  return call().then(
    () => {
      throw new Error("expected a refusal");
    },
    (e: unknown) => e as ParkwayClientError,
  );
}

/**
 * The default limit of gRPC's C core (so of Python's client) on the metadata of a response; past it
 * the client fails the call with RESOURCE_EXHAUSTED whatever the server answered. grpc-js has no
 * such limit, so the test measures the trailers.
 */
const METADATA_LIMIT = 8 * 1024;

/** The bytes of a failed call's status in its trailers, as sent. */
function trailerBytes(err: ServiceError): number {
  const details = err.metadata.get("grpc-status-details-bin")[0] as Buffer;
  return encodeURI(err.details).length + details.toString("base64").length;
}

describe("an over-long id", () => {
  it("is answered with a clean status on every RPC that takes one, quoting only a bounded prefix", async () => {
    h = await startHarness({ turns: [{ text: "ok" }] });
    const client = h.client;
    const sessionId = `ses_${"x".repeat(20_000)}`;
    const ruleId = `rule_${"x".repeat(20_000)}`;
    const message = { $case: "userMessage" as const, value: { text: "hi", content: [] } };
    const calls: [string, () => Promise<unknown>][] = [
      ["GetSession", () => client.getSession(sessionId)],
      ["DeleteSession", () => client.deleteSession(sessionId)],
      ["ListMessages", () => client.listMessages(sessionId)],
      ["Send", () => client.send(sessionId, message)],
      ["Reply", () => client.reply({ sessionId, input: message })],
      ["SetMode", () => client.setMode(sessionId, 1)],
      ["RemoveRule", () => client.removeRule(ruleId)],
      ["Chat attach", () => client.attach(sessionId)],
      [
        "Watch",
        async () => {
          await client.watch(sessionId, { reconnectForMs: 0 }).next();
        },
      ],
    ];
    for (const [rpc, call] of calls) {
      const err = await refusal(call);
      const shown = `${rpc}: ${err.codeName} ${err.message.slice(0, 100)}… (${err.message.length} characters)`;
      expect(err.codeName, shown).toBe("NOT_FOUND");
      expect(err.message.length, shown).toBeLessThan(300);
      expect(err.message, shown).toMatch(/^(session|rule) "(ses|rule)_x+…" not found$/);
    }

    // What GetSession's status carries in its trailers fits well within a client's limit.
    const raw = await new Promise<ServiceError>((resolve) => {
      client.agentService.getSession({ sessionId }, (err) => resolve(err!));
    });
    expect(trailerBytes(raw)).toBeLessThan(METADATA_LIMIT / 2);
    // Any other error quoting what the client sent is cut as well.
    const agentId = "é".repeat(20_000);
    const unknown = await new Promise<ServiceError>((resolve) => {
      client.agentService.createSession(
        { agentId, externalTools: [], permissionMode: 0, workingDirectories: [], metadata: {} },
        (err) => resolve(err!),
      );
    });
    expect(unknown.code).toBe(status.INVALID_ARGUMENT);
    expect(unknown.details).toMatch(/^agent_id: unknown agent "é+…$/);
    expect(trailerBytes(unknown)).toBeLessThan(METADATA_LIMIT);
    const refused = await refusal(() => client.createSession({ agentId }));
    expect(refused.fieldViolations).toEqual([
      { field: "agent_id", description: expect.stringMatching(/^unknown agent "é+…$/) as string },
    ]);
    // The server still serves.
    expect(await client.listAgents()).toHaveLength(1);
  });
});
