import { z } from "zod";
import { type ErrorCode, isParkwayError, notFound, ParkwayError } from "../common/errors.js";
import { newId } from "../common/ids.js";
import type { Logger } from "../common/logger.js";
import { Wakeup } from "../common/wakeup.js";
import { defineRecord } from "../store/record.js";
import type { StoreSignals } from "../store/signals.js";
import { ConflictError } from "../store/storage-failure.js";
import type { Store } from "../store/store.js";
import type { Applied } from "./apply-input.js";
import { SessionRecord } from "./records.js";
import { LeaseRecord } from "./session-leases.js";
import type { SessionInput } from "./session-input.js";
import { inboxTopic, outcomeTopic } from "./signal-topics.js";
import { waitForOutcome } from "./stored-outcome.js";

/**
 * An input forwarded to the node that serves its session: key = `<session id>/<time>-<id>`, so a
 * session's entries are read in the order they were sent.
 */
export const InboxRecord = defineRecord({
  kind: "inbox",
  version: 1,
  schema: z.object({
    tenant: z.string(),
    principal: z.string(),
    /** The client's request id, or one given by the forwarding node (applied once either way). */
    requestId: z.string(),
    input: z.looseObject({
      kind: z.enum(["user_message", "user_interrupt", "confirm", "external_results"]),
    }),
    /** The node that forwarded it. */
    node: z.string(),
    /** The W3C `traceparent` of the call that brought it, when traced. */
    trace: z.string().optional(),
  }),
});

/** How a forwarded input was applied: key = the entry's key. */
export const InboxOutcomeRecord = defineRecord({
  kind: "inbox-outcome",
  version: 1,
  schema: z.object({
    replyId: z.string().optional(),
    duplicate: z.boolean().optional(),
    /** The refusal, as the serving node's error. */
    error: z
      .object({ code: z.string(), message: z.string(), details: z.looseObject({}) })
      .optional(),
  }),
});
type Outcome = z.infer<typeof InboxOutcomeRecord.schema>;
type Entry = z.infer<typeof InboxRecord.schema>;

/** Applies an input on this node; UNAVAILABLE SESSION_LEASED when another node serves the session. */
export type ApplyHere = (
  tenant: string | undefined,
  sessionId: string,
  input: SessionInput,
  principal: string,
  requestId: string | undefined,
  trace?: string,
) => Promise<Applied>;

export interface InboxOptions {
  store: Store;
  signals: StoreSignals;
  log: Logger;
  nodeId: string;
  /** How often a waiting node reads again without a signal (and tries to take the session). */
  pollMs: number;
  /** How long an input waits for the serving node before UNAVAILABLE. */
  timeoutMs: number;
}

/**
 * True for the refusal of a node that does not serve the session, or whose write found the
 * session's lease gone to another node (nothing of it was written).
 */
export const isLeased = (err: unknown): boolean =>
  (isParkwayError(err, "unavailable") && err.details.reason === "SESSION_LEASED") ||
  (err instanceof ConflictError && err.kind === LeaseRecord.kind);

const errorRecord = (err: unknown): NonNullable<Outcome["error"]> =>
  isParkwayError(err)
    ? { code: err.code, message: err.message, details: { ...err.details } }
    : { code: "internal", message: "the input could not be applied", details: {} };

/**
 * Inputs across nodes: an input for a session another node serves (it runs the session's reply) is
 * stored in that session's inbox and signalled; the serving node applies its inbox entries in order,
 * each through the same path as its own inputs (once per request id), and stores each outcome in the
 * same write that removes the entry. The forwarding node waits for the outcome; when no node
 * serves the session any more (the serving node let it go, or died and its lease expired) it takes
 * the session itself and applies what is waiting.
 */
export class Inbox {
  private readonly draining = new Map<string, { again: boolean; done: Promise<void> }>();

  constructor(
    private readonly options: InboxOptions,
    private readonly here: ApplyHere,
  ) {}

  /** Applies an input here, or on the node that serves its session (see the class). */
  async apply(
    tenant: string,
    sessionId: string,
    input: SessionInput,
    principal: string,
    requestId: string | undefined,
    trace?: string,
  ): Promise<Applied> {
    try {
      return await this.here(tenant, sessionId, input, principal, requestId, trace);
    } catch (err) {
      if (!isLeased(err)) throw err;
    }
    return this.forward(tenant, sessionId, input, principal, requestId ?? newId("fwd"), trace);
  }

