import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import type { NodeLife } from "./node-cluster.js";
import { tagOf } from "./storage-fault-ledger.js";

/**
 * The evidence of which node ran what of a reply, and when: a node's work on a reply is its model
 * calls (MODEL_CALL_START to MODEL_CALL_END in the event log, the node named by the model name its
 * life was configured with) and its tool runs (the Bash command appends a start and an end line
 * with its node's life, its message's tag and the time to a file of the shared working directory).
 * Two nodes ran a reply at once when the work of one life on the reply began before the work of
 * another life on it had ended, by the one clock of the machine they all run on.
 */

/** One piece of work of a node life on a reply, in milliseconds since the epoch. */
interface Work {
  life: string;
  reply: string;
  what: string;
  from: number;
  to: number;
}

/** What the overlap check saw. */
export interface OverlapCounts {
  /** Tool runs found in the runs file. */
  toolRuns: number;
  /** Model calls found in the event logs. */
  modelCalls: number;
  /** Replies worked on by more than one node life (parked on one, answered on another). */
  handedOver: number;
  /** Tool runs still going after their node was SIGKILLed (Bash runs in a process group of its own). */
  orphanRuns: number;
}

/** The model name of a node life, from which its model calls are told apart. */
export const modelNameOf = (life: string): string => `scripted/${life}`;

/** The Bash command of a parked call: records its run with its node life, and appends its tag. */
export const RUN_COMMAND =
  'echo "start $PARKWAY_FAULTS_LIFE {{last_user}} $(date +%s%N)" >> runs.txt; sleep 0.05; ' +
  'echo "{{last_user}}" >> effects.txt; echo "end $PARKWAY_FAULTS_LIFE {{last_user}} $(date +%s%N)" >> runs.txt';

/**
 * Checks that no two node lives worked on one reply at once; `events` are the event logs of every
 * session, `runs` the runs file's text.
 */
export function checkOverlaps(
  events: readonly ServerEvent[],
  runs: string,
  lives: readonly NodeLife[],
  violations: string[],
): OverlapCounts {
  const counts: OverlapCounts = { toolRuns: 0, modelCalls: 0, handedOver: 0, orphanRuns: 0 };
  const work: Work[] = [];
  const replyOfTag = new Map<string, string>();
  const calls = new Map<string, Work>();
  const ms = (e: ServerEvent) => e.createdAt?.getTime() ?? 0;
  for (const e of events) {
    const body = e.event;
    if (body?.$case === "modelCallStart") {
      const life = body.value.modelName.replace(/^scripted\//, "");
      const call: Work = { life, reply: e.replyId, what: "model call", from: ms(e), to: ms(e) };
      calls.set(e.replyId, call);
      work.push(call);
      counts.modelCalls++;
    } else if (body?.$case === "modelCallEnd") {
      const call = calls.get(e.replyId);
      if (call) call.to = ms(e);
      calls.delete(e.replyId);
    } else if (body?.$case === "requireUserConfirm") {
      for (const c of body.value.toolCalls) {
        const tag = tagOf(c.input);
        if (tag) replyOfTag.set(tag, e.replyId);
      }
    }
  }

  const death = new Map(lives.map((l) => [l.name, l]));
  const started = new Map<string, Work>();
  for (const line of runs.split("\n").filter(Boolean)) {
    const m = /^(start|end) (\S+) (go s\d+-\d+) (\d+)$/.exec(line);
    if (!m) {
      violations.push(`runs file: unexpected line ${line}`);
      continue;
    }
    const [, edge, life, tag, ns] = m as unknown as [string, string, string, string, string];
    // Whole milliseconds, as the events' times: work that ends in a millisecond another begins in
    // does not overlap it.
    const at = Math.floor(Number(BigInt(ns) / 1_000_000n));
    const key = `${life} ${tag}`;
    if (edge === "start") {
      const run: Work = {
        life,
        reply: replyOfTag.get(tag) ?? tag,
        what: "tool run",
        from: at,
        to: at,
      };
      started.set(key, run);
      work.push(run);
      counts.toolRuns++;
    } else {
      const run = started.get(key);
      if (run) run.to = at;
      const ended = death.get(life)?.endedAt;
      if (ended !== undefined && ended < at) counts.orphanRuns++;
    }
  }

  const byReply = new Map<string, Work[]>();
  for (const w of work) byReply.set(w.reply, [...(byReply.get(w.reply) ?? []), w]);
  for (const [reply, list] of byReply) {
    // Each life's span of work on the reply: two spans of different lives must not intersect.
    const spans = new Map<string, Work>();
    for (const w of list) {
      const span = spans.get(w.life);
      if (!span) spans.set(w.life, { ...w });
      else {
        span.from = Math.min(span.from, w.from);
        span.to = Math.max(span.to, w.to);
      }
    }
    if (spans.size > 1) counts.handedOver++;
    const sorted = [...spans.values()].sort((a, b) => a.from - b.from);
    let before = sorted[0]!;
    for (const after of sorted.slice(1)) {
      if (after.from < before.to) {
        const detail = list
          .map((w) => `${w.life} ${w.what} ${w.from}..${w.to}`)
          .sort()
          .join("; ");
        violations.push(
          `reply ${reply}: ${before.life} and ${after.life} ran it at once (${detail})`,
        );
      }
      // Compared with the span that reaches furthest so far.
      if (after.to > before.to) before = after;
    }
  }
  return counts;
}
