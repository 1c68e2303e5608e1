import { status } from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import type { ParkwayClientError } from "../../src/client/index.js";
import {
  ListSessionsResponse,
  SessionStatus,
} from "../../src/generated/parkway/v1/agent_service.js";
import { PermissionMode } from "../../src/generated/parkway/v1/permission.js";
import { type Harness, startHarness } from "../helpers/parkway-harness.js";

/**
 * Unary responses that carry sessions stay under a client's default 4 MiB receive limit: a
 * ListSessions page ends early where the next session would pass 3 MiB, and what a client
 * declares for every Session (external tools, metadata) is bounded at creation.
 */
const CLIENT_LIMIT = 4 * 1024 * 1024;

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const ticketTool = {
  name: "OpenTicket",
  description: "Opens a ticket in the client's tracker.",
  inputSchema: JSON.stringify({ type: "object", properties: { body: { type: "string" } } }),
  metadataSchema: "",
};

describe("response limits", () => {
  it("pages ListSessions by size: three sessions parked with 1.4 MB of calls each come in two pages", async () => {
    const calls = [1, 2, 3].map((n) => ({
      id: `call_${n}`,
      name: "OpenTicket",
      input: { body: String(n).repeat(480 * 1000) },
    }));
    h = await startHarness({
      turns: [{ toolCalls: calls, chunkSize: 64 * 1024, repeat: true }],
    });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const session = await h.client.createSession({
        agentId: "test",
        externalTools: [ticketTool],
        permissionMode: PermissionMode.PERMISSION_MODE_BYPASS,
      });
      const parked = await h.client.reply({
        sessionId: session.id,
        input: { $case: "userMessage", value: { text: "open three", content: [] } },
      });
      expect(parked.status).toBe(SessionStatus.SESSION_STATUS_AWAITING_EXTERNAL_RESULT);
      ids.push(session.id);
    }
    const first = await h.client.listSessions();
    expect(ListSessionsResponse.encode(first).finish().length).toBeLessThan(CLIENT_LIMIT);
    expect(first.sessions).toHaveLength(2);
    expect(first.sessions.every((s) => s.pendingToolCalls.length === 3)).toBe(true);
    // The page ended early; its token is opaque, as every ListSessions token.
    expect(first.nextPageToken).not.toBe("");
    expect(first.nextPageToken).not.toContain(first.sessions[1]!.id);
    const second = await h.client.listSessions({ pageToken: first.nextPageToken });
    expect(second.sessions).toHaveLength(1);
    expect(second.nextPageToken).toBe("");
    const listed = [...first.sessions, ...second.sessions].map((s) => s.id);
    expect(listed.sort()).toEqual([...ids].sort());
  });

  it("refuses external tools or metadata past 256 KiB at creation, naming the field", async () => {
    h = await startHarness({ turns: [] });
    const refusal = async (request: Parameters<Harness["client"]["createSession"]>[0]) =>
      (await h!.client.createSession(request).catch((err: unknown) => err)) as ParkwayClientError;

    const metadata = await refusal({ agentId: "test", metadata: { note: "m".repeat(300 * 1024) } });
    expect(metadata.code).toBe(status.INVALID_ARGUMENT);
    expect(metadata.fieldViolations[0]?.field).toBe("metadata");

    const tools = await refusal({
      agentId: "test",
      externalTools: [{ ...ticketTool, description: "d".repeat(300 * 1024) }],
    });
    expect(tools.code).toBe(status.INVALID_ARGUMENT);
    expect(tools.fieldViolations[0]?.field).toBe("external_tools");
    expect((await h.client.listSessions()).sessions).toEqual([]);

    const fits = await h.client.createSession({
      agentId: "test",
      metadata: { note: "m".repeat(200 * 1024) },
    });
    expect((await h.client.getSession(fits.id)).metadata?.note).toHaveLength(200 * 1024);
  });
});
