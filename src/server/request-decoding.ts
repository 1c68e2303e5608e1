import {
  createFileRegistry,
  type DescMessage,
  type FileRegistry,
  fromBinary,
  ScalarType,
  toBinary,
} from "@bufbuild/protobuf";
import {
  isReflectList,
  isReflectMap,
  type ReflectMessage,
  reflect,
} from "@bufbuild/protobuf/reflect";
import { type FieldViolation, invalidArgument, type ParkwayError } from "../common/errors.js";
import { limitReached } from "../common/limits.js";
import { descriptorSet } from "./descriptor-set.js";

/**
 * Request messages whose 64-bit integers do not fit a JavaScript number.
 *
 * The handlers take ts-proto messages, whose 64-bit integers are numbers (`forceLong=number`): its
 * decoder throws on a value beyond ±(2^53 − 1), and grpc-js answers a request it cannot decode with
 * INTERNAL "Error deserializing request", naming nothing. Such values are legal on the wire (the Go
 * and Python clients send any uint64), so `withSafeDecoding` decodes a request the generated
 * decoder refuses again through the descriptor set, with 64-bit integers as bigints: each value out
 * of range becomes a field violation naming its field (as the request spells it, e.g.
 * `attach.after_seq`) and reads as 0, and the message is handed on marked with the refusal. Every
 * adapter refuses a marked request with INVALID_ARGUMENT before its handler sees it (see
 * `checkedRequest`); Chat refuses a marked input with its acknowledgement, and a marked attach by
 * ending the stream. A request the generated decoder takes costs nothing more.
 */

const REFUSAL = Symbol("parkway.requestRefusal");

/** A decoded request the server refuses: what its refusal says. */
type Marked = { [REFUSAL]?: ParkwayError };

/** The refusal a request was decoded with (see `withSafeDecoding`), if any. */
export function requestRefusal(message: unknown): ParkwayError | undefined {
  return typeof message === "object" && message !== null ? (message as Marked)[REFUSAL] : undefined;
}

/** `message`, unless it was decoded with a refusal (see `withSafeDecoding`): that is thrown. */
export function checkedRequest<T>(message: T): T {
  const refusal = requestRefusal(message);
  if (refusal) throw refusal;
  return message;
}

/**
 * Unary methods carrying one client input (Send, Reply): their handlers refuse a request decoded
 * with a refusal themselves, so that it is counted with the other inputs' acknowledgements.
 */
const CHECKED_BY_HANDLER = new Set(["Send", "Reply"]);

/** `checkedRequest` for a unary call of `method`, unless its handler checks the request itself. */
export function checkedUnaryRequest<T>(method: string, message: T): T {
  return CHECKED_BY_HANDLER.has(method) ? message : checkedRequest(message);
}

const INT64 = new Set<ScalarType>([
  ScalarType.INT64,
  ScalarType.UINT64,
  ScalarType.SINT64,
  ScalarType.FIXED64,
  ScalarType.SFIXED64,
]);
const MAX = BigInt(Number.MAX_SAFE_INTEGER);
const MIN = BigInt(Number.MIN_SAFE_INTEGER);

/** Why a 64-bit value does not fit, or undefined when it does. */
function outOfRange(value: unknown): string | undefined {
  const n = BigInt(value as bigint | string);
  if (n > MAX) return `is ${n}, more than the largest value taken (${MAX})`;
  if (n < MIN) return `is ${n}, less than the smallest value taken (${MIN})`;
  return undefined;
}

/**
 * Finds the 64-bit integers of `message` out of range (nested messages, lists and maps included),
 * sets each to 0 (a map entry whose key is out of range is dropped) and returns a violation for
 * each, its field path below `prefix`.
 */
