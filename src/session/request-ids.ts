import { createHash } from "node:crypto";
import { invalidArgument } from "../common/errors.js";
import type { Store, StoreBatch } from "../store/store.js";
import {
  type RequestData,
  RequestOrderRecord,
  requestOrderKey,
  RequestRecord,
  requestKey,
} from "./records.js";
import type { RequestIndex } from "./request-index.js";
import type { SessionInput } from "./session-input.js";

/** How many request ids a session remembers, and for how long. */
export interface RequestIdLimits {
  /** The most recent this many request ids of a session are remembered; older ones are forgotten. */
  perSession: number;
  /** A request id is remembered this long (milliseconds) after its input was applied. */
  ttlMs: number;
}

export const REQUEST_ID_DEFAULTS: RequestIdLimits = { perSession: 1000, ttlMs: 24 * 3_600_000 };

/** The longest request id accepted, in characters. */
export const MAX_REQUEST_ID_LENGTH = 256;

/** Every this many request ids, the oldest ones past their time are looked for and forgotten. */
const SWEEP_EVERY = 32;
/** Most request ids one sweep forgets. */
const SWEEP_LIMIT = 64;

/** The input kinds by their names in the proto. */
const WIRE_KIND: Record<SessionInput["kind"], string> = {
  user_message: "user_message",
  user_interrupt: "user_interrupt",
  confirm: "user_confirm_result",
  external_results: "external_execution_result",
};

/** The input's kind as the proto names it (user_message, user_confirm_result, ...). */
export function wireKind(input: SessionInput): string {
  return WIRE_KIND[input.kind];
}

/** JSON with object keys sorted and undefined members left out: one text per value. */
function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) out += (i === 0 ? "" : ",") + canonicalJson(value[i]);
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  // The default sort compares UTF-16 code units, as `<` does on strings.
  const keys = Object.keys(record).sort();
  let out = "{";
  for (const key of keys) {
    const member = record[key];
    if (member === undefined) continue;
    out += `${out.length === 1 ? "" : ","}${JSON.stringify(key)}:${canonicalJson(member)}`;
  }
  return `${out}}`;
}

/**
 * SHA-256 (hex) of the input as the server decoded it: its kind, reply id, text, and every field of
 * each answer (call id, confirmed, edited input, rules, reason; result state, output, metadata),
 * as JSON with sorted keys. Two inputs with the same digest are the same input.
 */
export function inputDigest(input: SessionInput): string {
  return createHash("sha256").update(canonicalJson(input)).digest("hex");
}

/** Refuses a request id too long to be remembered. */
export function checkRequestId(requestId: string): void {
  if (requestId.length > MAX_REQUEST_ID_LENGTH) {
    throw invalidArgument([
      {
        field: "request_id",
        description: `is ${requestId.length} characters long; at most ${MAX_REQUEST_ID_LENGTH} are accepted`,
      },
    ]);
  }
}

/** What recording a new request id writes, decided before its input is applied. */
export interface RequestTicket {
  readonly requestId: string;
  readonly kind: string;
  /** The input's digest (see `inputDigest`). */
  readonly digest: string;
  /** Request ids to forget in the same batch (the oldest past the bounds), with their order keys. */
  readonly forget: { requestIds: string[]; orders: number[] };
}

/**
 * A ticket whose digest is computed when first read: by the write that records it, after the
 * input's first event has gone to the streams.
 */
class NewRequest implements RequestTicket {
  #digest: string | undefined;

  constructor(
    readonly requestId: string,
    readonly kind: string,
    private readonly input: SessionInput,
    readonly forget: RequestTicket["forget"],
  ) {}

