/**
 * Errors with stable codes, thrown by every layer below the transport. `src/server/errors.ts` alone maps
 * them to gRPC statuses; anything that is not a `ParkwayError` is treated as a bug and answered with a
 * generic INTERNAL status.
 */

/** A stable error code; each maps to one gRPC status code. */
export type ErrorCode =
  | "invalid_argument"
  | "not_found"
  | "already_exists"
  | "failed_precondition"
  | "resource_exhausted"
  | "unauthenticated"
  | "permission_denied"
  | "unavailable"
  | "unimplemented"
  | "deadline_exceeded"
  | "aborted"
  | "internal"
  | "data_loss";

/**
 * One invalid field of a request, named by its dot path from the request's root in proto field
 * names (e.g. `user_confirm_result.confirm_results[0].tool_call.input`).
 */
export interface FieldViolation {
  field: string;
  description: string;
}

/** One precondition that failed, e.g. `{type: "TOOL_CALL_STATE", subject: "call_1", description: "..."}`. */
export interface PreconditionViolation {
  type: string;
  subject: string;
  description: string;
}

/** Optional structured details, carried to clients as google.rpc error details. */
export interface ErrorDetails {
  fieldViolations?: FieldViolation[];
  preconditionViolations?: PreconditionViolation[];
  /** A stable UPPER_SNAKE reason and metadata (google.rpc.ErrorInfo). */
  reason?: string;
  metadata?: Record<string, string>;
}

/** An error whose message is safe to show to the client. */
export class ParkwayError extends Error {
  override readonly name = "ParkwayError";

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetails = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** INVALID_ARGUMENT naming the fields that are wrong. */
export function invalidArgument(violations: FieldViolation[], message?: string): ParkwayError {
  const text =
    message ??
    (violations.length > 0
      ? violations.map((v) => `${v.field}: ${v.description}`).join("; ")
      : "invalid argument");
  return new ParkwayError("invalid_argument", text, { fieldViolations: violations });
}

/** The most characters of an id an error quotes (the ids Parkway makes have about 30). */
const QUOTED_ID_CHARS = 64;

/**
 * An id as an error quotes it: whole, or when longer than `QUOTED_ID_CHARS` its first characters
 * and "…", so that an id of any length a client sends makes an error of bounded size.
 */
export function quotedId(id: string): string {
  if (id.length <= QUOTED_ID_CHARS) return id;
  // Not between the two halves of a surrogate pair.
  const end = /[\uD800-\uDBFF]/.test(id[QUOTED_ID_CHARS - 1]!)
    ? QUOTED_ID_CHARS - 1
    : QUOTED_ID_CHARS;
  return `${id.slice(0, end)}…`;
}

/** NOT_FOUND for a resource kind and id (quoted, see `quotedId`). */
export function notFound(kind: string, id: string): ParkwayError {
  const quoted = quotedId(id);
  return new ParkwayError("not_found", `${kind} ${JSON.stringify(quoted)} not found`, {
    reason: `${kind.toUpperCase().replace(/\W+/g, "_")}_NOT_FOUND`,
    metadata: { [kind]: quoted },
  });
}

/** FAILED_PRECONDITION with the violated conditions. */
export function failedPrecondition(
  message: string,
  violations: PreconditionViolation[] = [],
): ParkwayError {
  return new ParkwayError("failed_precondition", message, { preconditionViolations: violations });
}

/** UNIMPLEMENTED, naming the missing feature. */
export function unimplemented(feature: string): ParkwayError {
  return new ParkwayError("unimplemented", `${feature} is not implemented yet`);
}

/** UNAVAILABLE because the server is shutting down; a client retries on another server or later. */
export function shuttingDown(): ParkwayError {
  return new ParkwayError("unavailable", "server shutting down");
}

/** True for a ParkwayError, optionally of a given code. */
export function isParkwayError(err: unknown, code?: ErrorCode): err is ParkwayError {
  return err instanceof ParkwayError && (code === undefined || err.code === code);
}