  /** Applies the session's waiting entries here, one drain at a time (see the class). */
  drain(sessionId: string): Promise<void> {
    const current = this.draining.get(sessionId);
    if (current) {
      current.again = true;
      return current.done;
    }
    const state = { again: true, done: Promise.resolve() };
    state.done = (async () => {
      while (state.again) {
        state.again = false;
        await this.drainOnce(sessionId);
      }
    })()
      .catch((err: unknown) => {
        if (!isLeased(err)) this.options.log.warn({ err, session: sessionId }, "inbox not read");
      })
      .finally(() => this.draining.delete(sessionId));
    this.draining.set(sessionId, state);
    return state.done;
  }

  private async drainOnce(sessionId: string): Promise<void> {
    const { store, signals } = this.options;
    const entries: [string, Entry][] = [];
    for await (const entry of store.entries(InboxRecord, {
      gt: `${sessionId}/`,
      lt: `${sessionId}0`,
    })) {
      entries.push(entry);
    }
    for (const [key, entry] of entries) {
      let outcome: Outcome;
      try {
        const input = entry.input as unknown as SessionInput;
        const applied = await this.here(
          entry.tenant,
          sessionId,
          input,
          entry.principal,
          entry.requestId,
          entry.trace,
        );
        outcome = {
          ...(applied.replyId ? { replyId: applied.replyId } : {}),
          ...(applied.duplicate ? { duplicate: true } : {}),
        };
      } catch (err) {
        // Another node serves the session now: the entry waits for it.
        if (isLeased(err)) throw err;
        outcome = { error: errorRecord(err) };
      }
      try {
        await store
          .batch()
          .check(InboxRecord, key, (r) => r !== undefined, "the forwarded input")
          .put(InboxOutcomeRecord, key, outcome)
          .del(InboxRecord, key)
          .write();
      } catch (err) {
        if (!(err instanceof ConflictError)) throw err;
      }
      signals.signal(outcomeTopic(key));
    }
  }

  private async forward(
    tenant: string,
    sessionId: string,
    input: SessionInput,
    principal: string,
    requestId: string,
    trace: string | undefined,
  ): Promise<Applied> {
    const { store, signals, pollMs, timeoutMs, nodeId } = this.options;
    const session = await store.get(SessionRecord, sessionId);
    if (!session || session.tenant !== tenant) throw notFound("session", sessionId);
    const key = `${sessionId}/${String(Date.now()).padStart(15, "0")}-${newId("in")}`;
    const wakeup = new Wakeup();
    const unwatch = signals.watch(outcomeTopic(key), wakeup.notify);
    try {
      await store
        .batch()
        .put(InboxRecord, key, {
          tenant,
          principal,
          requestId,
          input: input,
          node: nodeId,
          ...(trace ? { trace } : {}),
        })
        .write();
      signals.signal(inboxTopic(sessionId));
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const outcome = await store.get(InboxOutcomeRecord, key);
        if (outcome) {
          await store.batch().del(InboxOutcomeRecord, key).write();
          return this.applied(outcome, sessionId, requestId);
        }
        if (Date.now() >= deadline && (await this.withdraw(key))) {
          throw new ParkwayError(
            "unavailable",
            `the node serving session ${sessionId} did not take the input in time; it was not applied, retry`,
            { reason: "SESSION_LEASED", metadata: { session_id: sessionId } },
          );
        }
        // The serving node may have let the session go, or died: take it, and apply what waits.
        await this.drain(sessionId);
        await wakeup.wait(pollMs);
      }
    } finally {
      unwatch();
    }
  }

  /** Removes an entry no node has taken yet; false when one already did. */
  private async withdraw(key: string): Promise<boolean> {
    try {
      await this.options.store
        .batch()
        .check(InboxRecord, key, (r) => r !== undefined, "the forwarded input")
        .del(InboxRecord, key)
        .write();
      return true;
    } catch (err) {
      if (err instanceof ConflictError) return false;
      throw err;
    }
  }

  private applied(outcome: Outcome, sessionId: string, requestId: string): Applied {
    if (outcome.error) {
      const { code, message, details } = outcome.error;
      throw new ParkwayError(code as ErrorCode, message, details);
    }
    const { store, signals, pollMs } = this.options;
    const firstOutcome = () => waitForOutcome(store, signals, sessionId, requestId, pollMs);
    return {
      ...(outcome.replyId ? { replyId: outcome.replyId } : {}),
      ...(outcome.duplicate ? { duplicate: true } : {}),
      firstOutcome,
    };
  }
}
