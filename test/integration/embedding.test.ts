import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createParkwayClient } from "../../src/client/index.js";
import {
  defineTool,
  type Model,
  type ModelRequest,
  type ModelStreamEvent,
  parseConfig,
  startParkway,
} from "../../src/index.js";
import { collect, kind } from "../helpers/parkway-harness.js";
import { captureLog } from "../helpers/capture-log.js";

/** A model of the embedding application's own: calls the custom tool once, then answers. */
function ownModel(): Model & { seen: ModelRequest[] } {
  const seen: ModelRequest[] = [];
  return {
    name: "own-model",
    seen,
    // eslint-disable-next-line @typescript-eslint/require-await
    async *stream(request): AsyncIterable<ModelStreamEvent> {
      seen.push(request);
      const last = request.messages[request.messages.length - 1];
      if (last?.role === "tool") {
        yield { type: "text_delta", delta: `The weather: ${last.content}` };
      } else {
        yield { type: "tool_call_start", index: 0, id: "call_w", name: "Weather" };
        yield { type: "tool_call_delta", index: 0, delta: '{"city":"Oslo"}' };
      }
      yield { type: "done", finishReason: "stop" };
    },
  };
}

describe("embedding Parkway in an application", () => {
  it("serves its own tool (zod schema + async function) and its own model", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "parkway-embed-"));
    const weather = defineTool({
      name: "Weather",
      description: "Current weather in a city.",
      input: z.strictObject({ city: z.string().describe("City name") }),
      readOnly: true,
      run: ({ city }) => Promise.resolve(`sunny in ${city}`),
    });
    const model = ownModel();
    const parkway = await startParkway({
      config: parseConfig({
        listen: "127.0.0.1:0",
        data: path.join(dir, "data"),
        agents: [{ id: "embedded", tools: [], workingDirectories: [path.join(dir, "work")] }],
      }),
      log: captureLog(),
      tools: [weather],
      model,
    });
    const client = createParkwayClient(parkway.address);
    try {
      const agents = await client.listAgents();
      expect(agents[0]!.tools.map((t) => t.name)).toEqual(["Weather"]);
      expect(agents[0]!.model).toBe("own-model");
      const session = await client.createSession({ agentId: "embedded" });
      const chat = await client.attach(session.id);
      const events = await collect(chat.message("weather?"));
      chat.close();
      expect(events.map(kind)).toContain("tool_result_end");
      const text = events
        .map((e) => (e.event?.$case === "textBlockDelta" ? e.event.value.delta : ""))
        .join("");
      expect(text).toBe("The weather: sunny in Oslo");
      expect(model.seen[0]!.tools.map((t) => t.name)).toEqual(["Weather"]);
      expect(model.seen[0]!.tools[0]!.inputSchema).toMatchObject({
        type: "object",
        properties: { city: { type: "string", description: "City name" } },
      });
    } finally {
      client.close();
      await parkway.close();
    }
  });
});
