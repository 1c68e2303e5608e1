import { randomUUID } from "node:crypto";
import { type ServiceError, type StatusObject, status } from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { createParkwayClient, type ParkwayClient } from "../../src/client/index.js";
import type { ClientEvent, ServerEvent } from "../../src/generated/parkway/v1/events.js";
import { type RunningParkway, startParkway } from "../../src/runtime/start-parkway.js";
import { createLevelStore } from "../../src/store/index.js";
import type { Store, StoreBatch, WriteOptions } from "../../src/store/store.js";
import { captureLog } from "../helpers/capture-log.js";
import { parkingConfig } from "../helpers/parking-config.js";

/**
 * A Chat stream whose client half-closes ends once the session runs no reply, after the events
 * that ended or parked it. The session's state runs ahead of its streams while events wait for
 * their write: here every write is held back a while, so the reply has parked in memory (its park
 * queued behind the start's write) when the message's acknowledgement goes out and the half-close
 * is read, and the stream must still show the park.
 */
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** The server's LevelDB store, every write started `holdMs` late. */
function slowStore(dataDir: string, holdMs: number): Store {
  const inner = createLevelStore(dataDir);
  const held = (batch: StoreBatch): StoreBatch =>
    new Proxy(batch, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver) as unknown;
        if (typeof value !== "function") return value;
        if (prop !== "write") {
          return (...args: unknown[]) => {
            const out = (value as (...a: unknown[]) => unknown).apply(target, args);
            return out === target ? (receiver as StoreBatch) : out;
          };
        }
        return async (options?: WriteOptions) => {
          await new Promise((r) => setTimeout(r, holdMs));
          return target.write(options);
        };
      },
    });
  return new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== "function") return value;
      const fn = (value as (...a: unknown[]) => unknown).bind(target);
      return prop === "batch" ? () => held(fn() as StoreBatch) : fn;
    },
  });
}

async function started(): Promise<{ parkway: RunningParkway; client: ParkwayClient }> {
  const config = await parkingConfig("parkway-half-close-", cleanups);
  const parkway = await startParkway({
    config,
    log: captureLog(),
    store: slowStore(config.data, 150),
  });
  const client = createParkwayClient(parkway.address);
  cleanups.push(async () => {
    client.close();
    await parkway.close();
  });
  return { parkway, client };
}

/** Sends `inputs` on a new Chat stream, half-closes it, and reads it to its end. */
function halfClosed(
  client: ParkwayClient,
  inputs: ClientEvent["event"][],
): Promise<{ code: number; kinds: string[] }> {
  const call = client.agentService.chat();
  const kinds: string[] = [];
  call.on("data", (event: ServerEvent) => kinds.push(event.event?.$case ?? ""));
  const ended = new Promise<{ code: number; kinds: string[] }>((resolve) => {
    call.on("error", (err: ServiceError) => resolve({ code: err.code, kinds }));
    call.on("status", (s: StatusObject) => {
      if (s.code === status.OK) resolve({ code: s.code, kinds });
    });
  });
  for (const event of inputs) call.write({ sessionId: "", requestId: randomUUID(), event });
  call.end();
  return ended;
}

describe("a half-closed Chat stream", () => {
  it("shows the park its message led to before it ends, while the park's write is still under way", async () => {
    const { client } = await started();
    const session = await client.createSession({ agentId: "test" });
    const res = await halfClosed(client, [
      { $case: "attach", value: { sessionId: session.id, afterSeq: 0 } },
      { $case: "userMessage", value: { text: "make a file", content: [] } },
    ]);
    expect(res.code).toBe(status.OK);
    expect(res.kinds).toContain("replyStart");
    expect(res.kinds.slice(-2)).toEqual(["requireUserConfirm", "replyParked"]);

    // Answered on another half-closed stream, the resumed reply's end is shown before it ends.
    const view = await client.getSession(session.id);
    const answered = await halfClosed(client, [
      { $case: "attach", value: { sessionId: session.id, afterSeq: view.lastSeq } },
      {
        $case: "userConfirmResult",
        value: {
          replyId: "",
          confirmResults: [
            {
              confirmed: true,
              toolCall: view.pendingToolCalls[0]!,
              rules: [],
              reason: "",
            },
          ],
        },
      },
    ]);
    expect(answered.code).toBe(status.OK);
    expect(answered.kinds).toContain("toolResultEnd");
    expect(answered.kinds.at(-1)).toBe("replyEnd");
  });
});
