import type { WitnessedCall } from "./model-witness.js";
import type { NodeLife } from "./node-cluster.js";
import { tagOf } from "./storage-fault-ledger.js";

/**
 * The evidence of which node ran what of a reply, and when: a node's work on a reply is its model
 * calls (as the model saw them: `ModelWitness`, the node named by the model name its life was
 * configured with) and its tool runs (the Bash command appends a start and an end line with its
 * node's life, its message's tag and the time to a file of the shared working directory). Neither
 * depends on what the node could store: the event log holds only the writes of the lease's holder,
 * so it could never show a second node at work. A reply is named by its message's tag (each message
 * starts one reply). Two nodes ran a reply at once when the work of one life on it began before
 * the work of another life on it had ended, by the one clock of the machine they all run on.
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
  /** Model calls the model saw for a message of the harness. */
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
 * Checks that no two node lives worked on one reply at once, from the model's `calls` and the runs
 * file's text.
 */
export function checkOverlaps(
  calls: readonly WitnessedCall[],
  runs: string,
  lives: readonly NodeLife[],
  violations: string[],
): OverlapCounts {
  const counts: OverlapCounts = { toolRuns: 0, modelCalls: 0, handedOver: 0, orphanRuns: 0 };
  const work: Work[] = [];
  for (const call of calls) {
    const reply = tagOf(call.lastUser);
    if (!reply) continue;
    const life = call.model.replace(/^scripted\//, "");
    work.push({ life, reply, what: "model call", from: call.from, to: call.to });
    counts.modelCalls++;
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
        reply: tag,
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
