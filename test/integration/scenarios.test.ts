import { readFile } from "node:fs/promises";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ParkwayClientError, type ParkwaySession } from "../../src/client/index.js";
import { SessionStatus } from "../../src/generated/parkway/v1/agent_service.js";
import { ToolResultState } from "../../src/generated/parkway/v1/content.js";
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import {
  PermissionBehavior,
  RuleScope,
  type PermissionRule,
} from "../../src/generated/parkway/v1/permission.js";
import { kind, startHarness, type Harness } from "../helpers/parkway-harness.js";
import { type ProcessHarness, startProcessHarness } from "../helpers/process-harness.js";
import {
  CallAliases,
  instantiate,
  loadScenarios,
  type Scenario,
  type Step,
} from "../helpers/scenario.js";

/**
 * "tool_result_end call_1 DENIED" for an event, trimmed to the detail the expectation names; call ids
 * are written as the aliases bound to them.
 */
function describeEvent(event: ServerEvent, detail: number, aliases: CallAliases): string {
  const k = kind(event);
  const value = event.event?.value as
    { toolCallId?: string; state?: number; toolCalls?: { id: string }[] } | undefined;
  const ids =
    value?.toolCallId !== undefined ? [value.toolCallId] : value?.toolCalls?.map((c) => c.id);
  const call = ids?.map((id) => aliases.alias(id)).join(",");
  const parts = [k];
  if (detail >= 2 && call) parts.push(call);
  if (detail >= 3 && value?.state !== undefined) {
    parts.push(ToolResultState[value.state]!.replace("TOOL_RESULT_STATE_", ""));
  }
  return parts.join(" ");
}

/**
 * Describes events as the expectation at the same place does, collapsing consecutive identical delta
 * entries; a TOOL_CALL_START facing `tool_call_start X` first binds X to its call id.
 */
function shapeAgainst(events: ServerEvent[], expected: string[], aliases: CallAliases): string[] {
  const out: string[] = [];
  for (const event of events) {
    const want = (expected[Math.min(out.length, expected.length - 1)] ?? "").split(" ");
    if (event.event?.$case === "toolCallStart" && want[0] === "tool_call_start" && want[1]) {
      aliases.bind(want[1], event.event.value.toolCallId);
    }
    const d = describeEvent(event, Math.max(1, want.length), aliases);
    if (kind(event).endsWith("_delta") && out[out.length - 1] === d) continue;
    out.push(d);
  }
  return out;
}

async function settle(chat: ParkwaySession): Promise<ServerEvent[]> {
  const events: ServerEvent[] = [];
  for await (const e of chat.untilSettled(AbortSignal.timeout(20_000))) events.push(e);
  return events;
}

/** Where a scenario runs: Parkway in this process, or in its own when a step crashes it. */
type Host = Pick<Harness, "client" | "model" | "workdir" | "restart" | "close"> &
  Partial<Pick<ProcessHarness, "crash">>;

class Runner {
  chat!: ParkwaySession;
  sessionId = "";
  suggested = new Map<string, PermissionRule[]>();
  aliases = new CallAliases();

  constructor(
    readonly h: Host,
    readonly scenario: Scenario,
  ) {}

  async open(): Promise<void> {
    const session = await this.h.client.createSession({ agentId: "test" });
    this.sessionId = session.id;
    this.chat = await this.h.client.attach(session.id);
  }

  remember(events: ServerEvent[]): void {
    for (const e of events) {
      if (
        e.event?.$case === "requireUserConfirm" ||
        e.event?.$case === "requireExternalExecution"
      ) {
        for (const call of e.event.value.toolCalls) {
          this.suggested.set(call.id, call.suggestedRules);
        }
      }
    }
  }

