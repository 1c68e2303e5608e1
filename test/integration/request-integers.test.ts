import { create, type DescMessage, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { Client, credentials, type ServiceError, status } from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { fromServiceError, type ParkwayClientError } from "../../src/client/index.js";
import {
  AddRulesRequestSchema,
  type AddRulesResponse,
} from "../../src/generated-es/parkway/v1/permission_pb.js";
import {
  SendRequestSchema,
  WatchRequestSchema,
} from "../../src/generated-es/parkway/v1/agent_service_pb.js";
import { ClientEventSchema } from "../../src/generated-es/parkway/v1/events_pb.js";
import { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import { fromRpcStatus } from "../../src/client/index.js";
import { type Harness, startHarness } from "../helpers/parkway-harness.js";
import { toClientError, webClient } from "../helpers/web-client.js";

let h: Harness | undefined;
let raw: Client | undefined;
afterEach(async () => {
  raw?.close();
  raw = undefined;
  await h?.close();
  h = undefined;
});

/** Values legal on the wire that no JavaScript number holds exactly (2^53 itself is the first). */
const UINT64_BEYOND = [2n ** 53n, 2n ** 53n + 1n, 2n ** 63n, 2n ** 64n - 1n];
const INT64_BEYOND = [2n ** 63n - 1n, -(2n ** 63n), -(2n ** 53n)];

/** A message's wire bytes, encoded by protobuf-es (64-bit integers as bigints, as Go sends them). */
function wire<D extends DescMessage>(schema: D, init: MessageInitShape<D>): Buffer {
  return Buffer.from(toBinary(schema, create(schema, init)));
}

const same = (bytes: Buffer) => bytes;

/** A grpc-js client that sends the bytes it is given. */
function rawClient(address: string): Client {
  raw = new Client(address, credentials.createInsecure());
  return raw;
}

async function watchStatus(client: Client, request: Buffer): Promise<ParkwayClientError> {
  const call = client.makeServerStreamRequest(
    "/parkway.v1.AgentService/Watch",
    same,
    ServerEvent.decode,
    request,
  );
  return new Promise((resolve) => {
    call.on("data", () => undefined);
    call.on("error", (err: ServiceError) => resolve(fromServiceError(err)));
  });
}

/** A raw Chat stream: `write` sends bytes; `events` are what the server sent, `ended` its status. */
function rawChat(client: Client) {
  const call = client.makeBidiStreamRequest("/parkway.v1.AgentService/Chat", same, (b: Buffer) =>
    ServerEvent.decode(b),
  );
  const events: ServerEvent[] = [];
  let over = false;
  const ended = new Promise<ParkwayClientError | undefined>((resolve) => {
    call.on("error", (err: ServiceError) => resolve(fromServiceError(err)));
    call.on("end", () => resolve(undefined));
  }).finally(() => (over = true));
  call.on("data", (event: ServerEvent) => events.push(event));
  return {
    events,
    ended,
    write: (bytes: Buffer) => call.write(bytes),
    end: () => call.end(),
    /** The INPUT_ACK of `requestId`, once it arrives. */
    async ack(requestId: string) {
      for (;;) {
        const ack = events.find(
          (e) => e.event?.$case === "inputAck" && e.event.value.requestId === requestId,
        );
        if (ack?.event?.$case === "inputAck") return ack.event.value;
        if (over)
          throw new Error(
            `the stream ended before ${requestId} was acknowledged: ${String(await ended)}`,
          );
        await new Promise((r) => setTimeout(r, 10));
      }
    },
  };
}

async function unaryStatus(client: Client, path: string, request: Buffer) {
  return new Promise<ParkwayClientError | undefined>((resolve) =>
    client.makeUnaryRequest(path, same, same, request, (err) =>
      resolve(err ? fromServiceError(err) : undefined),
    ),
  );
}

describe("64-bit integers of requests beyond a JavaScript number", () => {
  it("refuses Watch's after_seq and attach's with INVALID_ARGUMENT naming the field, sent by the TypeScript client or any other", async () => {
    h = await startHarness({ turns: [{ text: "ok" }] });
    const session = await h.client.createSession({ agentId: "test" });

    // 2^53 is the first value a number cannot hold exactly, and the TypeScript client sends it.
    const watched = await h.client
      .watch(session.id, { afterSeq: 2 ** 53, reconnectForMs: 0 })
      .next()
      .then(
        () => undefined,
        (e: unknown) => e as ParkwayClientError,
      );
    expect(watched?.codeName).toBe("INVALID_ARGUMENT");
    expect(watched?.fieldViolations).toEqual([
      {
        field: "after_seq",
        description: "is 9007199254740992, more than the largest value taken (9007199254740991)",
      },
    ]);
    const attached = await h.client.attach(session.id, { afterSeq: 2 ** 53 }).then(
      () => undefined,
      (e: unknown) => e as ParkwayClientError,
    );
    expect(attached?.codeName).toBe("INVALID_ARGUMENT");
    expect(attached?.fieldViolations.map((v) => v.field)).toEqual(["attach.after_seq"]);

    // Every larger uint64, as the Go and Python clients may send it.
    const client = rawClient(h.parkway.address);
    for (const afterSeq of UINT64_BEYOND) {
      const err = await watchStatus(
        client,
        wire(WatchRequestSchema, { sessionId: session.id, afterSeq }),
      );
      expect(err.code, String(afterSeq)).toBe(status.INVALID_ARGUMENT);
      expect(err.fieldViolations, String(afterSeq)).toEqual([
        {
          field: "after_seq",
          description: `is ${afterSeq}, more than the largest value taken (9007199254740991)`,
        },
      ]);

      const chat = rawChat(client);
      chat.write(
        wire(ClientEventSchema, {
          requestId: "a1",
          event: { case: "attach", value: { sessionId: session.id, afterSeq } },
        }),
      );
      const ended = await chat.ended;
      expect(ended?.code, String(afterSeq)).toBe(status.INVALID_ARGUMENT);
      expect(ended?.fieldViolations.map((v) => v.field)).toEqual(["attach.after_seq"]);
      expect(chat.events).toEqual([]);
    }

    // The largest value a number holds is checked against the session, as before.
    const last = await watchStatus(
      client,
      wire(WatchRequestSchema, { sessionId: session.id, afterSeq: 2n ** 53n - 1n }),
    );
    expect(last.fieldViolations).toEqual([
      { field: "after_seq", description: "is 9007199254740991, beyond the session's last seq 0" },
    ]);
    // The server still serves the session.
    expect((await h.client.getSession(session.id)).lastSeq).toBe(0);
  });

  it("refuses an out-of-range int64 nested in an input (Chat, Send) or a rule (AddRules), naming it, and applies nothing", async () => {
    h = await startHarness({ turns: [{ text: "ok" }] }, {}, { metrics: { listen: "127.0.0.1:0" } });
    const session = await h.client.createSession({ agentId: "test" });
    const client = rawClient(h.parkway.address);
    const chat = rawChat(client);
    chat.write(
      wire(ClientEventSchema, {
        requestId: "a1",
        event: { case: "attach", value: { sessionId: session.id } },
      }),
    );
    expect((await chat.ack("a1")).status?.code).toBe(0);

    const field = "user_confirm_result.confirm_results[0].rules[0].created_at.seconds";
    for (const [i, seconds] of INT64_BEYOND.entries()) {
      const input = {
        case: "userConfirmResult" as const,
        value: {
          replyId: "rep_x",
          confirmResults: [
            {
              confirmed: true,
              toolCall: { id: "call_1" },
              rules: [{ toolName: "Bash", createdAt: { seconds } }],
            },
          ],
        },
      };
      // Over Chat the input's acknowledgement carries the refusal; the stream goes on.
      chat.write(wire(ClientEventSchema, { requestId: `r${i}`, event: input }));
      const ack = await chat.ack(`r${i}`);
      const refused = fromRpcStatus(ack.status!);
      expect(refused.codeName, String(seconds)).toBe("INVALID_ARGUMENT");
      expect(refused.fieldViolations.map((v) => v.field)).toEqual([field]);
      expect(refused.fieldViolations[0]?.description).toContain(String(seconds));

      const sent = await unaryStatus(
        client,
        "/parkway.v1.AgentService/Send",
        wire(SendRequestSchema, { sessionId: session.id, requestId: `s${i}`, input }),
      );
      expect(sent?.codeName).toBe("INVALID_ARGUMENT");
      expect(sent?.fieldViolations.map((v) => v.field)).toEqual([field]);

      const added = await unaryStatus(
        client,
        "/parkway.v1.PermissionService/AddRules",
        wire(AddRulesRequestSchema, {
          rules: [
            { toolName: "Read", sessionId: session.id, createdAt: { seconds: 1n } },
            { toolName: "Bash", sessionId: session.id, createdAt: { seconds } },
          ],
        }),
      );
      expect(added?.codeName).toBe("INVALID_ARGUMENT");
      expect(added?.fieldViolations.map((v) => v.field)).toEqual(["rules[1].created_at.seconds"]);
    }
    expect(await h.client.listRules({ sessionId: session.id })).toEqual([]);
    expect((await h.client.getSession(session.id)).lastSeq).toBe(0);
    // Each refused input is counted, whether it came over Chat or Send.
    const metrics = await (await fetch(h.parkway.metricsUrl!)).text();
    expect(metrics).toContain(
      `parkway_input_acks_total{code="INVALID_ARGUMENT"} ${2 * INT64_BEYOND.length}`,
    );

    // The same stream still takes inputs.
    chat.write(
      wire(ClientEventSchema, {
        requestId: "m1",
        event: { case: "userMessage", value: { text: "hello" } },
      }),
    );
    expect((await chat.ack("m1")).status?.code).toBe(0);
    chat.end();
    expect(await chat.ended).toBeUndefined();
  });

  it("refuses them on the web port too, over Connect (JSON and binary) and gRPC-web", async () => {
    h = await startHarness({ turns: [{ text: "ok" }] }, {}, { web: { listen: "127.0.0.1:0" } });
    const session = await h.client.createSession({ agentId: "test" });
    for (const protocol of ["connect", "connect-binary", "grpc-web"] as const) {
      const agent = webClient(h.parkway.webUrl!, protocol, "parkway.v1.AgentService");
      const events = agent.watch!({ sessionId: session.id, afterSeq: 2n ** 64n - 1n });
      const err = (await (async () => {
        try {
          for await (const _ of events) void _;
        } catch (e) {
          return toClientError(e);
        }
        return undefined;
      })()) as ParkwayClientError | undefined;
      expect(err?.codeName, protocol).toBe("INVALID_ARGUMENT");
      expect(err?.fieldViolations.map((v) => v.field)).toEqual(["after_seq"]);
      // JSON has no Timestamp that far out; the binary protocols carry one.
      if (protocol === "connect") continue;
      const perms = webClient(h.parkway.webUrl!, protocol, "parkway.v1.PermissionService");
      const added = await perms.addRules!({
        rules: [{ toolName: "Bash", createdAt: { seconds: 2n ** 63n - 1n } }],
      }).then(
        (r) => r as unknown as AddRulesResponse,
        (e: unknown) => toClientError(e) as ParkwayClientError,
      );
      expect((added as ParkwayClientError).fieldViolations?.map((v) => v.field)).toEqual([
        "rules[0].created_at.seconds",
      ]);
    }
  });
});
