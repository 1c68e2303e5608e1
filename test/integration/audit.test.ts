import { createHash } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  AuditKind,
  type AuditRecord,
  createParkwayClient,
  type ParkwayClient,
  type ParkwayClientError,
  PermissionBehavior,
  PermissionMode,
  RuleScope,
  SessionStatus,
  type ServerEvent,
  type ToolCallBlock,
  ToolResultState,
} from "../../src/client/index.js";
import { parseConfig } from "../../src/config/index.js";
import {
  type Script,
  startScriptedModel,
  type ScriptedModelServer,
} from "../../src/model/scripted/index.js";
import { type RunningParkway, startParkway } from "../../src/runtime/start-parkway.js";
import { captureLog } from "../helpers/capture-log.js";
import { collect } from "../helpers/parkway-harness.js";

const sha = (token: string) => createHash("sha256").update(token).digest("hex");
const bash = (id: string, command: string) => ({ id, name: "Bash", input: { command } });

const script: Script = {
  turns: [
    {
      match: { lastUser: "^go" },
      toolCalls: [
        bash("c-allow", "touch a.txt"),
        bash("c-deny", "rm -r x"),
        bash("c-ask1", "mkdir -p out"),
        bash("c-ask2", "mv a.txt b.txt"),
      ],
    },
    {
      match: { lastToolResult: "not now" },
      toolCalls: [
        {
          id: "q1",
          name: "AskUser",
          input: {
            questions: [
              {
                question: "Which color?",
                header: "Color",
                options: [
                  { label: "Blue", description: "calm" },
                  { label: "Red", description: "bold" },
                ],
              },
            ],
          },
        },
      ],
    },
    { match: { toolName: "AskUser" }, text: "Blue it is." },
    { match: { lastUser: "^wait" }, toolCalls: [bash("late", "mkdir -p late")] },
    { match: { lastUser: "^again" }, toolCalls: [bash("late2", "mkdir -p late2")] },
    { match: { lastUser: "^hold" }, toolCalls: [bash("held", "mkdir -p held")] },
    { match: { lastToolResult: "Timed out|Permission denied" }, repeat: true, text: "ok" },
  ],
};

interface Env {
  model: ScriptedModelServer;
  parkway: RunningParkway;
  dataDir: string;
  workdir: string;
  clients: ParkwayClient[];
}

let env: Env | undefined;
afterEach(async () => {
  for (const c of env?.clients ?? []) c.close();
  await env?.parkway.close();
  await env?.model.close();
  env = undefined;
});

/** Parkway with tenants acme (token name "alice") and globex ("bob") on `dataDir`. */
function boot(model: ScriptedModelServer, dataDir: string, workdir: string) {
  return startParkway({
    config: parseConfig({
      listen: "127.0.0.1:0",
      data: dataDir,
      model: { url: model.url, name: "scripted", maxRetries: 0 },
      tenants: [
        { id: "acme", tokens: [{ name: "alice", sha256: sha("acme-secret") }] },
        { id: "globex", tokens: [{ name: "bob", sha256: sha("globex-secret") }] },
      ],
      agents: [
        {
          id: "test",
          workingDirectories: [workdir],
          permissions: { allow: ["Bash(touch:*)"], deny: ["Bash(rm:*)"], ask: [] },
        },
        { id: "slow", workingDirectories: [workdir], confirmTimeout: "300ms" },
      ],
    }),
    log: captureLog(),
  });
}

async function start(): Promise<Env> {
  const root = await mkdtemp(path.join(tmpdir(), "parkway-audit-"));
  const model = await startScriptedModel({ script });
  const dataDir = path.join(root, "data");
  const workdir = path.join(root, "work");
  return { model, dataDir, workdir, parkway: await boot(model, dataDir, workdir), clients: [] };
}

function client(e: Env, token: string): ParkwayClient {
  const c = createParkwayClient(e.parkway.address, { token });
  e.clients.push(c);
  return c;
}

/** The call a REQUIRE_* event in `events` announces. */
function announced(events: ServerEvent[]): ToolCallBlock {
  for (const e of events) {
    if (e.event?.$case === "requireUserConfirm" || e.event?.$case === "requireExternalExecution") {
      return e.event.value.toolCalls[0]!;
    }
  }
  throw new Error("no REQUIRE_* event");
}

/** The script's name of each call by the id the server gave it (learned from the events). */
const aliasOf = new Map<string, string>();
const idOf = (alias: string) => [...aliasOf].find(([, a]) => a === alias)?.[0] ?? alias;

