import { createHash } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  AuditKind,
  createParkwayClient,
  FinishedReason,
  type ParkwayClient,
  PermissionBehavior,
  PermissionMode,
  PolicyResult,
  type ServerEvent,
  type ToolCallBlock,
  ToolResultState,
} from "../../src/client/index.js";
import { parseConfig } from "../../src/config/index.js";
import { type Script, startScriptedModel } from "../../src/model/scripted/index.js";
import { type RunningParkway, startParkway } from "../../src/runtime/start-parkway.js";
import { captureLog } from "../helpers/capture-log.js";
import { collect } from "../helpers/parkway-harness.js";
import { type PolicyService, startPolicyService } from "../helpers/policy-service.js";

const script: Script = {
  turns: [
    {
      match: { lastUser: "^three" },
      repeat: true,
      toolCalls: [
        { name: "Read", input: { file_path: "notes.txt" } },
        { name: "Grep", input: { pattern: "TODO" } },
        { name: "Glob", input: { pattern: "**/*" } },
      ],
    },
    {
      match: { lastUser: "^make" },
      toolCalls: [
        { name: "Bash", input: { command: "mkdir -p forbidden" } },
        { name: "Bash", input: { command: "mkdir -p out" } },
      ],
    },
    { match: { lastUser: "^search" }, toolCalls: [{ name: "Grep", input: { pattern: "x" } }] },
    {
      match: { lastUser: "^check" },
      repeat: true,
      toolCalls: [
        { name: "Grep", input: { pattern: "x" } },
        { name: "Glob", input: { pattern: "ask-me/**" } },
      ],
    },
    { repeat: true, text: "done" },
  ],
};

/**
 * Denies Read and any Bash command naming "forbidden", asks about any input naming "ask-me", never
 * answers about Grep, allows the rest.
 */
const decide = (body: { tool: string; input: Record<string, unknown> }) => {
  if (body.tool === "Grep") return "hang" as const;
  if (JSON.stringify(body.input).includes("ask-me")) {
    return { decision: "ask", reason: "a person should look at this" };
  }
  if (body.tool === "Read") return { decision: "deny", reason: "reading notes is off limits" };
  if (JSON.stringify(body.input).includes("forbidden")) {
    return { decision: "deny", reason: "no forbidden directories" };
  }
  return { decision: "allow", reason: "fine by policy" };
};

const sha = (token: string) => createHash("sha256").update(token).digest("hex");

let running:
  | {
      parkway: RunningParkway;
      pdp: PolicyService;
      log: ReturnType<typeof captureLog>;
      close(): Promise<void>;
    }
  | undefined;
const clients: ParkwayClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await running?.close();
  running = undefined;
});

async function start() {
  const root = await mkdtemp(path.join(tmpdir(), "parkway-policy-"));
  const workdir = path.join(root, "work");
  const model = await startScriptedModel({ script });
  const pdp = await startPolicyService(decide);
  const policy = { url: pdp.url, timeout: "300ms" };
  const log = captureLog();
  const parkway = await startParkway({
    config: parseConfig({
      listen: "127.0.0.1:0",
      data: path.join(root, "data"),
      model: { url: model.url, name: "scripted", maxRetries: 0 },
      metrics: { listen: "127.0.0.1:0" },
      tenants: [
        {
          id: "acme",
          tokens: [{ name: "alice", sha256: sha("acme-secret") }],
          policy: { ...policy, onError: "deny" },
        },
      ],
      agents: [
        {
          id: "asker",
          workingDirectories: [workdir],
          policy: {
            ...policy,
            onError: "ask",
            calls: "all",
            headers: { Authorization: "Bearer pdp-token" },
          },
        },
        { id: "tenant", workingDirectories: [workdir] },
        { id: "patient", workingDirectories: [workdir], policy: { url: pdp.url, timeout: "1m" } },
      ],
    }),
    log,
  });
  running = {
    parkway,
    pdp,
    log,
    async close() {
      await parkway.close();
      await pdp.close();
      await model.close();
    },
  };
  const client = createParkwayClient(parkway.address, { token: "acme-secret" });
  clients.push(client);
  return { parkway, pdp, client, log };
}

