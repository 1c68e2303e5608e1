import { BinaryWriter } from "@bufbuild/protobuf/wire";

/** A generated message's `encode`, as ts-proto writes it. */
type Encode<T> = (message: T, writer: BinaryWriter) => BinaryWriter;

/** What a `BinaryWriter` keeps of the message being written. */
interface WriterState {
  buffer: Uint8Array;
  pos: number;
  stackPos: number[];
}

function stateOf(writer: BinaryWriter): WriterState | undefined {
  const state = writer as unknown as Partial<WriterState>;
  return state.buffer instanceof Uint8Array &&
    typeof state.pos === "number" &&
    Array.isArray(state.stackPos)
    ? (state as WriterState)
    : undefined;
}

/**
 * A `responseSerialize` for grpc-js that encodes every message into one writer kept for the
 * process, and copies the bytes out into a `Buffer` from Node's pool.
 *
 * The generated serializer makes a new writer per message, grows it from 128 bytes, and copies the
 * result twice (`finish()` into a new `ArrayBuffer`, then `Buffer.from`): per text delta, that cost
 * more than the rest of its encoding. Encoding is synchronous, so one writer serves every stream.
 * When the writer's fields are not the ones this reads (another version of @bufbuild/protobuf),
 * it falls back to `finish()`, which is always right.
 */
export function pooledSerializer<T>(encode: Encode<T>): (message: T) => Buffer {
  const writer = new BinaryWriter();
  const state = stateOf(writer);
  if (!state) {
    return (message) => {
      const bytes = encode(message, new BinaryWriter()).finish();
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    };
  }
  return (message) => {
    try {
      encode(message, writer);
      const out = Buffer.allocUnsafe(state.pos);
      out.set(state.buffer.subarray(0, state.pos));
      return out;
    } finally {
      state.pos = 0;
      if (state.stackPos.length > 0) state.stackPos = [];
    }
  };
}
