import { z } from "zod";
import { msgSchema, ruleSchema, usageSchema } from "../agent/types.js";
import { permissionModeSchema } from "../permissions/index.js";
import { defineRecord } from "../store/record.js";

/** Zero-padded decimal so keys sort numerically. */
export const pad = (n: number, width: number): string => n.toString().padStart(width, "0");

export const sessionStatusSchema = z.enum([
  "idle",
  "running",
  "awaiting_permission",
  "awaiting_external_result",
]);
export type SessionStatus = z.infer<typeof sessionStatusSchema>;

export const externalToolSchema = z.object({
  name: z.string(),
  description: z.string(),
  /** JSON Schema of the input, as a JSON string. */
  inputSchema: z.string(),
  /** Optional JSON Schema of a successful result's metadata, as a JSON string. */
  metadataSchema: z.string().optional(),
});
export type ExternalToolSpec = z.infer<typeof externalToolSchema>;

/** A session: key = session id (time-sortable). */
export const SessionRecord = defineRecord({
  kind: "session",
  version: 1,
  checkOnWrite: false,
  schema: z.object({
    id: z.string(),
    tenant: z.string(),
    agentId: z.string(),
    status: sessionStatusSchema,
    /** The session's own mode; unset follows the agent's. */
    mode: permissionModeSchema.optional(),
    workingDirectories: z.array(z.string()),
    externalTools: z.array(externalToolSchema),
    metadata: z.record(z.string(), z.unknown()).optional(),
    createdAt: z.string(),
    updatedAt: z.string(),
    /** Seq of the last stored event. */
    lastSeq: z.number().int().nonnegative(),
    /** Messages in the history (keys message/<session>/<index>). */
    messageCount: z.number().int().nonnegative(),
    /** The running or parked reply. */
    replyId: z.string().optional(),
    /** Events with seq ≤ this were compacted away (their replies live on as history messages). */
    compactedThrough: z.number().int().nonnegative().optional(),
    /** The REPLY_START seq of the most recent replies, oldest first (for compaction). */
    replyStarts: z.array(z.number().int().positive()).optional(),
    /** Request ids applied so far (the next one's `RequestOrderRecord` key). */
    requestCount: z.number().int().nonnegative().optional(),
    /**
     * Token usage of the finished replies, added in the write that ends each one (the active
     * reply's usage so far is in its record's message); absent is zeros.
     */
    usage: usageSchema.optional(),
    /** The server's crash count when the record was written (see `SeqEpoch`); absent is zero. */
    crashes: z.number().int().nonnegative().optional(),
    /**
     * The token of the lease the record was written under, with several nodes (see `resumeUnder`);
     * absent before any node held the session's lease.
     */
    leaseToken: z.number().int().nonnegative().optional(),
    /**
     * Seq ranges (first, last) never used: skipped after a crash (or a node's lease lost), past
     * events that streams may have been given and the crash lost (see `SeqEpoch`, `resumeUnder`).
     */
    skippedSeqs: z.array(z.tuple([z.number().int(), z.number().int()])).optional(),
  }),
});
export type SessionData = z.infer<typeof SessionRecord.schema>;

/** One history message: key = `<session id>/<index, 8 digits>`. */
export const MessageRecord = defineRecord({
  kind: "message",
  version: 1,
  checkOnWrite: false,
  schema: msgSchema,
});
export const messageKey = (sessionId: string, index: number) => `${sessionId}/${pad(index, 8)}`;

/** The session's active (running or parked) reply: key = session id. */
export const ReplyRecord = defineRecord({
  kind: "reply",
  version: 1,
  checkOnWrite: false,
  schema: z.object({
    replyId: z.string(),
    /** The assistant message accumulated so far, with every tool call's state. */
    message: msgSchema,
    iteration: z.number().int().nonnegative(),
    state: z.enum(["running", "parked"]),
    startedAt: z.string(),
    /** The seq of the last event reflected in `message`; later events replay onto it. */
    snapshotSeq: z.number().int().nonnegative().default(0),
    /** The W3C `traceparent` of the reply's span, when traced: its later runs are its children. */
    trace: z.string().optional(),
    /** When each call awaiting an answer started waiting (call id → ISO time). */
    waitingSince: z.record(z.string(), z.string()).optional(),
    /** When the reply first parked: its end is then notified (`reply.ended`). */
    parkedAt: z.string().optional(),
  }),
});
export type ReplyData = z.infer<typeof ReplyRecord.schema>;

const loggedEventSchema = z.object({
  id: z.string(),
  seq: z.number().int().positive(),
  replyId: z.string(),
  createdAt: z.string(),
  body: z.looseObject({ type: z.string() }),
});

/**
 * Consecutive logged events written together: key = `<session id>/<seq of the last one, 12 digits>`,
 * so the chunk holding seq N is the first key after N - 1. Version 1 held one event.
 */
