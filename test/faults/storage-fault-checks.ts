import { readFile } from "node:fs/promises";
import { type ParkwayClient, ParkwayClientError } from "../../src/client/index.js";
import { type Session, SessionStatus } from "../../src/generated/parkway/v1/agent_service.js";
import { messageText } from "../../src/model/scripted/chat-request.js";
import type { ScriptedModelServer } from "../../src/model/scripted/index.js";
import { confirmInput } from "../helpers/confirm-input.js";
import { crashSkip } from "./fault-checks.js";
import { checkJumps } from "./stream-watchers.js";
import {
  countLines,
  isSubsequence,
  type Ledger,
  tagOf,
  type TrackedSession,
} from "./storage-fault-ledger.js";

/** What the checks after a restart need. */
export interface CheckContext {
  client: ParkwayClient;
  model: ScriptedModelServer;
  ledger: Ledger;
  /** The file every confirmed Bash call appends its tag to (outside the small disk). */
  effects: string;
}

const codeOf = (err: unknown) => (err instanceof ParkwayClientError ? err.codeName : String(err));

/** The lines of the effects file, counted. */
export async function readEffects(effects: string): Promise<Map<string, number>> {
  return countLines(await readFile(effects, "utf8").catch(() => ""));
}

/**
 * Checks every promise against the restarted server and brings the ledger up to date with what it
 * stored for the inputs that were in flight: every acknowledged session exists; every acknowledged
 * park is still parked and its effect has not happened; every acknowledged confirmation's effect
 * happened once, its call ended and was never asked again; the event log has no seq gap and holds
 * every event a stream saw; a re-sent acknowledged answer is refused or answered from memory, never
 * applied again; and every acknowledged user message is in the history the model is sent.
 */
export async function checkAfterRestart(ctx: CheckContext): Promise<void> {
  const effects = await readEffects(ctx.effects);
  for (const session of ctx.ledger.sessions) await checkSession(ctx, session, effects);
  for (const [line, count] of await readEffects(ctx.effects)) {
    if (count > 1) ctx.ledger.violation(`side effect ${line} happened ${count} times`);
  }
}

async function checkSession(
  ctx: CheckContext,
  s: TrackedSession,
  effects: Map<string, number>,
): Promise<void> {
  const { ledger } = ctx;
  if (s.lost) return;
  const name = `session s${s.index} (${s.id})`;
  let state: Session;
  try {
    state = await ctx.client.getSession(s.id);
  } catch (err) {
    ledger.violation(`${name}: acknowledged CreateSession, but GetSession says ${codeOf(err)}`);
    s.lost = true;
    return;
  }
  const pending = new Map(state.pendingToolCalls.map((c) => [c.id, c]));
  if (state.status === SessionStatus.SESSION_STATUS_RUNNING) {
    ledger.violation(`${name}: a reply is still running after the restart`);
  }

  // The input in flight when the server failed: applied or not, but whole.
  const unsure = s.unsure;
  s.unsure = undefined;
  if (unsure?.kind === "message" && !s.parked) {
    const call = state.pendingToolCalls[0];
    if (call) {
      const tag = tagOf(call.input);
      if (tag !== unsure.text) {
        ledger.violation(`${name}: parked ${call.id} (${tag}) after unanswered "${unsure.text}"`);
      }
      s.parked = { callId: call.id, tag: tag ?? "" };
    }
  } else if (unsure?.kind === "confirm") {
    if (pending.has(unsure.call.callId)) {
      s.parked = unsure.call;
    } else {
      s.parked = undefined;
      s.settled.add(unsure.call.callId);
    }
  }

  if (s.parked) {
    if (!pending.has(s.parked.callId)) {
      ledger.violation(
        `${name}: acknowledged park of ${s.parked.callId} (${s.parked.tag}) is gone (status ${SessionStatus[state.status]})`,
      );
      s.parked = undefined;
    } else if (effects.has(s.parked.tag)) {
      ledger.violation(`${name}: ${s.parked.tag} ran but its call is parked again`);
    }
  }
  for (const call of s.confirmed) {
    if (effects.get(call.tag) !== 1) {
      ledger.violation(
        `${name}: acknowledged confirmation of ${call.tag} has ${effects.get(call.tag) ?? 0} effects`,
      );
    }
  }
  for (const id of [...s.confirmed.map((c) => c.callId), ...s.settled]) {
    if (pending.has(id)) ledger.violation(`${name}: answered call ${id} is parked again`);
  }

  await checkEventLog(ctx, s, state.lastSeq, name);
  await resendAnswer(ctx, s, name);
  if (state.status === SessionStatus.SESSION_STATUS_IDLE) await checkHistory(ctx, s, name);
}

