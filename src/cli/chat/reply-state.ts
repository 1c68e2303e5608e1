import {
  type ServerEvent,
  type Session,
  SessionStatus,
  type ToolCallBlock,
  ToolCallState,
} from "./wire.js";

/** A call the parked reply waits for, and which answer it needs. */
export interface Pending {
  call: ToolCallBlock;
  kind: "confirm" | "external";
}

/** Events that belong to a reply in progress. */
const REPLY_EVENTS = new Set([
  "modelCallStart",
  "modelCallEnd",
  "textBlockStart",
  "textBlockDelta",
  "textBlockEnd",
  "thinkingBlockStart",
  "thinkingBlockDelta",
  "thinkingBlockEnd",
  "toolCallStart",
  "toolCallDelta",
  "toolCallEnd",
  "toolResultStart",
  "toolResultTextDelta",
  "toolResultDataDelta",
]);

/**
 * What the chat knows about the session's reply, kept from its events: whether one runs, whether
 * it is parked, and the calls it waits for (in announcement order). Calls come from REQUIRE_*
 * events, including the ones an attach or a reconnect announces again (seq 0), and leave when their
 * result starts (a confirmed call) or ends, or when the reply ends; so a call answered elsewhere
 * stops waiting here too.
 */
export class ReplyState {
  readonly pending = new Map<string, Pending>();
  /** A reply is running (not parked). */
  running = false;
  /** The reply is parked on the pending calls. */
  parked = false;
  /** The user put the pending calls off ("answer later"). */
  later = false;
  /** How many times a reply ended or parked: a change tells that a reply settled. */
  settled = 0;

  /** Starts over from a session as GetSession returned it. */
  reset(info: Session): void {
    this.pending.clear();
    for (const call of info.pendingToolCalls) {
      const kind = call.state === ToolCallState.SUBMITTED ? "external" : "confirm";
      this.pending.set(call.id, { call, kind });
    }
    this.running = info.status === SessionStatus.RUNNING;
    this.parked = this.pending.size > 0;
    this.later = false;
    this.settled++;
  }

  /** True when pending calls wait for the user's answers now. */
  get asking(): boolean {
    return this.pending.size > 0 && this.parked && !this.later;
  }

  /** Applies one event; returns the id of a pending call that stopped waiting, if one did. */
  apply(event: ServerEvent): string | undefined {
    const body = event.event;
    if (!body) return undefined;
    let resolved: string | undefined;
    switch (body.$case) {
      case "replyStart":
        this.running = true;
        this.parked = false;
        break;
      case "replyEnd":
        this.running = false;
        this.parked = false;
        this.later = false;
        this.pending.clear();
        this.settled++;
        break;
      case "replyParked":
        this.running = false;
        this.parked = true;
        this.settled++;
        break;
      case "requireUserConfirm":
      case "requireExternalExecution": {
        const kind = body.$case === "requireUserConfirm" ? "confirm" : "external";
        for (const call of body.value.toolCalls) {
          const known = this.pending.get(call.id);
          if (known?.kind === kind) known.call = call;
          else this.pending.set(call.id, { call, kind });
        }
        if (event.seq === 0) {
          // Announced again after an attach or a reconnect: the reply is parked on them.
          this.running = false;
          this.parked = true;
          this.later = false;
        }
        break;
      }
      case "toolResultStart":
      case "toolResultEnd": {
        const id = body.value.toolCallId;
        const entry = this.pending.get(id);
        if (entry && (body.$case === "toolResultEnd" || entry.kind === "confirm")) {
          this.pending.delete(id);
          resolved = id;
        }
        break;
      }
      default:
        break;
    }
    if (REPLY_EVENTS.has(body.$case) && this.pending.size === 0) {
      this.running = true;
      this.parked = false;
    }
    if (this.pending.size === 0) this.parked = false;
    return resolved;
  }

  /** Drops `entry` after it was answered, unless the call has since come back as another kind. */
  answered(entry: Pending): void {
    if (this.pending.get(entry.call.id) === entry) this.pending.delete(entry.call.id);
  }

  /**
   * Marks the reply as running again after the last pending call was answered, unless it settled
   * since `settledBefore` (then its events already told what it does).
   */
  resumed(settledBefore: number): void {
    if (this.pending.size === 0 && this.settled === settledBefore) {
      this.running = true;
      this.parked = false;
    }
  }
}
