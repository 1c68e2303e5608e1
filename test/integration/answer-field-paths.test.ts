import { create, toBinary } from "@bufbuild/protobuf";
import { Client, credentials, type ServiceError } from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import {
  type ConfirmOptions,
  confirmation,
  fromServiceError,
  ParkwayClientError,
  type ToolCallBlock,
} from "../../src/client/index.js";
import { SendRequestSchema } from "../../src/generated-es/parkway/v1/agent_service_pb.js";
import { collect, type Harness, startHarness } from "../helpers/parkway-harness.js";

let h: Harness | undefined;
let raw: Client | undefined;
afterEach(async () => {
  raw?.close();
  raw = undefined;
  await h?.close();
  h = undefined;
});

async function refused(p: Promise<unknown>): Promise<ParkwayClientError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ParkwayClientError);
  return err as ParkwayClientError;
}

/**
 * Send over a plain grpc-js client, with bytes protobuf-es encoded: a Timestamp's seconds beyond a
 * JavaScript number, legal on the wire (the Go and Python clients send them), which the TypeScript
 * client cannot send.
 */
async function rawSend(address: string, sessionId: string, call: ToolCallBlock) {
  raw = new Client(address, credentials.createInsecure());
  const request = create(SendRequestSchema, {
    sessionId,
    input: {
      case: "userConfirmResult",
      value: {
        confirmResults: [
          {
            confirmed: true,
            toolCall: { id: call.id },
            rules: [{ toolName: "Bash", createdAt: { seconds: 2n ** 63n - 1n } }],
          },
        ],
      },
    },
  });
  const same = (b: Buffer) => b;
  return new Promise<ParkwayClientError | undefined>((resolve) =>
    raw!.makeUnaryRequest(
      "/parkway.v1.AgentService/Send",
      same,
      same,
      Buffer.from(toBinary(SendRequestSchema, request)),
      (err: ServiceError | null) => resolve(err ? fromServiceError(err) : undefined),
    ),
  );
}

describe("the field violations of an answer", () => {
  it("name the path from the request's root, whether the answer could not be decoded or what it says is refused, over Chat, Send and Reply alike", async () => {
    h = await startHarness({
      turns: [
        { toolCalls: [{ id: "c1", name: "Bash", input: { command: "touch f" } }] },
        { text: "done" },
      ],
    });
    const session = await h.client.createSession({ agentId: "test" });
    const chat = await h.client.attach(session.id);
    await collect(chat.message("go"));
    const call = (await h.client.getSession(session.id)).pendingToolCalls[0]!;
    const prefix = "user_confirm_result.confirm_results[0].";

    // Decoding: the rule's created_at holds no JavaScript number.
    const decoded = await rawSend(h.parkway.address, session.id, call);
    expect(decoded?.codeName).toBe("INVALID_ARGUMENT");
    expect(decoded?.fieldViolations.map((v) => v.field)).toEqual([
      `${prefix}rules[0].created_at.seconds`,
    ]);

    // What the answer says: an edited input the tool's schema refuses, an accepted rule naming no
    // tool, the same call answered twice; over each transport the TypeScript client uses.
    const answers: [ConfirmOptions[], string][] = [
      [[{ editedInput: { command: 5 } }], `${prefix}tool_call.input`],
      [[{ rules: [{ ...call.suggestedRules[0]!, toolName: "" }] }], `${prefix}rules[0].tool_name`],
      [[{}, {}], "user_confirm_result.confirm_results[1]"],
    ];
    for (const [options, field] of answers) {
      const value = { replyId: "", confirmResults: options.map((o) => confirmation(call, o)) };
      const input = { $case: "userConfirmResult" as const, value };
      for (const err of [
        await refused(chat.send(input)),
        await refused(h.client.send(session.id, input)),
        await refused(h.client.reply({ sessionId: session.id, input })),
      ]) {
        expect(err.codeName, err.message).toBe("INVALID_ARGUMENT");
        expect(err.fieldViolations.map((v) => v.field)).toEqual([field]);
      }
    }

    // Nothing was applied: the call still waits, and a valid answer runs it.
    expect((await h.client.getSession(session.id)).pendingToolCalls.map((c) => c.id)).toEqual([
      call.id,
    ]);
    await chat.confirm(call);
    chat.close();
  });
});
