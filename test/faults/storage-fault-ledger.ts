/**
 * What a client of the storage fault harness was told (the acknowledged writes) and what it sent
 * without an answer, per session: the promises a restarted server is checked against.
 */

/** A parked call and the tag its Bash command appends to the effects file. */
export interface ParkedCall {
  callId: string;
  tag: string;
}

/** An input sent whose outcome the client never learnt (the server failed or went away). */
export type Unsure =
  | { kind: "create" }
  | { kind: "message"; text: string }
  | { kind: "confirm"; call: ParkedCall; requestId: string };

/** One session as its driver knows it. */
export interface TrackedSession {
  /** The harness's number for it, in every tag. */
  index: number;
  /** Its id (CreateSession was acknowledged). */
  id: string;
  /** Inputs sent so far: numbers tags and request ids. */
  n: number;
  /** The texts of the acknowledged user messages, in order. */
  messages: string[];
  /** The call parked by an acknowledged reply (or found parked after a restart), not yet answered. */
  parked: ParkedCall | undefined;
  /** Confirmations acknowledged, with the request id they were sent with. */
  confirmed: (ParkedCall & { requestId: string; resent?: boolean })[];
  /** Calls answered without an acknowledgement and no longer parked: never to be parked again. */
  settled: Set<string>;
  /** The input in flight when the server failed, reconciled after the restart. */
  unsure: Unsure | undefined;
  /** The last seq its Chat stream saw. */
  watchedSeq: number;
  /** The events its Chat stream saw since the last restart: seq → event id. */
  seen: Map<number, string>;
  /** Gaps its Chat stream crossed, to be explained by the stored log (see `checkJumps`). */
  jumps: [number, number][];
  /** Not found after a restart (a violation): no longer driven or checked. */
  lost?: boolean;
}

/** Counts for the report. */
export interface LedgerCounts {
  sessions: number;
  messages: number;
  parks: number;
  answers: number;
  texts: number;
  checks: number;
  resent: number;
  /** Events the Chat streams received. */
  streamed: number;
}

/** Every session driven, and the counts. */
export class Ledger {
  readonly sessions: TrackedSession[] = [];
  readonly counts: LedgerCounts = {
    sessions: 0,
    messages: 0,
    parks: 0,
    answers: 0,
    texts: 0,
    checks: 0,
    resent: 0,
    streamed: 0,
  };
  private readonly seen = new Set<string>();
  readonly violations: string[] = [];

  /** A session whose CreateSession was acknowledged. */
  add(id: string): TrackedSession {
    const session: TrackedSession = {
      index: this.sessions.length,
      id,
      n: 0,
      messages: [],
      parked: undefined,
      confirmed: [],
      settled: new Set(),
      unsure: undefined,
      watchedSeq: 0,
      seen: new Map(),
      jumps: [],
    };
    this.sessions.push(session);
    this.counts.sessions++;
    return session;
  }

  /** Notes a broken promise (once, however many restarts find it). */
  violation(text: string): void {
    if (this.seen.has(text)) return;
    this.seen.add(text);
    this.violations.push(text);
  }
}

/** The tag inside a parked Bash call's input (`echo "go s1-2" >> effects.txt`). */
export function tagOf(input: string): string | undefined {
  return /go s\d+-\d+/.exec(input)?.[0];
}

/** Whether `wanted` appears in `seen` in order (other entries may come between). */
export function isSubsequence(wanted: readonly string[], seen: readonly string[]): boolean {
  let i = 0;
  for (const s of seen) if (i < wanted.length && s === wanted[i]) i++;
  return i === wanted.length;
}

/** How many times each line occurs. */
export function countLines(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of text.split("\n").filter(Boolean)) {
    counts.set(line, (counts.get(line) ?? 0) + 1);
  }
  return counts;
}
