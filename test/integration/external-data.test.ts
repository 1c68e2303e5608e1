import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  createParkwayClient,
  type ParkwayClient,
  type ParkwayClientError,
} from "../../src/client/index.js";
import { executionResult, type ExternalResult } from "../../src/client/inputs.js";
import { silentLogger } from "../../src/common/logger.js";
import { parseConfig } from "../../src/config/index.js";
import { SessionStatus } from "../../src/generated/parkway/v1/agent_service.js";
import type { ToolCallBlock } from "../../src/generated/parkway/v1/content.js";
import {
  type ChatMessage,
  startScriptedModel,
  type ScriptedModelServer,
} from "../../src/model/scripted/index.js";
import { type RunningParkway, startParkway } from "../../src/runtime/start-parkway.js";

/** A 1×1 PNG. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);
const REPORT = { passed: 41, failed: 1, flaky: ["login"] };

let model: ScriptedModelServer | undefined;
let parkway: RunningParkway | undefined;
let client: ParkwayClient | undefined;
afterEach(async () => {
  client?.close();
  await parkway?.close();
  await model?.close();
  client = parkway = model = undefined;
});

async function start(dataDir: string): Promise<ParkwayClient> {
  model ??= await startScriptedModel({
    script: {
      turns: [
        {
          match: { lastUser: "^snap" },
          repeat: true,
          toolCalls: [{ name: "Snapshot", input: {} }],
        },
        { match: { toolName: "Snapshot" }, repeat: true, text: "Seen." },
        { match: { lastUser: "^again" }, repeat: true, text: "Again." },
      ],
    },
  });
  parkway = await startParkway({
    config: parseConfig({
      listen: "127.0.0.1:0",
      data: dataDir,
      model: { url: model.url, name: "scripted", maxRetries: 0 },
      agents: [
        {
          id: "test",
          workingDirectories: [path.join(dataDir, "..", "work")],
          externalTools: [{ name: "Snapshot", inputSchema: { type: "object" } }],
          permissions: { allow: ["Snapshot"] },
        },
      ],
    }),
    log: silentLogger,
  });
  client = createParkwayClient(parkway.address);
  return client;
}

const message = (text: string) => ({
  $case: "userMessage" as const,
  value: { text, content: [] },
});

/** Sends "snap" and returns the external call it parks on. */
async function park(c: ParkwayClient, sessionId: string): Promise<ToolCallBlock> {
  const parked = await c.reply({ sessionId, input: message("snap") });
  expect(parked.status).toBe(SessionStatus.SESSION_STATUS_AWAITING_EXTERNAL_RESULT);
  return parked.pendingToolCalls[0]!;
}

const submit = (c: ParkwayClient, sessionId: string, call: ToolCallBlock, result: ExternalResult) =>
  c.reply({
    sessionId,
    input: {
      $case: "externalExecutionResult",
      value: { replyId: "", executionResults: [executionResult(call, result)] },
    },
  });

/** The messages of the model's latest request after its last assistant message with tool calls. */
function afterToolCalls(messages: ChatMessage[]): ChatMessage[] {
  const at = messages.findLastIndex((m) => m.role === "assistant" && m.tool_calls?.length);
  return messages.slice(at + 1);
}