  get digest(): string {
    return (this.#digest ??= inputDigest(this.input));
  }
}

/** A request id seen before (`duplicate`), or a new one and what recording it writes. */
export type RequestLookup = { duplicate: RequestData } | { ticket: RequestTicket };

const expired = (appliedAt: string, now: number, limits: RequestIdLimits) =>
  Date.parse(appliedAt) + limits.ttlMs <= now;

/**
 * Looks a request id up in a session whose next request is number `next`. A remembered id with the
 * same input is a duplicate (to be answered with its first outcome); with a different input it is
 * refused with INVALID_ARGUMENT naming `request_id`. An id never seen, or forgotten, gets a ticket,
 * which also forgets what recording it pushes past `limits`. An id the session's `index` lacks is
 * not read from the store; one it may hold is (see `RequestIndex.lookedUp`).
 */
export async function lookupRequest(
  store: Store,
  sessionId: string,
  requestId: string,
  input: SessionInput,
  next: number,
  limits: RequestIdLimits,
  index?: RequestIndex,
  now = Date.now(),
): Promise<RequestLookup> {
  const kind = wireKind(input);
  let known: RequestData | undefined;
  if (!index || index.mayHold(requestId)) {
    known = await store.get(RequestRecord, requestKey(sessionId, requestId));
    index?.lookedUp(store, sessionId);
  }
  const forget: RequestTicket["forget"] = { requestIds: [], orders: [] };
  if (known && !expired(known.appliedAt, now, limits)) {
    // Version 1 records carry no digest: only the kind can be compared.
    const same =
      known.digest === undefined ? known.kind === kind : known.digest === inputDigest(input);
    if (!same) {
      throw invalidArgument(
        [
          {
            field: "request_id",
            description: `${JSON.stringify(requestId)} was used for a different input (${known.kind} applied at ${known.appliedAt}); send a new request_id for a new input`,
          },
        ],
        `request_id ${JSON.stringify(requestId)} was already used for a different input (${known.kind} applied at ${known.appliedAt}); nothing was applied`,
      );
    }
    return { duplicate: known };
  }
  // A forgotten id is recorded anew; its old place in the order goes.
  if (known?.order !== undefined) forget.orders.push(known.order);
  const forgetOrder = (order: number, id: string) => {
    if (forget.orders.includes(order)) return;
    forget.orders.push(order);
    if (id !== requestId) forget.requestIds.push(id);
  };
  // Past the count, the oldest id still within it goes.
  if (next >= limits.perSession) {
    const order = next - limits.perSession;
    const oldest = await store.get(RequestOrderRecord, requestOrderKey(sessionId, order));
    if (oldest) forgetOrder(order, oldest.requestId);
  }
  // Now and then, the oldest ids past their time go.
  if (next > 0 && next % SWEEP_EVERY === 0) {
    for await (const [key, entry] of store.entries(RequestOrderRecord, {
      gte: requestOrderKey(sessionId, 0),
      lt: requestOrderKey(sessionId, next),
      limit: SWEEP_LIMIT,
    })) {
      if (!expired(entry.appliedAt, now, limits)) break;
      forgetOrder(Number(key.slice(key.lastIndexOf("/") + 1)), entry.requestId);
    }
  }
  return { ticket: new NewRequest(requestId, kind, input, forget) };
}

/** Writes a new request id's record and its place in the order, and forgets what its ticket says. */
export function writeRequest(
  batch: StoreBatch,
  sessionId: string,
  ticket: RequestTicket,
  record: RequestData & { order: number },
): void {
  for (const id of ticket.forget.requestIds) batch.del(RequestRecord, requestKey(sessionId, id));
  for (const order of ticket.forget.orders) {
    batch.del(RequestOrderRecord, requestOrderKey(sessionId, order));
  }
  batch
    .put(RequestRecord, requestKey(sessionId, ticket.requestId), record)
    .put(RequestOrderRecord, requestOrderKey(sessionId, record.order), {
      requestId: ticket.requestId,
      appliedAt: record.appliedAt,
    });
}

/** Deletes every request id of a session (with the session). */
export async function deleteRequests(
  store: Store,
  batch: StoreBatch,
  sessionId: string,
): Promise<void> {
  const range = { gte: `${sessionId}/`, lt: `${sessionId}0` };
  for await (const key of store.keys(RequestRecord, range)) batch.del(RequestRecord, key);
  for await (const key of store.keys(RequestOrderRecord, range)) {
    batch.del(RequestOrderRecord, key);
  }
}
