import { existsSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type ParkwayClientError } from "../../src/client/index.js";
import { SessionStatus } from "../../src/generated/parkway/v1/agent_service.js";
import { ToolResultState } from "../../src/generated/parkway/v1/content.js";
import { PermissionBehavior, RuleScope } from "../../src/generated/parkway/v1/permission.js";
import { SessionRecord } from "../../src/session/records.js";
import { createLevelStore } from "../../src/store/index.js";
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
    expect(err?.fieldViolations[0]?.field).toBe(
      "external_execution_result.execution_results[0].metadata.ticket",
    );
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
    // A pattern RE2 does not run (a lookahead) is refused the same way.
    const lookahead = await h.client
      .createSession({
        agentId: "test",
        externalTools: [
          {
            ...ticketTool,
            metadataSchema: JSON.stringify({
              properties: { t: { type: "string", pattern: "(?=a)" } },
            }),
          },
        ],
      })
      .then(
        () => undefined,
        (e: unknown) => e as ParkwayClientError,
      );
    expect(lookahead?.codeName).toBe("INVALID_ARGUMENT");
    expect(lookahead?.fieldViolations[0]?.field).toBe("external_tools[0].metadata_schema");
  });

  it("matches a schema's patterns in time linear in the value, so ^(a+)+$ cannot stall the server", async () => {
    h = await startHarness({
      turns: [
        { toolCalls: [{ id: "t1", name: "OpenTicket", input: { title: "a".repeat(40) + "!" } }] },
        { text: "Ticket opened." },
      ],
    });
    const nested = { type: "string", pattern: "^(a+)+$" };
    const tool = {
      ...ticketTool,
      inputSchema: JSON.stringify({ type: "object", properties: { title: nested } }),
      metadataSchema: JSON.stringify({ type: "object", properties: { ticket: nested } }),
    };
    const session = await h.client.createSession({ agentId: "test", externalTools: [tool] });
    const chat = await h.client.attach(session.id);
    // The model's input fails the pattern: the model is told so, and its next turn ends the reply.
    const events = await collect(chat.message("open a ticket"));
    chat.close();
    expect(events.map(kind).at(-1)).toBe("reply_end");
    expect(JSON.stringify(h.model.requests[1]?.messages)).toContain("must match pattern");
    expect((await h.client.getSession(session.id)).status).toBe(SessionStatus.SESSION_STATUS_IDLE);
  });
});

describe("an external tool named like one of the agent's own tools", () => {
  it("is refused by CreateSession, naming the field and the tool", async () => {
    h = await startHarness({ turns: [] });
    for (const name of ["Bash", "Write", "AskUser"]) {
      const err = await h.client
        .createSession({
          agentId: "test",
          externalTools: [ticketTool, { ...ticketTool, name, metadataSchema: "" }],
        })
        .then(
          () => undefined,
          (e: unknown) => e as ParkwayClientError,
        );
      expect(err?.codeName, name).toBe("INVALID_ARGUMENT");
      expect(err?.fieldViolations, name).toEqual([
        {
          field: "external_tools[1].name",
          description: `collides with ${name}, a tool of agent test; an external tool needs a name of its own`,
        },
      ]);
    }
    expect((await h.client.listSessions()).sessions).toEqual([]);
  });

  it("stored by an older server, does not shadow the agent's tool", async () => {
    h = await startHarness({
      turns: [
        { toolCalls: [{ name: "Bash", input: { command: "touch made-by-bash.txt" } }] },
        { text: "Done." },
      ],
    });
    const declared = {
      name: "Shell",
      description: "Runs a command on the client's machine.",
      inputSchema: JSON.stringify({ type: "object" }),
      metadataSchema: "",
    };
    const session = await h.client.createSession({ agentId: "test", externalTools: [declared] });
    // A server before the check stored a session whose external tool is named Bash.
    await h.restart(async () => {
      const store = createLevelStore(h!.dataDir);
      await store.open();
      const data = (await store.get(SessionRecord, session.id))!;
      await store
        .batch()
        .put(SessionRecord, session.id, {
          ...data,
          externalTools: data.externalTools.map((t) => ({ ...t, name: "Bash" })),
        })
        .write({ sync: true });
      await store.close();
    });
    expect((await h.client.getSession(session.id)).externalTools.map((t) => t.name)).toEqual([
      "Bash",
    ]);

    // The gates judge a Bash call as the built-in's, whose suggested rule names the command.
    const input = JSON.stringify({ command: "touch made-by-bash.txt" });
    const explained = await h.client.explain({ sessionId: session.id, toolName: "Bash", input });
    expect(explained.check).not.toBe("custom_tool");
    expect(explained.suggestedRules.map((r) => [r.toolName, r.ruleContent])).toEqual([
      ["Bash", "touch made-by-bash.txt:*"],
    ]);

    const chat = await h.client.attach(session.id);
    const parked = await collect(chat.message("make a file"));
    const tools = (h.model.requests[0]!.tools ?? []) as {
      function: { name: string; description: string };
    }[];
    const offered = tools.filter((t) => t.function.name === "Bash");
    expect(offered).toHaveLength(1);
    expect(offered[0]!.function.description).not.toBe(declared.description);
    const ask = parked.find((e) => e.event?.$case === "requireUserConfirm");
    const call =
      ask?.event?.$case === "requireUserConfirm" ? ask.event.value.toolCalls[0] : undefined;
    expect(call?.decision?.check).not.toBe("custom_tool");
    expect(call?.decision?.suggestedRules.map((r) => r.ruleContent)).toEqual([
      "touch made-by-bash.txt:*",
    ]);

    // Confirmed, the server's Bash runs it: nothing is handed to the client.
    await chat.confirm(call!);
    const done = await collect(chat.untilSettled());
    chat.close();
    expect(done.map(kind)).not.toContain("require_external_execution");
    expect(done.map(kind).at(-1)).toBe("reply_end");
    expect(existsSync(path.join(session.workingDirectories[0]!, "made-by-bash.txt"))).toBe(true);
  });
});