describe("an external result with data blocks", () => {
  it("keeps JSON and an image: stored, replayed, and handed to the model as its API allows", async () => {
    const dataDir = path.join(await mkdtemp(path.join(tmpdir(), "parkway-data-blocks-")), "data");
    let c = await start(dataDir);
    const session = await c.createSession({ agentId: "test" });
    const call = await park(c, session.id);
    const done = await submit(c, session.id, call, {
      output: "two files",
      data: [
        { mediaType: "application/json", bytes: Buffer.from(JSON.stringify(REPORT)) },
        { mediaType: "image/png", bytes: PNG },
      ],
    });
    expect(done.status).toBe(SessionStatus.SESSION_STATUS_IDLE);

    // The reply's message keeps the blocks, in order, with their bytes.
    const result = done.message?.content.find((b) => b.block?.$case === "toolResult");
    const output = result?.block?.$case === "toolResult" ? result.block.value.output : [];
    expect(output.map((b) => b.block?.$case)).toEqual(["text", "data", "data"]);
    const [, json, image] = output.map((b) =>
      b.block?.$case === "data" ? b.block.value : undefined,
    );
    expect(json?.mediaType).toBe("application/json");
    expect(json?.source).toEqual({ $case: "data", value: Buffer.from(JSON.stringify(REPORT)) });
    expect(image?.source).toEqual({ $case: "data", value: PNG });

    // The model read the JSON as text in the tool message, and saw the image in a user message.
    const sent = afterToolCalls(model!.requests.at(-1)!.messages);
    expect(sent.map((m) => m.role)).toEqual(["tool", "user"]);
    expect(sent[0]!.content).toBe(`two files\n\n[application/json]\n${JSON.stringify(REPORT)}`);
    expect(sent[1]!.content).toEqual([
      // Named by the id the model gave the call, as its tool message is.
      { type: "text", text: `Images returned by Snapshot (${sent[0]!.tool_call_id}):` },
      { type: "image_url", image_url: { url: `data:image/png;base64,${PNG.toString("base64")}` } },
    ]);

    // A stream attached from the start sees the data as TOOL_RESULT_DATA_DELTA events.
    const chat = await c.attach(session.id);
    const deltas = [];
    for (;;) {
      const event = await chat.next();
      if (!event || event.event?.$case === "replyEnd") break;
      if (event.event?.$case === "toolResultDataDelta") deltas.push(event.event.value);
    }
    chat.close();
    expect(deltas.map((d) => [d.toolCallId, d.mediaType, d.source?.value])).toEqual([
      [call.id, "application/json", Buffer.from(JSON.stringify(REPORT))],
      [call.id, "image/png", PNG],
    ]);

    // After a restart the history still holds both: the next request hands them over again.
    client!.close();
    await parkway!.close();
    c = await start(dataDir);
    await c.reply({ sessionId: session.id, input: message("again") });
    const history = model!.requests.at(-1)!.messages;
    expect(JSON.stringify(history)).toContain(
      `[application/json]\\n${JSON.stringify(REPORT).replaceAll('"', '\\"')}`,
    );
    expect(JSON.stringify(history)).toContain(`data:image/png;base64,${PNG.toString("base64")}`);
  });

  it("refuses what the model cannot be given, naming the field, and the call still waits", async () => {
    const dataDir = path.join(await mkdtemp(path.join(tmpdir(), "parkway-data-blocks-")), "data");
    const c = await start(dataDir);
    const session = await c.createSession({ agentId: "test" });
    const call = await park(c, session.id);
    const refusals: [ExternalResult, string, RegExp][] = [
      [
        { data: [{ mediaType: "application/octet-stream", bytes: Buffer.from([0, 1, 2]) }] },
        "external_execution_result.execution_results[0].output[0].data.media_type",
        /cannot be handed to the model/,
      ],
      [
        {
          output: "see",
          data: [{ mediaType: "application/json", url: "https://example.com/r.json" }],
        },
        "external_execution_result.execution_results[0].output[1].data.url",
        /only an image may be given by URL/,
      ],
      [
        { data: [{ mediaType: "text/plain", bytes: Buffer.from([0xff, 0xfe, 0x00]) }] },
        "external_execution_result.execution_results[0].output[0].data.data",
        /UTF-8/,
      ],
      [
        { data: [{ mediaType: "image/png", url: "file:///etc/passwd" }] },
        "external_execution_result.execution_results[0].output[0].data.url",
        /http or https/,
      ],
      [
        { data: [{ mediaType: "not a type", bytes: Buffer.from("x") }] },
        "external_execution_result.execution_results[0].output[0].data.media_type",
        /not a media type/,
      ],
    ];
    for (const [result, field, description] of refusals) {
      const err = (await submit(c, session.id, call, result).catch(
        (e: unknown) => e,
      )) as ParkwayClientError;
      expect(err.codeName, field).toBe("INVALID_ARGUMENT");
      expect(err.fieldViolations.map((v) => v.field)).toEqual([field]);
      expect(err.fieldViolations[0]?.description).toMatch(description);
    }
    const view = await c.getSession(session.id);
    expect(view.status).toBe(SessionStatus.SESSION_STATUS_AWAITING_EXTERNAL_RESULT);
    expect(view.pendingToolCalls.map((p) => p.id)).toEqual([call.id]);
  });

  it("refuses a user message with a block that is not text, naming it", async () => {
    const dataDir = path.join(await mkdtemp(path.join(tmpdir(), "parkway-data-blocks-")), "data");
    const c = await start(dataDir);
    const session = await c.createSession({ agentId: "test" });
    const err = (await c
      .reply({
        sessionId: session.id,
        input: {
          $case: "userMessage",
          value: {
            text: "look",
            content: [
              {
                block: {
                  $case: "data",
                  value: { id: "", mediaType: "image/png", source: { $case: "data", value: PNG } },
                },
              },
            ],
          },
        },
      })
      .catch((e: unknown) => e)) as ParkwayClientError;
    expect(err.codeName).toBe("INVALID_ARGUMENT");
    expect(err.fieldViolations.map((v) => v.field)).toEqual(["user_message.content[0]"]);
    expect((await c.getSession(session.id)).lastSeq).toBe(0);
  });
});
