/**
 * Two builds of Parkway side by side: `npm run bench:compare -- <other checkout>` runs this tree's
 * compiled server and the other's (built there with `npm run build`; its node_modules may be a
 * link to this one's) on one scripted model in a process of its own, and has them answer rounds
 * of pings (a short text reply, `--pings` per session) in turns, the order alternating, so that
 * the machine's drift falls on both alike. It prints, per event of the reply, each side's p50 and
 * the median over rounds of the ratio of a round's p50 to the other side's round next to it (this
 * tree ÷ the other), and each server's CPU per ping. Changes of a few percent, which a suite run
 * twice cannot tell from the machine's drift, show here. With `--turn=park` each ping parks
 * instead (REQUIRE_USER_CONFIRM, then an interrupt ends the reply); with `--turn=resume` each ping
 * parks and is then confirmed (the noop tool runs, one more model call ends the reply), its events
 * timed from the confirmation and its CPU the park's and the resume's. With `--fresh` each ping is
 * the first message of a session created and attached for it (not timed; its CPU counted in the
 * ping's) and closed after it, as a new conversation's. `--profile=DIR` writes each server's V8
 * CPU profile into DIR/this and DIR/other (`bench/profile/summarize.ts` reads them).
 */
import { readdir, readFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { fullConfig } from "./lib/config.js";
import { pinLoadSide } from "./lib/cores.js";
import { attachRaw, caseOf, clientEvent } from "./lib/event-stream.js";
import { benchScript, startChild } from "./lib/child.js";
import { type Stack, startStack } from "./lib/stack.js";
import { summarize } from "./lib/stats.js";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    rounds: { type: "string", default: "40" },
    pings: { type: "string", default: "50" },
    turn: { type: "string", default: "ping" },
    fresh: { type: "boolean", default: false },
    profile: { type: "string" },
  },
});
const other = positionals[0];
if (!other) {
  console.error(
    "usage: npm run bench:compare -- <other checkout> [--rounds=40] [--pings=50] [--turn=ping|park|resume] [--fresh] [--profile=DIR]",
  );
  process.exit(2);
}
const rounds = Number(values.rounds);
const pings = Number(values.pings);
/** Rounds left out at the start, while both servers warm up. */
const WARMUP_ROUNDS = 2;
if (!["ping", "park", "resume"].includes(values.turn)) {
  console.error(`--turn is ping, park or resume, not ${values.turn}`);
  process.exit(2);
}
/** `--turn=park`: each ping parks (one bench_noop call asks), and an interrupt then ends it. */
const park = values.turn === "park";
/** `--turn=resume`: each ping parks, then is confirmed; timed from the confirmation. */
const resume = values.turn === "resume";
const fresh = values.fresh;
/** The events whose arrival after the message (the confirmation, when resuming) is compared. */
const EVENTS = resume
  ? ["inputAck", "toolCallEnd", "modelCallStart", "textBlockDelta", "replyEnd"]
  : park
    ? [
        "replyStart",
        "inputAck",
        "modelCallStart",
        "toolCallStart",
        "requireUserConfirm",
        "replyParked",
      ]
    : ["replyStart", "inputAck", "modelCallStart", "textBlockDelta", "replyEnd"];

type Side = "this" | "other";
const p50 = (values: number[]) => summarize(values).p50;

/** CPU time of every thread of `pid` so far, in µs (the scheduler's own count, in ns). */
async function cpuMicros(pid: number): Promise<number> {
  let ns = 0;
  for (const task of await readdir(`/proc/${pid}/task`)) {
    const stat = await readFile(`/proc/${pid}/task/${task}/schedstat`, "utf8").catch(() => "0");
    ns += Number(stat.split(" ")[0]);
  }
  return ns / 1000;
}

pinLoadSide();
const scratch = await mkdtemp(path.join(tmpdir(), "parkway-compare-"));
const config = {
  ...fullConfig(scratch),
  ...(values.profile ? { profileDir: path.resolve(values.profile) } : {}),
};
const model = await startChild<{ url: string }>(benchScript("scripted-model.ts"), {
  streamDeltas: config.streamDeltas,
});
const stacks: Record<Side, Stack> = {
  this: await startStack(config, { modelUrl: model.ready.url, profile: "this" }),
  other: await startStack(config, {
    modelUrl: model.ready.url,
    profile: "other",
    serverScript: path.resolve(other, "bench/servers/parkway-server.ts"),
  }),
};