function clearOutOfRange(message: ReflectMessage, prefix: string): FieldViolation[] {
  const out: FieldViolation[] = [];
  const violation = (field: string, description: string | undefined): boolean => {
    if (description === undefined) return false;
    out.push({ field, description });
    return true;
  };
  for (const field of message.sortedFields) {
    if (!message.isSet(field)) continue;
    const path = `${prefix}${field.name}`;
    const value: unknown = message.get(field);
    if (field.fieldKind === "scalar") {
      if (INT64.has(field.scalar) && violation(path, outOfRange(value))) {
        message.set(field, 0n);
      }
    } else if (field.fieldKind === "message") {
      out.push(...clearOutOfRange(value as ReflectMessage, `${path}.`));
    } else if (field.fieldKind === "list" && isReflectList(value)) {
      for (const [i, item] of value.entries()) {
        if (field.listKind === "message") {
          out.push(...clearOutOfRange(item as ReflectMessage, `${path}[${i}].`));
        } else if (field.listKind === "scalar" && INT64.has(field.scalar)) {
          if (violation(`${path}[${i}]`, outOfRange(item))) value.set(i, 0n);
        }
      }
    } else if (field.fieldKind === "map" && isReflectMap(value)) {
      for (const [key, item] of [...value.entries()]) {
        const at = `${path}[${String(key)}]`;
        const keyProblem = INT64.has(field.mapKey) ? outOfRange(key) : undefined;
        if (violation(at, keyProblem && `its key ${keyProblem}`)) {
          value.delete(key);
        } else if (field.mapKind === "message") {
          out.push(...clearOutOfRange(item as ReflectMessage, `${at}.`));
        } else if (field.mapKind === "scalar" && INT64.has(field.scalar)) {
          if (violation(at, outOfRange(item))) value.set(key, 0n);
        }
      }
    }
  }
  return out;
}

let registry: FileRegistry | undefined;

/** The request message of the method at `path` (`/package.Service/Method`), from the descriptor set. */
function requestDesc(path: string): DescMessage | undefined {
  const [, service, method] = /^\/([^/]+)\/([^/]+)$/.exec(path) ?? [];
  if (!service || !method) return undefined;
  registry ??= createFileRegistry(descriptorSet());
  return registry.getService(service)?.methods.find((m) => m.name === method)?.input;
}

/**
 * The request decoder of the method at `path`: `decode`, or when it throws on a request whose only
 * fault is a 64-bit integer out of range, that request decoded with the refusal naming each such
 * field (see the top of this file). Any other failure is thrown as `decode` threw it.
 */
export function safeDecoder<T>(path: string, decode: (bytes: Buffer) => T): (bytes: Buffer) => T {
  return (bytes) => {
    try {
      return decode(bytes);
    } catch (err) {
      const desc = requestDesc(path);
      if (!desc) throw err;
      let message;
      try {
        message = fromBinary(desc, bytes);
      } catch {
        throw err;
      }
      const violations = clearOutOfRange(reflect(desc, message), "");
      if (violations.length === 0) throw err;
      const decoded = decode(Buffer.from(toBinary(desc, message)));
      (decoded as Marked)[REFUSAL] = invalidArgument(violations);
      return decoded;
    }
  };
}

/**
 * `decode`, with a request larger than `maxBytes` decoded all the same and marked with a refusal
 * naming `limits.messageBytes` (RESOURCE_EXHAUSTED): a unary call is refused with it, and Chat
 * refuses that one input and carries on, as for any other refused input. The transport's own limit
 * (see `transportLimit`) bounds what is read at all.
 */
export function sizeCheckedDecoder<T>(
  decode: (bytes: Buffer) => T,
  maxBytes: number,
): (bytes: Buffer) => T {
  return (bytes) => {
    const decoded = decode(bytes);
    if (bytes.length > maxBytes && requestRefusal(decoded) === undefined) {
      (decoded as Marked)[REFUSAL] = limitReached(
        "messageBytes",
        maxBytes,
        `the request is ${bytes.length} bytes`,
      );
    }
    return decoded;
  };
}

/**
 * The largest request the transport reads, for a `messageBytes` limit: twice the limit, so that a
 * request somewhat past it is refused by the server naming the limit (and a Chat stream carries
 * on); grpc-js ends a call whose request is larger still, unread, with RESOURCE_EXHAUSTED.
 */
export const transportLimit = (maxBytes: number): number => 2 * maxBytes;

/** A grpc-js method definition, as ts-proto generates it. */
interface MethodDefinition {
  path: string;
  requestDeserialize: (bytes: Buffer) => unknown;
}

/**
 * A service definition whose every method decodes its requests with `safeDecoder`, and with
 * `maxBytes` refuses those larger than that (see `sizeCheckedDecoder`).
 */
export function withSafeDecoding<S extends Record<string, MethodDefinition>>(
  service: S,
  maxBytes?: number,
): S {
  return Object.fromEntries(
    Object.entries(service).map(([key, method]) => {
      const safe = safeDecoder(method.path, method.requestDeserialize);
      const requestDeserialize = maxBytes === undefined ? safe : sizeCheckedDecoder(safe, maxBytes);
      return [key, { ...method, requestDeserialize }];
    }),
  ) as S;
}
