/**
 * The span names of an OTLP/HTTP protobuf trace export (`ExportTraceServiceRequest`), read straight
 * from the wire format: resource_spans (1) → scope_spans (2) → spans (2) → name (5). Only what the
 * benchmark counts is read; every other field is skipped by its wire type.
 */

/** The fields of one message: field number and, for length-delimited ones, their bytes. */
function* fields(buf: Uint8Array): Generator<[number, Uint8Array | undefined]> {
  let i = 0;
  const varint = (): number => {
    let value = 0;
    let shift = 0;
    for (;;) {
      if (i >= buf.length) throw new Error("truncated varint");
      const byte = buf[i++]!;
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
      shift += 7;
    }
  };
  while (i < buf.length) {
    const key = varint();
    const field = Math.floor(key / 8);
    switch (key & 7) {
      case 0:
        varint();
        yield [field, undefined];
        break;
      case 1:
        i += 8;
        yield [field, undefined];
        break;
      case 2: {
        const length = varint();
        if (i + length > buf.length) throw new Error("truncated field");
        yield [field, buf.subarray(i, i + length)];
        i += length;
        break;
      }
      case 5:
        i += 4;
        yield [field, undefined];
        break;
      default:
        throw new Error(`unsupported wire type ${key & 7}`);
    }
  }
}

/** The `number` fields of `buf` that are length-delimited. */
function* nested(buf: Uint8Array, number: number): Generator<Uint8Array> {
  for (const [field, bytes] of fields(buf)) if (field === number && bytes) yield bytes;
}

const utf8 = new TextDecoder();

export function spanNames(body: Uint8Array): string[] {
  const names: string[] = [];
  for (const resourceSpans of nested(body, 1)) {
    for (const scopeSpans of nested(resourceSpans, 2)) {
      for (const span of nested(scopeSpans, 2)) {
        const name = nested(span, 5).next();
        names.push(name.done ? "?" : utf8.decode(name.value));
      }
    }
  }
  return names;
}
