/**
 * parkway/web, the browser client, against the compiled server's web port (in Node, whose fetch is
 * the browser's API): a watch survives a server restart and goes on after the last seq it read, with
 * no event missed or repeated; send applies a retried request id once; a refused input rejects with
 * the server's code.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Script,
  type ScriptedModelServer,
  startScriptedModel,
} from "../../src/model/scripted/index.js";
import {
  allow,
  Code,
  ConnectError,
  confirmInput,
  createWebClient,
  FinishedReason,
  type ServerEvent,
} from "../../src/browser/index.js";
import { type SpawnedServer, spawnServer, tempDir } from "../helpers/spawn-server.js";

const SCRIPT: Script = {
  turns: [
    {
      match: { lastUser: "^deploy$" },
      repeat: true,
      text: "Creating the marker.",
      toolCalls: [{ name: "Bash", input: { command: "touch marker.txt" } }],
    },
    { match: { toolName: "Bash" }, repeat: true, text: "Done." },
  ],
};

describe("parkway/web against the web port", () => {
  let model: ScriptedModelServer;
  let server: SpawnedServer;
  let root: string;
  let config: string;

  const start = (listen?: { address: string; web: string }) =>
    spawnServer({
      dataDir: path.join(root, "data"),
      direct: true,
      args: [
        "--config",
        config,
        "--web-listen",
        listen?.web ?? "127.0.0.1:0",
        ...(listen ? ["--listen", listen.address] : []),
      ],
    });

  beforeAll(async () => {
    root = await tempDir("parkway-web-client-");
    const workdir = path.join(root, "work");
    await mkdir(workdir, { recursive: true });
    model = await startScriptedModel({ script: SCRIPT });
    config = path.join(root, "parkway.json");
    await writeFile(
      config,
      JSON.stringify({
        model: { url: model.url, name: "scripted", maxRetries: 2 },
        agents: [{ id: "test", workingDirectories: [workdir] }],
      }),
    );
    server = await start();
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    await model?.close();
  });

  it("watches across a restart after the last seq, and sends each request id once", async () => {
    const web = new URL(server.webUrl!).host;
    const client = createWebClient({ baseUrl: server.webUrl! });
    const { session } = await client.agent.createSession({ agentId: "test" });
    const id = session!.id;
    const first = await client.send(id, { case: "userMessage", value: { text: "deploy" } }, "r1");
    const again = await client.send(id, { case: "userMessage", value: { text: "deploy" } }, "r1");
    expect(again).toEqual(first);

    // One watch, through a restart while the reply is parked: the stream drops, the watch comes
    // back after the last seq it read, and the pending call is announced again.
    const abort = new AbortController();
    const events: ServerEvent[] = [];
    let restarted = false;
    for await (const event of client.watch(id, { signal: abort.signal, reconnectForMs: 60_000 })) {
      events.push(event);
      const e = event.event;
      if (e.case === "replyParked" && !restarted) {
        restarted = true;
        await server.stop();
        server = await start({ address: server.address, web });
      } else if (e.case === "requireUserConfirm" && restarted) {
        expect(event.replayed).toBe(true);
        await client.send(
          id,
          confirmInput(
            event.replyId,
            e.value.toolCalls.map((c) => allow(c)),
          ),
        );
      } else if (e.case === "replyEnd") {
        expect(e.value.finishedReason).toBe(FinishedReason.COMPLETED);
        break;
      }
    }
    abort.abort();
    expect(restarted).toBe(true);

    const seqs = events.map((e) => e.seq).filter((s) => s !== 0n);
    expect(seqs).toEqual(seqs.map((_, i) => 1n + BigInt(i)));
    const kinds = events.map((e) => e.event.case);
    expect(kinds.filter((k) => k === "requireUserConfirm")).toHaveLength(2);
    expect(kinds.at(-1)).toBe("replyEnd");
  }, 90_000);

  it("rejects a refused input with the server's code", async () => {
    const client = createWebClient({ baseUrl: server.webUrl! });
    const refused = await client
      .send("ses_missing", { case: "userMessage", value: { text: "hi" } })
      .catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ConnectError);
    expect((refused as ConnectError).code).toBe(Code.NotFound);
  });
});