/** Learns the script's names of a session's calls from its stored events (by each call's input). */
async function learnAliases(c: ParkwayClient, sessionId: string): Promise<void> {
  const names = new Map<string, string>();
  for (const turn of script.turns) {
    for (const call of turn.toolCalls ?? []) {
      names.set(call.name === "AskUser" ? "AskUser" : JSON.stringify(call.input), call.id!);
    }
  }
  const { lastSeq } = await c.getSession(sessionId);
  const chat = await c.attach(sessionId);
  for (;;) {
    const event = await chat.next();
    if (!event) break;
    const e = event.event;
    if (e?.$case === "toolCallEnd") {
      const input = JSON.stringify(JSON.parse(e.value.input) as unknown);
      const alias = names.get(input) ?? names.get("AskUser");
      if (alias) aliasOf.set(e.value.toolCallId, alias);
    }
    if (event.seq >= lastSeq) break;
  }
  chat.close();
}

const show = (r: AuditRecord) =>
  [
    AuditKind[r.kind].replace("AUDIT_KIND_", ""),
    r.actor,
    aliasOf.get(r.toolCallId) ?? r.toolCallId,
    r.rule || r.check,
  ]
    .filter((s) => s !== "")
    .join(" ");

async function listAll(c: ParkwayClient, pageSize: number): Promise<AuditRecord[][]> {
  const pages: AuditRecord[][] = [];
  let pageToken = "";
  do {
    const page = await c.listAuditRecords({ pageSize, pageToken });
    pages.push(page.records);
    pageToken = page.nextPageToken;
  } while (pageToken);
  return pages;
}

async function until(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 400 && !(await check()); i++) await new Promise((r) => setTimeout(r, 25));
}

