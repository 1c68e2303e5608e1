import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, it, vi } from "vitest";
import { startClusterHarness } from "../helpers/cluster-harness.js";
import { startPostgres, type TestPostgres } from "../helpers/postgres.js";
import { instantiate, loadScenarios } from "../helpers/scenario.js";
import { ScenarioRunner } from "../helpers/scenario-runner.js";

/**
 * Every scenario played against three Parkway nodes, each in a process of its own, on one PostgreSQL
 * database, with a watcher following each session from seq 0 throughout; `restart` and `crash`
 * apply to every node.
 */
const NODES = 3;
// A few scenarios at a time: most of a scenario's time is its nodes starting.
vi.setConfig({ maxConcurrency: 3 });
let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startPostgres();
});
afterAll(async () => {
  await postgres?.stop();
});

describe.concurrent("scenarios on three nodes", () => {
  for (const { file, text } of loadScenarios()) {
    it(file.replace(/\.json$/, ""), { timeout: 60_000 }, async () => {
      const agent = (workdir: string) => ({
        shareWorkingDirectories: true,
        ...(instantiate(text, workdir).agent ?? {}),
      });
      const h = await startClusterHarness(agent, {
        url: await postgres.createDatabase(),
        nodes: NODES,
      });
      try {
        const scenario = instantiate(text, h.workdir);
        for (const [name, content] of Object.entries(scenario.files ?? {})) {
          await writeFile(path.join(h.workdir, name), content);
        }
        await h.model.reset(scenario.script as never);
        // A session is served by the node holding its lease: here node 0 serves every step.
        await new ScenarioRunner(h, scenario, { nodeFor: () => 0, watchOn: 0 }).run();
      } finally {
        await h.close();
      }
    });
  }
});
