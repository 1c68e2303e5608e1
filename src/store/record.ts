import { isDeepStrictEqual } from "node:util";
import type { z } from "zod";
import { ParkwayError } from "../common/errors.js";
import { checkEveryWriteFromEnv } from "../config/check-writes.js";

/**
 * A kind of stored record: its key space (`kind`), its current schema version and zod schema, and the
 * migrations that lift older versions. Every value is stored as `{"v": version, "d": data}` and is
 * validated on every read, so a record is either migrated, or refused with a clear error; never misread.
 *
 * Records carry no checksum of their own: LevelDB checksums its log records (a damaged one is
 * dropped on replay, which the store detects, see `verifyOpen`) and compresses its table blocks (a
 * damaged block mostly fails to decompress), and what still reads back is JSON checked against its
 * schema. A checksum per record would cost a hash on every event write for the flips left over.
 */
export interface RecordType<T> {
  readonly kind: string;
  readonly version: number;
  readonly schema: z.ZodType<T>;
  /** `migrations[n]` turns the data of version n into the data of version n + 1. */
  readonly migrations?: Readonly<Record<number, (data: unknown) => unknown>>;
  /**
   * False for records written at a high rate from values the server's types already guarantee
   * (events, a session's records, audit entries): they are validated on read, and on
   * write only when `PARKWAY_CHECK_WRITES=1` (as in the test suite). Default true.
   */
  readonly checkOnWrite?: boolean;
}

/** Declares a record type. */
export function defineRecord<T>(type: RecordType<T>): RecordType<T> {
  return type;
}

/** A stored value that cannot be read: corrupt, invalid, or from an unknown version. */
export class RecordError extends ParkwayError {
  constructor(
    readonly kind: string,
    readonly key: string,
    problem: string,
  ) {
    super("internal", `stored ${kind} record ${JSON.stringify(key)} ${problem}`);
  }
}

/** Read once: whether records declared `checkOnWrite: false` are validated on write all the same. */
const CHECK_EVERY_WRITE = checkEveryWriteFromEnv();

/** Serialises a value after validating it (unless `checkOnWrite` is false). */
export function encodeRecord<T>(type: RecordType<T>, key: string, value: T): string {
  if (type.checkOnWrite === false && !CHECK_EVERY_WRITE) {
    return JSON.stringify({ v: type.version, d: value });
  }
  const result = type.schema.safeParse(value);
  if (!result.success) {
    throw new RecordError(
      type.kind,
      key,
      `is invalid and was not written: ${result.error.message}`,
    );
  }
  const encoded = JSON.stringify({ v: type.version, d: result.data });
  if (type.checkOnWrite === false && !sameJson(encoded, { v: type.version, d: value })) {
    // Unchecked, the value itself is stored: it must already be exactly what its schema yields
    // (no extra fields to strip, no defaults to fill).
    throw new RecordError(
      type.kind,
      key,
      `differs from its schema's reading and was not written: ${JSON.stringify(value)}`,
    );
  }
  return encoded;
}

/** Whether `value` serialises to the same JSON as `encoded`, fields in any order. */
function sameJson(encoded: string, value: unknown): boolean {
  return isDeepStrictEqual(JSON.parse(encoded), JSON.parse(JSON.stringify(value)));
}

/** Parses a stored value's envelope and migrates its data to the current version (unvalidated). */
function migratedData<T>(type: RecordType<T>, key: string, raw: string): unknown {
  let envelope: unknown;
  try {
    envelope = JSON.parse(raw);
  } catch {
    throw new RecordError(type.kind, key, "is corrupt (not JSON)");
  }
  if (
    typeof envelope !== "object" ||
    envelope === null ||
    !("v" in envelope) ||
    !("d" in envelope) ||
    typeof envelope.v !== "number" ||
    !Number.isInteger(envelope.v)
  ) {
    throw new RecordError(type.kind, key, "is corrupt (no version envelope)");
  }
  let version = envelope.v;
  let data: unknown = envelope.d;
  if (version > type.version) {
    throw new RecordError(
      type.kind,
      key,
      `has version ${version}, newer than this server understands (${type.version}); upgrade Parkway`,
    );
  }
  while (version < type.version) {
    const migrate = type.migrations?.[version];
    if (!migrate) {
      throw new RecordError(
        type.kind,
        key,
        `has version ${version}, which cannot be migrated to ${type.version}`,
      );
    }
    data = migrate(data);
    version += 1;
  }
  return data;
}

/** Parses, migrates and validates a stored value. */
export function decodeRecord<T>(type: RecordType<T>, key: string, raw: string): T {
  const result = type.schema.safeParse(migratedData(type, key, raw));
  if (!result.success) {
    throw new RecordError(
      type.kind,
      key,
      `is invalid: ${result.error.issues[0]?.message ?? "unknown"}`,
    );
  }
  return result.data;
}

/**
 * One top-level field of a stored value, parsed and migrated but not validated against the schema:
 * for a condition on that field alone (`StoreBatch.checkField`), which costs a JSON parse instead of
 * the whole record's validation. Throws `RecordError` as `decodeRecord` does for a value that is not
 * a versioned record, or whose data is not an object.
 */
export function storedField<T>(
  type: RecordType<T>,
  key: string,
  raw: string,
  field: string,
): unknown {
  const leading = leadingString(raw, type.version, field);
  if (leading !== undefined) return leading;
  const data = migratedData(type, key, raw);
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new RecordError(type.kind, key, "is invalid: its data is not an object");
  }
  return Object.hasOwn(data, field) ? (data as Record<string, unknown>)[field] : undefined;
}

/**
 * The string value of `field` when it is the first member of a current-version record's data, as
 * `JSON.stringify` writes `{"v":version,"d":{"<field>":"<value>",...}}`: read without parsing the
 * rest (a reply's id out of a reply of many KB). Undefined whenever the text is anything else (an
 * older version, another first member, a value that is not a string or holds escapes): the caller
 * parses the whole value then.
 */
function leadingString(raw: string, version: number, field: string): string | undefined {
  const prefix = `{"v":${version},"d":{${JSON.stringify(field)}:"`;
  if (!raw.startsWith(prefix)) return undefined;
  const end = raw.indexOf('"', prefix.length);
  if (end === -1) return undefined;
  const value = raw.slice(prefix.length, end);
  return value.includes("\\") ? undefined : value;
}