/** One round on one side: each event's arrival times (µs after the message), and CPU per ping. */
async function round(stack: Stack): Promise<{ at: Record<string, number[]>; cpu: number }> {
  const open = async () => {
    const session = await stack.client.createSession({ agentId: "bench" });
    return { session, stream: await attachRaw(stack.client.agentService, session.id) };
  };
  let { session, stream } = await open();
  const at: Record<string, number[]> = {};
  const cpu0 = await cpuMicros(stack.parkway.pid);
  for (let i = 0; i < pings; i++) {
    if (fresh && i > 0) {
      await stream.finish();
      ({ session, stream } = await open());
    }
    const text = park || resume ? "park" : "first";
    const message = { $case: "userMessage" as const, value: { text, content: [] } };
    let sent = stream.send(clientEvent(session.id, message));
    let events = await stream.until(
      (e) => caseOf(e) === (park || resume ? "replyParked" : "replyEnd"),
    );
    if (resume) ({ sent, events } = await confirmAll(session.id, stream, events));
    if (park) {
      // The interrupt's REPLY_END and acknowledgement, in either order, before the next message.
      stream.send(clientEvent(session.id, { $case: "userInterrupt", value: { replyId: "" } }));
      const left = new Set(["replyEnd", "inputAck"]);
      await stream.until((e) => left.delete(caseOf(e)) && left.size === 0);
    }
    const seen = new Set<string>();
    for (const { event, at: when } of events) {
      const kind = caseOf(event);
      if (!seen.has(kind)) (at[kind] ??= []).push(when - sent);
      seen.add(kind);
    }
  }
  const cpu = ((await cpuMicros(stack.parkway.pid)) - cpu0) / pings;
  await stream.finish();
  return { at, cpu };
}

/** Confirms the call a park asked about; its send time and the events up to REPLY_END. */
async function confirmAll(
  sessionId: string,
  stream: Awaited<ReturnType<typeof attachRaw>>,
  parked: Awaited<ReturnType<Awaited<ReturnType<typeof attachRaw>>["until"]>>,
) {
  const asked = parked.find(({ event }) => caseOf(event) === "requireUserConfirm")?.event.event;
  if (asked?.$case !== "requireUserConfirm") throw new Error("the park asked nothing");
  const call = asked.value.toolCalls[0]!;
  const confirmResults = [
    { confirmed: true, toolCall: { ...call, input: "" }, rules: [], reason: "" },
  ];
  const sent = stream.send(
    clientEvent(sessionId, { $case: "userConfirmResult", value: { replyId: "", confirmResults } }),
  );
  return { sent, events: await stream.until((e) => caseOf(e) === "replyEnd") };
}

const all: Record<Side, Record<string, number[]>> = { this: {}, other: {} };
const cpu: Record<Side, number[]> = { this: [], other: [] };
const ratios: Record<string, number[]> = {};
try {
  for (let r = 0; r < rounds; r++) {
    const order: Side[] = r % 2 === 0 ? ["this", "other"] : ["other", "this"];
    const got: Partial<Record<Side, Awaited<ReturnType<typeof round>>>> = {};
    for (const side of order) got[side] = await round(stacks[side]);
    if (r < WARMUP_ROUNDS) continue;
    for (const side of order) {
      cpu[side].push(got[side]!.cpu);
      for (const [kind, times] of Object.entries(got[side]!.at)) {
        (all[side][kind] ??= []).push(...times);
      }
    }
    for (const kind of EVENTS) {
      const mine = got.this!.at[kind];
      const theirs = got.other!.at[kind];
      if (mine && theirs) (ratios[kind] ??= []).push(p50(mine) / p50(theirs));
    }
  }
} finally {
  await Promise.all([stacks.this.close(), stacks.other.close()]);
  await model.close();
  await rm(scratch, { recursive: true, force: true });
}

console.log(`${rounds - WARMUP_ROUNDS} rounds × ${pings} pings; this tree ÷ ${other}`);
for (const kind of EVENTS) {
  if (!ratios[kind]) continue;
  const mine = Math.round(p50(all.this[kind]!));
  const theirs = Math.round(p50(all.other[kind]!));
  console.log(
    `${kind.padEnd(16)} p50 ${mine} vs ${theirs} µs   paired ${p50(ratios[kind]).toFixed(3)}`,
  );
}
const cpuThis = Math.round(p50(cpu.this));
const cpuOther = Math.round(p50(cpu.other));
console.log(`server CPU per ping p50 ${cpuThis} vs ${cpuOther} µs`);
