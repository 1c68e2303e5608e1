import { afterEach, describe, expect, it } from "vitest";
import { type ParkwayClientError } from "../../src/client/index.js";
import { SessionStatus } from "../../src/generated/parkway/v1/agent_service.js";
import { ToolResultState } from "../../src/generated/parkway/v1/content.js";
import { PermissionBehavior, RuleScope } from "../../src/generated/parkway/v1/permission.js";
import {
  collect,
  type Harness,
  kind,
  startedCalls,
  startHarness,
} from "../helpers/parkway-harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const ticketTool = {
  name: "OpenTicket",
  description: "Opens a ticket in the client's tracker.",
  inputSchema: JSON.stringify({
    type: "object",
    properties: { title: { type: "string" } },
    required: ["title"],
  }),
  metadataSchema: JSON.stringify({
    type: "object",
    properties: { ticket: { type: "string", pattern: "^T-[0-9]+$" } },
    required: ["ticket"],
  }),
};

describe("external tools declared by the client in CreateSession", () => {
  it("are offered to the model, handed out, and their metadata is checked", async () => {
    h = await startHarness({
      turns: [
        { toolCalls: [{ id: "t1", name: "OpenTicket", input: { title: "Broken build" } }] },
        { text: "Ticket opened." },
      ],
    });
    const session = await h.client.createSession({ agentId: "test", externalTools: [ticketTool] });
    await h.client.addRules([
      {
        toolName: "OpenTicket",
        behavior: PermissionBehavior.PERMISSION_BEHAVIOR_ALLOW,
        scope: RuleScope.RULE_SCOPE_SESSION,
        sessionId: session.id,
      },
    ]);
    const chat = await h.client.attach(session.id);
    const parked = await collect(chat.message("open a ticket"));
    expect(parked.map(kind).slice(-3)).toEqual([
      "tool_result_start",
      "require_external_execution",
      "reply_parked",
    ]);
    expect(JSON.stringify(h.model.requests[0]!.tools)).toContain("OpenTicket");
    const state = await h.client.getSession(session.id);
    expect(state.status).toBe(SessionStatus.SESSION_STATUS_AWAITING_EXTERNAL_RESULT);
    const [ticket] = startedCalls(parked);
    expect(state.pendingToolCalls.map((c) => c.id)).toEqual([ticket]);

    const result = (metadata: Record<string, unknown>) => ({
      $case: "externalExecutionResult" as const,
      value: {
        replyId: "",
        executionResults: [
          {
            id: ticket!,
            name: "OpenTicket",
            output: [{ block: { $case: "text" as const, value: { id: "", text: "opened" } } }],
            state: ToolResultState.TOOL_RESULT_STATE_SUCCESS,
            metadata,
            askUser: undefined,
          },
        ],
      },
    });
    const err = await chat.send(result({ ticket: "nope" })).then(
      () => undefined,
      (e: unknown) => e as ParkwayClientError,
    );
    expect(err?.codeName).toBe("INVALID_ARGUMENT");
    expect(err?.fieldViolations[0]?.field).toBe("execution_results[0].metadata.ticket");
    await chat.send(result({ ticket: "T-42" }));
    const done = await collect(chat.untilSettled());
    chat.close();
    expect(done.map(kind).at(-1)).toBe("reply_end");
    const end = done.find((e) => e.event?.$case === "toolResultEnd");
    expect(end?.event?.$case === "toolResultEnd" && end.event.value.metadata).toEqual({
      ticket: "T-42",
    });
  });

  it("refuses a schema that does not compile, naming the field", async () => {
    h = await startHarness({ turns: [] });
    const err = await h.client
      .createSession({
        agentId: "test",
        externalTools: [{ ...ticketTool, inputSchema: JSON.stringify({ type: "no-such-type" }) }],
      })
      .then(
        () => undefined,
        (e: unknown) => e as ParkwayClientError,
      );
    expect(err?.codeName).toBe("INVALID_ARGUMENT");
    expect(err?.fieldViolations[0]?.field).toBe("external_tools[0].input_schema");
  });
});