describe("AuditService", () => {
  it("records every decision and answer per tenant, pages, filters, and survives a restart", async () => {
    env = await start();
    const acme = client(env, "acme-secret");
    const globex = client(env, "globex-secret");

    // Session A: rule allow, rule deny, ask → confirm with a rule, ask → deny, AskUser.
    const a = await acme.createSession({ agentId: "test" });
    const chat = await acme.attach(a.id);
    const started = await collect(chat.message("go"));
    const replyId = started[0]!.replyId;
    const ask1 = announced(started);
    expect(ask1.input).toBe(JSON.stringify({ command: "mkdir -p out" }));
    const accepted = `Bash(${ask1.suggestedRules[0]!.ruleContent})`;
    await chat.confirm(ask1, { rules: "suggested" });
    const ask2 = announced(await collect(chat.untilSettled()));
    expect(ask2.input).toBe(JSON.stringify({ command: "mv a.txt b.txt" }));
    await chat.deny(ask2, "not now");
    const question = announced(await collect(chat.untilSettled()));
    await chat.answer(question, { "Which color?": "Blue" });
    const end = await collect(chat.untilSettled());
    expect(end.at(-1)?.event?.$case).toBe("replyEnd");
    chat.close();
    const rule = (await acme.listRules({ sessionId: a.id })).find((r) => r.toolCallId === ask1.id);
    await acme.removeRule(rule!.id);
    await acme.addRules([
      {
        toolName: "Read",
        behavior: PermissionBehavior.PERMISSION_BEHAVIOR_ALLOW,
        scope: RuleScope.RULE_SCOPE_TENANT,
      },
    ]);

    // Session B: an ask that expires, a mode set, a denial by the mode.
    const b = await acme.createSession({ agentId: "slow" });
    const parked = await acme.reply({
      sessionId: b.id,
      input: { $case: "userMessage", value: { text: "wait", content: [] } },
    });
    expect(parked.status).toBe(SessionStatus.SESSION_STATUS_AWAITING_PERMISSION);
    await until(
      async () => (await acme.getSession(b.id)).status === SessionStatus.SESSION_STATUS_IDLE,
    );
    await acme.setMode(b.id, PermissionMode.PERMISSION_MODE_EXPLORE);
    await acme.reply({
      sessionId: b.id,
      input: { $case: "userMessage", value: { text: "again", content: [] } },
    });

    // Session C: an ask, then an interrupt.
    const c = await acme.createSession({ agentId: "test" });
    const chatC = await acme.attach(c.id);
    await collect(chatC.message("hold"));
    await chatC.interrupt();
    await collect(chatC.untilSettled());
    chatC.close();

    for (const id of [a.id, b.id, c.id]) await learnAliases(acme, id);
    const expected = [
      "ALLOWED_BY_RULE server c-allow Bash(touch:*)",
      "DENIED_BY_RULE server c-deny Bash(rm:*)",
      "ASKED server c-ask1 mode.default",
      "CONFIRMED alice c-ask1",
      "ASKED server c-ask2 mode.default",
      "DENIED alice c-ask2",
      "ALLOWED_BY_CHECK server q1 tool.ask_user",
      "ANSWERED alice q1",
      `RULE_REMOVED alice ${accepted}`,
      "RULE_ADDED alice Read",
      "ASKED server late mode.default",
      "EXPIRED expiry late",
      "MODE_SET alice",
      "DENIED_BY_CHECK server late2 mode.explore",
      "ASKED server held mode.default",
      "INTERRUPTED alice",
    ];
    const all = (await acme.listAuditRecords()).records;
    expect(all.map(show)).toEqual(expected);
    const byKind = (kind: AuditKind) => all.filter((r) => r.kind === kind);
    const [confirmed] = byKind(AuditKind.AUDIT_KIND_CONFIRMED);
    expect(confirmed).toMatchObject({ acceptedRules: [accepted], inputEdited: false });
    expect(confirmed!.sessionId).toBe(a.id);
    expect(byKind(AuditKind.AUDIT_KIND_DENIED)[0]!.reason).toBe("not now");
    expect(byKind(AuditKind.AUDIT_KIND_ANSWERED)[0]).toMatchObject({
      selected: ["Blue"],
      answeredOther: false,
      resultState: ToolResultState.TOOL_RESULT_STATE_SUCCESS,
    });
    expect(byKind(AuditKind.AUDIT_KIND_RULE_REMOVED)[0]!.ruleId).toBe(rule!.id);
    expect(byKind(AuditKind.AUDIT_KIND_RULE_ADDED)[0]).toMatchObject({
      scope: RuleScope.RULE_SCOPE_TENANT,
      sessionId: "",
    });
    expect(byKind(AuditKind.AUDIT_KIND_EXPIRED)[0]!.reason).toContain("denied");
    expect(byKind(AuditKind.AUDIT_KIND_MODE_SET)[0]!.mode).toBe(
      PermissionMode.PERMISSION_MODE_EXPLORE,
    );
    expect(byKind(AuditKind.AUDIT_KIND_INTERRUPTED)[0]!.sessionId).toBe(c.id);
    for (const r of all) {
      expect(r.time).toBeInstanceOf(Date);
      expect(r.id).toMatch(/^aud_/);
    }
    // Every record of a call names its session and reply.
    for (const r of all.slice(0, 8)) expect([r.sessionId, r.replyId]).toEqual([a.id, replyId]);

    // Pages of 4, oldest first, with a token only when more follow.
    const pages = await listAll(acme, 4);
    expect(pages.map((p) => p.length)).toEqual([4, 4, 4, 4]);
    expect(pages.flat().map((r) => r.id)).toEqual(all.map((r) => r.id));

    // Filters: by session, by call within a session, by call alone.
    const ofB = await acme.listAuditRecords({ sessionId: b.id });
    expect(ofB.records.map(show)).toEqual(expected.slice(10, 14));
    const ofAsk1 = await acme.listAuditRecords({ sessionId: a.id, toolCallId: idOf("c-ask1") });
    expect(ofAsk1.records.map(show)).toEqual(expected.slice(2, 4));
    const ofDeny = await acme.listAuditRecords({ toolCallId: idOf("c-deny") });
    expect(ofDeny.records.map(show)).toEqual([expected[1]]);
    // Session A's trail includes the removal of its session-scoped rule.
    const firstOfA = await acme.listAuditRecords({ sessionId: a.id, pageSize: 2 });
    const restOfA = await acme.listAuditRecords({
      sessionId: a.id,
      pageToken: firstOfA.nextPageToken,
    });
    expect([...firstOfA.records, ...restOfA.records].map(show)).toEqual(expected.slice(0, 9));
    expect(restOfA.nextPageToken).toBe("");

    // Another tenant sees none of them, not even by session id.
    expect((await globex.listAuditRecords()).records).toEqual([]);
    expect((await globex.listAuditRecords({ sessionId: a.id })).records).toEqual([]);

    // They survive a restart.
    for (const cl of env.clients.splice(0)) cl.close();
    await env.parkway.close();
    env.parkway = await boot(env.model, env.dataDir, env.workdir);
    const after = await client(env, "acme-secret").listAuditRecords();
    expect(after.records.map((r) => r.id)).toEqual(all.map((r) => r.id));
    expect(after.records.map(show)).toEqual(expected);
  }, 30_000);

  it("refuses a bad page_token or page_size, naming the field", async () => {
    env = await start();
    const acme = client(env, "acme-secret");
    const refused = (p: Promise<unknown>) =>
      p.then(
        () => {
          throw new Error("expected a refusal");
        },
        (e: unknown) => e as ParkwayClientError,
      );
    for (const pageToken of ["nope", "YTE6eHl6", "%%%", "x".repeat(300)]) {
      const err = await refused(acme.listAuditRecords({ pageToken }));
      expect(err.codeName).toBe("INVALID_ARGUMENT");
      expect(err.fieldViolations[0]?.field).toBe("page_token");
    }
    const big = await refused(acme.listAuditRecords({ pageSize: 1001 }));
    expect(big.codeName).toBe("INVALID_ARGUMENT");
    expect(big.fieldViolations[0]?.field).toBe("page_size");
    expect((await acme.listAuditRecords({ pageSize: 1000 })).records).toEqual([]);
  });
});