  async act(step: Step): Promise<void> {
    const chat = this.chat;
    if (step.send !== undefined) {
      await chat.send({ $case: "userMessage", value: { text: step.send, content: [] } });
    } else if (step.confirm) {
      await chat.send({
        $case: "userConfirmResult",
        value: {
          replyId: "",
          confirmResults: step.confirm.map((c) => ({
            confirmed: c.confirmed,
            toolCall: {
              id: this.aliases.id(c.call),
              name: "",
              input: c.input === undefined ? "" : JSON.stringify(c.input),
              state: 0,
              suggestedRules: [],
              askUser: undefined,
              decision: undefined,
              expiresAt: undefined,
            },
            rules:
              c.rules === "suggested"
                ? (this.suggested.get(this.aliases.id(c.call)) ?? [])
                : (c.rules ?? []).map((r) => ({
                    id: "",
                    toolName: r.tool_name,
                    ruleContent: r.rule_content,
                    behavior: PermissionBehavior.PERMISSION_BEHAVIOR_ALLOW,
                    scope:
                      RuleScope[
                        `RULE_SCOPE_${(r.scope ?? "session").toUpperCase()}` as keyof typeof RuleScope
                      ],
                    source: 0,
                    createdBy: "",
                    createdAt: undefined,
                    sessionId: "",
                    agentId: "",
                    toolCallId: "",
                  })),
            reason: c.reason ?? "",
          })),
        },
      });
    } else if (step.results) {
      await chat.send({
        $case: "externalExecutionResult",
        value: {
          replyId: "",
          executionResults: step.results.map((r) => ({
            id: this.aliases.id(r.call),
            name: "",
            output: r.output
              ? [{ block: { $case: "text", value: { id: "", text: r.output } } }]
              : [],
            state:
              ToolResultState[
                `TOOL_RESULT_STATE_${(r.state ?? "success").toUpperCase()}` as keyof typeof ToolResultState
              ],
            metadata: r.metadata,
            askUser: r.answers ? { answers: r.answers } : undefined,
          })),
        },
      });
    } else if (step.interrupt) {
      await chat.interrupt();
    } else if (step.new_session) {
      chat.close();
      await this.open();
    } else if (step.reconnect) {
      const last = chat.lastSeq;
      chat.close();
      this.chat = await this.h.client.attach(this.sessionId, { afterSeq: last });
    } else if (step.restart) {
      // The session notices the shutdown (UNAVAILABLE) and attaches again after its last seq.
      await this.h.restart();
    } else if (step.crash) {
      if (!this.h.crash) throw new Error("a crash step needs Parkway in a process of its own");
      await this.h.crash();
    }
  }

  async run(): Promise<void> {
    await this.open();
    for (const [index, step] of this.scenario.steps.entries()) {
      const label = `${this.scenario.name}: step ${index + 1}`;
      if (step.error) {
        const before = await this.h.client.getSession(this.sessionId);
        const err = await this.act(step).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err, label).toBeInstanceOf(ParkwayClientError);
        const e = err as ParkwayClientError;
        expect(e.codeName, `${label}: ${e.message}`).toBe(step.error.code);
        if (step.error.field) {
          expect(
            e.fieldViolations.map((v) => v.field),
            label,
          ).toContain(step.error.field);
        }
        if (step.error.message) {
          expect(e.message, label).toMatch(new RegExp(this.aliases.pattern(step.error.message)));
        }
        const after = await this.h.client.getSession(this.sessionId);
        expect(after.lastSeq, `${label}: nothing changes`).toBe(before.lastSeq);
        expect(after.status, `${label}: nothing changes`).toBe(before.status);
        continue;
      }
      await this.act(step);
      if (step.expect) {
        const events = await settle(this.chat);
        this.remember(events);
        expect(shapeAgainst(events, step.expect, this.aliases), label).toEqual(step.expect);
      }
    }
    await this.checkFinal();
  }

  async checkFinal(): Promise<void> {
    const final = this.scenario.final;
    if (!final) return;
    if (final.status) {
      const session = await this.h.client.getSession(this.sessionId);
      expect(SessionStatus[session.status]).toBe(`SESSION_STATUS_${final.status}`);
    }
    for (const text of final.model_saw ?? []) {
      const last = this.h.model.requests[this.h.model.requests.length - 1];
      expect(JSON.stringify(last?.messages)).toContain(text);
    }
    for (const [file, content] of Object.entries(final.files ?? {})) {
      expect(await readFile(path.join(this.h.workdir, file), "utf8")).toBe(content);
    }
    if (final.rules !== undefined) {
      const rules = await this.h.client.listRules({ sessionId: this.sessionId });
      expect(rules.length, rules.map((r) => `${r.toolName}(${r.ruleContent})`).join(", ")).toBe(
        final.rules,
      );
    }
  }
}

describe("scenarios", () => {
  for (const { file, text } of loadScenarios()) {
    it(file.replace(/\.json$/, ""), async () => {
      // The scenario's files are in the agent's directory, which its sessions share.
      const agent = (workdir: string) => ({
        shareWorkingDirectories: true,
        ...(instantiate(text, workdir).agent ?? {}),
      });
      const crashes = instantiate(text, "").steps.some((step) => step.crash);
      const h: Host = crashes
        ? await startProcessHarness(agent)
        : await startHarness({ turns: [] }, agent);
      try {
        const scenario = instantiate(text, h.workdir);
        await mkdir(h.workdir, { recursive: true });
        for (const [name, content] of Object.entries(scenario.files ?? {})) {
          await writeFile(path.join(h.workdir, name), content);
        }
        await h.model.reset(scenario.script as never);
        await new Runner(h, scenario).run();
      } finally {
        await h.close();
      }
    });
  }
});
