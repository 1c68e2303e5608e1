import type { ErrorDetails } from "../common/errors.js";

/**
 * A status travels in a response's trailers: its message in `grpc-message` (percent-encoded), and
 * the message again with the details in `grpc-status-details-bin` (base64). Clients limit a
 * response's metadata (gRPC's C core, so Python's client, to 8 KiB: past it the call fails with
 * RESOURCE_EXHAUSTED whatever the server said), and an error may quote what the client sent (an
 * id, a label, a tool name) at any length. So every status is cut to these bounds, in UTF-8 bytes:
 * 1 KiB of message (at most 3 KiB percent-encoded), and details of about 3.5 KiB with the message
 * (under 5 KiB in base64).
 */
const MESSAGE_BYTES = 1024;
/** A field path, a precondition's type or subject, a reason, a metadata key or value. */
const NAME_BYTES = 256;
/** A violation's description. */
const DESCRIPTION_BYTES = 512;
/**
 * All violations together, field and precondition violations alike (each counted with a few bytes
 * of encoding); the first is kept whatever its size.
 */
const VIOLATIONS_BYTES = 1536;

/** `text`, or when longer than `maxBytes` in UTF-8 its start and "…" within `maxBytes`. */
export function clip(text: string, maxBytes: number): string {
  // A UTF-16 code unit is at most 3 bytes of UTF-8.
  if (text.length * 3 <= maxBytes || Buffer.byteLength(text) <= maxBytes) return text;
  const cut = Buffer.from(text)
    .subarray(0, maxBytes - 3)
    .toString();
  // A character cut in two decodes as U+FFFD: drop it.
  return `${cut.replace(/\uFFFD$/, "")}…`;
}

/** The message of a status, within its bound. */
export function boundMessage(message: string): string {
  return clip(message, MESSAGE_BYTES);
}

/** What is left of `VIOLATIONS_BYTES`, and how many violations were kept. */
interface Budget {
  left: number;
  kept: number;
}

/** The leading items of `items` that fit in what is left of `budget` (the first one kept always). */
function fitting<T>(items: readonly T[], size: (item: T) => number, budget: Budget): T[] {
  const out: T[] = [];
  for (const item of items) {
    const bytes = size(item) + 8;
    if (budget.kept > 0 && bytes > budget.left) break;
    budget.left -= bytes;
    budget.kept += 1;
    out.push(item);
  }
  return out;
}

/**
 * Details within their bounds: each string cut, and only the first violations that fit (field
 * violations first, then precondition violations); the message says what was refused.
 */
export function boundDetails(details: ErrorDetails): ErrorDetails {
  const budget: Budget = { left: VIOLATIONS_BYTES, kept: 0 };
  const out: ErrorDetails = {};
  if (details.fieldViolations) {
    const cut = details.fieldViolations.map((v) => ({
      field: clip(v.field, NAME_BYTES),
      description: clip(v.description, DESCRIPTION_BYTES),
    }));
    out.fieldViolations = fitting(
      cut,
      (v) => Buffer.byteLength(v.field) + Buffer.byteLength(v.description),
      budget,
    );
  }
  if (details.preconditionViolations) {
    const cut = details.preconditionViolations.map((v) => ({
      type: clip(v.type, NAME_BYTES),
      subject: clip(v.subject, NAME_BYTES),
      description: clip(v.description, DESCRIPTION_BYTES),
    }));
    out.preconditionViolations = fitting(
      cut,
      (v) =>
        Buffer.byteLength(v.type) + Buffer.byteLength(v.subject) + Buffer.byteLength(v.description),
      budget,
    );
  }
  if (details.reason !== undefined) out.reason = clip(details.reason, NAME_BYTES);
  if (details.metadata) {
    out.metadata = Object.fromEntries(
      Object.entries(details.metadata).map(([k, v]) => [clip(k, NAME_BYTES), clip(v, NAME_BYTES)]),
    );
  }
  return out;
}