/** The server's id of the call of `name` (the n-th one) the events announce. */
function callId(events: ServerEvent[], name: string, n = 0): string {
  const ids = events.flatMap((e) =>
    e.event?.$case === "toolCallStart" && e.event.value.toolCallName === name
      ? [e.event.value.toolCallId]
      : [],
  );
  return ids[n]!;
}

function result(events: ServerEvent[], id: string) {
  let text = "";
  let state: ToolResultState | undefined;
  for (const e of events) {
    if (e.event?.$case === "toolResultTextDelta" && e.event.value.toolCallId === id) {
      text += e.event.value.delta;
    }
    if (e.event?.$case === "toolResultEnd" && e.event.value.toolCallId === id) {
      state = e.event.value.state;
    }
  }
  return { text, state };
}

function confirmRequests(events: ServerEvent[]): ToolCallBlock[] {
  return events.flatMap((e) =>
    e.event?.$case === "requireUserConfirm" ? e.event.value.toolCalls : [],
  );
}

const last = (events: ServerEvent[]) => events.at(-1)?.event;

describe("an external policy decision point", () => {
  it("denies, times out into an ASK (onError ask), allows; audited with its answer and latency; metered", async () => {
    const { parkway, pdp, client } = await start();
    const session = await client.createSession({ agentId: "asker" });
    const chat = await client.attach(session.id);
    pdp.gather = 3; // no answer before all three calls were asked about: they are asked together
    const events = await collect(chat.message("three"));
    const [read, grep, glob] = [
      callId(events, "Read"),
      callId(events, "Grep"),
      callId(events, "Glob"),
    ];

    // The denied call ends denied with the service's reason.
    expect(result(events, read)).toEqual({
      text: "Permission denied: reading notes is off limits",
      state: ToolResultState.TOOL_RESULT_STATE_DENIED,
    });
    // The allowed one runs.
    expect(result(events, glob).state).toBe(ToolResultState.TOOL_RESULT_STATE_SUCCESS);
    // The one the service never answered about asks (onError "ask"), and the reply parks.
    const asked = confirmRequests(events);
    expect(asked.map((c) => c.id)).toEqual([grep]);
    expect(asked[0]!.decision).toMatchObject({
      behavior: PermissionBehavior.PERMISSION_BEHAVIOR_ASK,
      check: "policy",
      reason: "policy service timed out after 300 ms; onError asks",
      bypassImmune: true,
      suggestedRules: [],
      policy: {
        result: PolicyResult.POLICY_RESULT_TIMEOUT,
        engineBehavior: PermissionBehavior.PERMISSION_BEHAVIOR_ALLOW,
        engineCheck: "read_only",
      },
    });
    expect(last(events)?.$case).toBe("replyParked");

    // What the service was sent.
    const sent = pdp.requests.find((r) => r.body.tool === "Read")!;
    expect(sent.headers.authorization).toBe("Bearer pdp-token");
    expect(sent.headers["content-type"]).toBe("application/json");
    expect(sent.body).toEqual({
      version: 1,
      tool: "Read",
      input: { file_path: "notes.txt" },
      callId: read,
      session: {
        id: session.id,
        tenant: "acme",
        agent: "asker",
        workingDirectories: session.workingDirectories,
        mode: "default",
      },
      engine: { behavior: "allow", check: "read_only", reason: expect.any(String) as string },
    });

    // A person allows the call that asked: it runs, and the reply completes.
    await chat.confirm(asked[0]!);
    const rest = await collect(chat.untilSettled());
    expect(result(rest, grep).state).toBe(ToolResultState.TOOL_RESULT_STATE_SUCCESS);
    expect(last(rest)?.$case === "replyEnd" && last(rest)?.value).toMatchObject({
      finishedReason: FinishedReason.FINISHED_REASON_COMPLETED,
    });
    chat.close();

    // The audit trail has each answer and its latency.
    const audit = (await client.listAuditRecords({ sessionId: session.id })).records;
    const of = (id: string) => audit.find((r) => r.toolCallId === id && r.actor === "server")!;
    expect(of(read)).toMatchObject({
      kind: AuditKind.AUDIT_KIND_DENIED_BY_CHECK,
      check: "policy",
      reason: "reading notes is off limits",
      policy: {
        result: PolicyResult.POLICY_RESULT_DENY,
        reason: "reading notes is off limits",
        engineCheck: "read_only",
      },
    });
    expect(of(grep)).toMatchObject({
      kind: AuditKind.AUDIT_KIND_ASKED,
      check: "policy",
      policy: { result: PolicyResult.POLICY_RESULT_TIMEOUT, reason: "timed out after 300 ms" },
    });
    expect(of(glob)).toMatchObject({
      kind: AuditKind.AUDIT_KIND_ALLOWED_BY_CHECK,
      check: "read_only",
      policy: {
        result: PolicyResult.POLICY_RESULT_ALLOW,
        reason: "fine by policy",
        ignored: false,
      },
    });
    for (const id of [read, grep, glob]) expect(of(id).policy!.latencyMs).toBeGreaterThan(0);

    // The metrics show the answers and their latencies.
    const metrics = await (await fetch(parkway.metricsUrl!)).text();
    expect(metrics).toContain('parkway_policy_decisions_total{result="deny"} 1');
    expect(metrics).toContain('parkway_policy_decisions_total{result="timeout"} 1');
    expect(metrics).toContain('parkway_policy_decisions_total{result="allow"} 1');
    expect(metrics).toContain("parkway_policy_request_duration_seconds_count 3");
    expect(metrics).toContain(
      'parkway_permission_decisions_total{behavior="deny",check="policy"} 1',
    );
  });

  it("uses the tenant's service for an agent without one: a timeout denies (onError deny), also in bypass mode", async () => {
    const { pdp, client, log } = await start();
    const session = await client.createSession({ agentId: "tenant" });
    await client.setMode(session.id, PermissionMode.PERMISSION_MODE_BYPASS);
    const chat = await client.attach(session.id);
    const events = await collect(chat.message("three"));
    chat.close();
    expect(confirmRequests(events)).toEqual([]);
    const failed = log.entries.filter((e) => e.msg?.startsWith("policy service failed"));
    expect(failed.map((e) => [e.level, e.obj])).toMatchObject([
      ["warn", { tool: "Grep", result: "timeout", reason: "timed out after 300 ms" }],
    ]);
    expect(result(events, callId(events, "Grep"))).toEqual({
      text: "Permission denied: policy service timed out after 300 ms; onError denies",
      state: ToolResultState.TOOL_RESULT_STATE_DENIED,
    });
    expect(result(events, callId(events, "Read")).state).toBe(
      ToolResultState.TOOL_RESULT_STATE_DENIED,
    );
    expect(pdp.requests.map((r) => [r.body.session.agent, r.body.session.mode])).toEqual([
      ["tenant", "bypass"],
      ["tenant", "bypass"],
      ["tenant", "bypass"],
    ]);
    expect(result(events, callId(events, "Glob")).state).toBe(
      ToolResultState.TOOL_RESULT_STATE_SUCCESS,
    );
    expect(last(events)?.$case === "replyEnd" && last(events)?.value).toMatchObject({
      finishedReason: FinishedReason.FINISHED_REASON_COMPLETED,
    });
  });

  it.each([
    ["dont_ask", PermissionMode.PERMISSION_MODE_DONT_ASK],
    ["explore", PermissionMode.PERMISSION_MODE_EXPLORE],
  ])(
    "denies what it (or onError) would ask in %s mode, which never asks a person",
    async (name, mode) => {
      const { client } = await start();
      const session = await client.createSession({ agentId: "asker" });
      await client.setMode(session.id, mode);
      const chat = await client.attach(session.id);
      const events = await collect(chat.message("check"));
      chat.close();
      const [grep, glob] = [callId(events, "Grep"), callId(events, "Glob")];
      expect(confirmRequests(events)).toEqual([]);
      expect(result(events, glob)).toEqual({
        text: `Permission denied: a person should look at this, and ${name} mode denies instead`,
        state: ToolResultState.TOOL_RESULT_STATE_DENIED,
      });
      expect(result(events, grep)).toEqual({
        text: `Permission denied: policy service timed out after 300 ms; onError asks, and ${name} mode denies instead`,
        state: ToolResultState.TOOL_RESULT_STATE_DENIED,
      });
      expect(last(events)?.$case === "replyEnd" && last(events)?.value).toMatchObject({
        finishedReason: FinishedReason.FINISHED_REASON_COMPLETED,
      });

      // Audited as the service's denials are, with what it answered.
      const audit = (await client.listAuditRecords({ sessionId: session.id })).records;
      const of = (id: string) => audit.find((r) => r.toolCallId === id && r.actor === "server")!;
      expect(of(glob)).toMatchObject({
        kind: AuditKind.AUDIT_KIND_DENIED_BY_CHECK,
        check: "policy",
        policy: { result: PolicyResult.POLICY_RESULT_ASK, engineCheck: "read_only" },
      });
      expect(of(grep)).toMatchObject({
        kind: AuditKind.AUDIT_KIND_DENIED_BY_CHECK,
        check: "policy",
        policy: { result: PolicyResult.POLICY_RESULT_TIMEOUT },
      });
    },
  );

  it("never loosens an engine ASK, but may deny it (calls: all)", async () => {
    const { pdp, client, log } = await start();
    const session = await client.createSession({ agentId: "asker" });
    const chat = await client.attach(session.id);
    const events = await collect(chat.message("make"));
    chat.close();
    const [forbidden, out] = [callId(events, "Bash", 0), callId(events, "Bash", 1)];
    expect(result(events, forbidden)).toEqual({
      text: "Permission denied: no forbidden directories",
      state: ToolResultState.TOOL_RESULT_STATE_DENIED,
    });
    // The service answered allow to the engine's ASK: the call still asks, as the engine said.
    const asked = confirmRequests(events);
    expect(asked.map((c) => c.id)).toEqual([out]);
    expect(asked[0]!.decision).toMatchObject({
      behavior: PermissionBehavior.PERMISSION_BEHAVIOR_ASK,
      check: "mode.default",
      policy: {
        result: PolicyResult.POLICY_RESULT_ALLOW,
        engineBehavior: PermissionBehavior.PERMISSION_BEHAVIOR_ASK,
        ignored: true,
      },
    });
    expect(asked[0]!.suggestedRules.length).toBeGreaterThan(0);
    const ignored = log.entries.filter((e) => e.msg?.startsWith("policy service answer ignored"));
    expect(ignored.map((e) => e.obj)).toMatchObject([{ toolCallId: out, result: "allow" }]);
    expect(pdp.requests.map((r) => [r.body.tool, r.body.engine.behavior])).toEqual([
      ["Bash", "ask"],
      ["Bash", "ask"],
    ]);
  });

  it("abandons the request in flight when the reply is interrupted", async () => {
    const { pdp, client } = await start();
    const session = await client.createSession({ agentId: "patient" });
    const chat = await client.attach(session.id);
    await chat.send({ $case: "userMessage", value: { text: "search", content: [] } });
    await expect.poll(() => pdp.requests.length, { timeout: 10_000 }).toBe(1);
    await chat.interrupt();
    const events = await collect(chat.untilSettled());
    chat.close();
    expect(last(events)?.$case === "replyEnd" && last(events)?.value).toMatchObject({
      finishedReason: FinishedReason.FINISHED_REASON_INTERRUPTED,
    });
    await expect.poll(() => pdp.abandoned, { timeout: 10_000 }).toEqual([session.id]);
    expect(confirmRequests(events)).toEqual([]);
  });
});