/** Attaches from seq 0: seqs 1..lastSeq each once, in order; acknowledged calls ended, asked once. */
async function checkEventLog(
  ctx: CheckContext,
  s: TrackedSession,
  lastSeq: number,
  name: string,
): Promise<void> {
  const ended = new Set<string>();
  const asked = new Map<string, number>();
  const stored = new Set<number>();
  const chat = await ctx.client.attach(s.id, { reconnectForMs: 0 });
  try {
    let expected = 1;
    while (expected <= lastSeq) {
      const event = await chat.next(AbortSignal.timeout(10_000));
      if (!event) {
        ctx.ledger.violation(`${name}: the event log ends before seq ${expected} of ${lastSeq}`);
        break;
      }
      if (event.seq === 0) continue;
      if (event.seq !== expected && !crashSkip(expected, event.seq)) {
        ctx.ledger.violation(`${name}: seq ${event.seq} where ${expected} was due`);
        break;
      }
      expected = event.seq + 1;
      stored.add(event.seq);
      const seen = s.seen.get(event.seq);
      if (seen !== undefined && seen !== event.id) {
        ctx.ledger.violation(
          `${name}: a stream saw ${seen} at seq ${event.seq}, stored ${event.id}`,
        );
      }
      const body = event.event;
      if (body?.$case === "toolResultEnd") ended.add(body.value.toolCallId);
      if (body?.$case === "requireUserConfirm") {
        for (const call of body.value.toolCalls) asked.set(call.id, (asked.get(call.id) ?? 0) + 1);
      }
    }
  } finally {
    chat.close();
  }
  // A stream may have seen the model's stream before a crash lost it (not yet stored): those seqs
  // stay noted, so that an event stored under one of them later is a violation.
  checkJumps(s, stored, (text) => ctx.ledger.violation(text));
  s.jumps = [];
  for (const seq of s.seen.keys()) if (seq <= lastSeq) s.seen.delete(seq);
  for (const call of s.confirmed) {
    if (!ended.has(call.callId)) {
      ctx.ledger.violation(
        `${name}: confirmed ${call.callId} (${call.tag}) has no TOOL_RESULT_END`,
      );
    }
    if (asked.get(call.callId) !== 1) {
      ctx.ledger.violation(
        `${name}: ${call.callId} asked ${asked.get(call.callId) ?? 0} times for confirmation`,
      );
    }
  }
}

/**
 * Sends the last acknowledged confirmation again, with its request id (answered from memory or
 * refused) and without (refused): neither may apply it again.
 */
async function resendAnswer(ctx: CheckContext, s: TrackedSession, name: string): Promise<void> {
  const last = s.confirmed.at(-1);
  if (!last || last.resent) return;
  last.resent = true;
  ctx.ledger.counts.resent++;
  const refused = ["FAILED_PRECONDITION", "NOT_FOUND", "INVALID_ARGUMENT"];
  await ctx.client
    .reply({ sessionId: s.id, requestId: last.requestId, input: confirmInput(last.callId) })
    .catch((err: unknown) => {
      if (!refused.includes(codeOf(err))) {
        ctx.ledger.violation(`${name}: retried answer of ${last.tag} failed with ${codeOf(err)}`);
      }
    });
  const again = await ctx.client.reply({ sessionId: s.id, input: confirmInput(last.callId) }).then(
    () => "OK",
    (err: unknown) => codeOf(err),
  );
  if (again !== "FAILED_PRECONDITION" && again !== "NOT_FOUND") {
    ctx.ledger.violation(`${name}: answer of ${last.tag} sent again got ${again}, not a refusal`);
  }
}

/** A user message the model answers at once: the request it gets carries the stored history. */
async function checkHistory(ctx: CheckContext, s: TrackedSession, name: string): Promise<void> {
  const n = s.n++;
  const text = `check s${s.index}-${n}`;
  try {
    await ctx.client.reply({
      sessionId: s.id,
      requestId: `m-${s.index}-${n}`,
      input: { $case: "userMessage", value: { text, content: [] } },
    });
  } catch (err) {
    ctx.ledger.violation(`${name}: "${text}" after the restart failed with ${codeOf(err)}`);
    return;
  }
  const request = ctx.model.requests.findLast((r) => {
    const last = r.messages.at(-1);
    return last?.role === "user" && messageText(last) === text;
  });
  const users = (request?.messages ?? []).filter((m) => m.role === "user").map(messageText);
  if (!isSubsequence(s.messages, users)) {
    const lost = s.messages.filter((m) => !users.includes(m));
    ctx.ledger.violation(
      `${name}: acknowledged messages missing from the history: ${lost.join(", ")}`,
    );
  }
  s.messages.push(text);
  ctx.ledger.counts.checks++;
}
