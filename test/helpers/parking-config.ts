import { mkdir, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Config, parseConfig } from "../../src/config/index.js";
import { startScriptedModel } from "../../src/model/scripted/index.js";

/**
 * The config of a server for a test that starts it in its own process with a store of its own:
 * a fresh data directory, the agent `test` with one working directory, and a scripted model that
 * calls Bash (`touch parked.txt`, which default mode asks about) for every user message and says
 * "done" after a tool result. The model is closed by the function pushed onto `cleanups`.
 */
export async function parkingConfig(
  prefix: string,
  cleanups: (() => Promise<void>)[],
): Promise<Config> {
  const root = await mkdtemp(path.join(tmpdir(), prefix));
  const workdir = path.join(root, "work");
  await mkdir(workdir);
  const model = await startScriptedModel({
    script: {
      turns: [
        {
          match: { lastUser: "" },
          repeat: true,
          toolCalls: [{ name: "Bash", input: { command: "touch parked.txt" } }],
        },
        { match: { lastToolResult: "" }, repeat: true, text: "done" },
      ],
    },
  });
  cleanups.push(() => model.close());
  return parseConfig({
    listen: "127.0.0.1:0",
    data: path.join(root, "data"),
    agents: [{ id: "test", workingDirectories: [workdir] }],
    model: { url: model.url, name: "scripted", maxRetries: 2 },
  });
}