export const EventRecord = defineRecord({
  kind: "event",
  version: 2,
  checkOnWrite: false,
  schema: z.object({ events: z.array(loggedEventSchema).min(1) }),
  migrations: { 1: (data) => ({ events: [data] }) },
});
export const eventKey = (sessionId: string, seq: number) => `${sessionId}/${pad(seq, 12)}`;

/** A stored permission rule: key = `<tenant>/<scope>/<rule id>` (see `recordKey` in rule-scope.ts). */
export const RuleRecord = defineRecord({
  kind: "rule",
  version: 1,
  schema: ruleSchema.extend({ id: z.string(), tenant: z.string() }),
});

/** Where a rule is stored: key = `<tenant>/<rule id>`, `scope` the scope's part of its key. */
export const RuleIdRecord = defineRecord({
  kind: "rule-id",
  version: 1,
  schema: z.object({ scope: z.string() }),
});

/**
 * Says every rule of a tenant has its RuleIdRecord: key = tenant. Rules stored before those records
 * existed get theirs in one pass, the first time one of the tenant's rules is looked up by id.
 */
export const RuleIdsIndexedRecord = defineRecord({
  kind: "rule-ids-indexed",
  version: 1,
  schema: z.object({ at: z.string() }),
});

/** A parked call's deadline: key = `<ISO time>/<session id>`, so due entries are a prefix scan. */
export const ExpiryRecord = defineRecord({
  kind: "expiry",
  version: 1,
  checkOnWrite: false,
  schema: z.object({ sessionId: z.string(), at: z.string() }),
});
export const expiryKey = (at: string, sessionId: string) => `${at}/${sessionId}`;

/** A reply that is running: key = session id. Read at start-up to end replies a crash cut short. */
export const RunningRecord = defineRecord({
  kind: "running",
  version: 1,
  checkOnWrite: false,
  schema: z.object({ replyId: z.string(), since: z.string() }),
});

/** A parked reply: key = session id. Counted by agent for the parked-replies gauge. */
export const ParkedRecord = defineRecord({
  kind: "parked",
  version: 1,
  checkOnWrite: false,
  schema: z.object({ agentId: z.string(), replyId: z.string() }),
});

/**
 * An applied input's request id, for idempotent retries: key = `<session id>/<request id>`. Written
 * in the batch that applies the input; a retry with the same id is compared by `digest` and answered
 * with the first outcome: the waiting notice in `parked` when the reply parked after the input
 * (written with the park), otherwise the reply's final message, history message `messageIndex`.
 * Version 1 held only `appliedAt` and `kind`.
 */
export const RequestRecord = defineRecord({
  kind: "request",
  version: 2,
  checkOnWrite: false,
  schema: z.object({
    appliedAt: z.string(),
    kind: z.string(),
    /** SHA-256 (hex) of the canonical input (see `inputDigest`); absent on version 1 records. */
    digest: z.string().optional(),
    /** The reply the input started or answered. */
    replyId: z.string().optional(),
    /** Where the reply's final message lands in the history. */
    messageIndex: z.number().int().nonnegative().optional(),
    /** Its key in the session's order of request ids (`RequestOrderRecord`). */
    order: z.number().int().nonnegative().optional(),
    /** The first outcome when the reply parked after the input: the waiting notice. */
    parked: z.object({ notice: msgSchema, status: sessionStatusSchema }).optional(),
  }),
  migrations: { 1: (data) => data },
});
export type RequestData = z.infer<typeof RequestRecord.schema>;
export const requestKey = (sessionId: string, requestId: string) => `${sessionId}/${requestId}`;

/**
 * A session's request ids in the order they were applied, to forget the oldest: key =
 * `<session id>/<order, 12 digits>`.
 */
export const RequestOrderRecord = defineRecord({
  kind: "request-order",
  version: 1,
  checkOnWrite: false,
  schema: z.object({ requestId: z.string(), appliedAt: z.string() }),
});
export const requestOrderKey = (sessionId: string, order: number) =>
  `${sessionId}/${pad(order, 12)}`;

/** A tenant's session, for listing: key = `<tenant>/<session id>` (ids sort by creation time). */
export const TenantSessionRecord = defineRecord({
  kind: "tenant-session",
  version: 1,
  schema: z.object({ sessionId: z.string() }),
});
export const tenantSessionKey = (tenant: string, sessionId: string) => `${tenant}/${sessionId}`;

/** How many sessions a tenant has: key = tenant. Kept in the batches that create and delete them. */
export const TenantCountRecord = defineRecord({
  kind: "tenant-count",
  version: 1,
  schema: z.object({ sessions: z.number().int().nonnegative() }),
});

/**
 * A session found to have lost data (by `parkway repair`): key = session id. While it exists the
 * session answers DATA_LOSS with `problem`; deleting the session removes it.
 */
export const DamagedSessionRecord = defineRecord({
  kind: "damaged-session",
  version: 1,
  schema: z.object({ problem: z.string(), at: z.string() }),
});
