import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startClusterHarness } from "../helpers/cluster-harness.js";
import { startPostgres, type TestPostgres } from "../helpers/postgres.js";
import { instantiate, loadScenarios } from "../helpers/scenario.js";
import { ScenarioRunner } from "../helpers/scenario-runner.js";

/**
 * The scenarios played against three Parkway nodes, each in a process of its own, on one PostgreSQL
 * database: each step goes to the next node in turn (the session's stream moves there first), a
 * watcher on the last node follows each session from seq 0 throughout, and `restart` and `crash`
 * apply to every node.
 */
const NODES = 3;
/**
 * Short mode (`npm test`) plays one scenario of each kind: a confirm, an accepted rule, AskUser,
 * external tools, an interrupt, an expiry, a restart and a crash; long mode
 * (PARKWAY_FAULTS_LONG=1) plays every one. Most of a scenario's time is its three nodes starting.
 */
const SHORT = new Set([
  "single-confirm.json",
  "partial-confirmation.json",
  "accepted-rule-session-scope.json",
  "concurrent-dedup-rule-accepted.json",
  "ask-user-multi.json",
  "confirm-then-external.json",
  "external-concurrent.json",
  "interrupt-while-asking.json",
  "expiry-deny.json",
  "repeated-call-ids.json",
  "mcp-filesystem.json",
]);
const scenarios = loadScenarios().filter(
  ({ file }) => process.env.PARKWAY_FAULTS_LONG === "1" || SHORT.has(file),
);
/**
 * Long enough that a live node slowed down on a busy machine keeps its leases: a shorter one lets
 * another node take a session whose reply is running and end it as if its node had died, which no
 * scenario expects. A restarted node takes its sessions back at once (same node id), whatever this.
 */
const LEASE_TIMEOUT = "5s";
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
  it("short mode names scenarios that exist", () => {
    const files = new Set(loadScenarios().map(({ file }) => file));
    expect([...SHORT].filter((file) => !files.has(file))).toEqual([]);
  });
  for (const { file, text } of scenarios) {
    it(file.replace(/\.json$/, ""), { timeout: 90_000 }, async () => {
      const agent = (workdir: string) => ({
        shareWorkingDirectories: true,
        ...(instantiate(text, workdir).agent ?? {}),
      });
      const h = await startClusterHarness(agent, {
        url: await postgres.createDatabase(),
        nodes: NODES,
        leaseTimeout: LEASE_TIMEOUT,
      });
      try {
        const scenario = instantiate(text, h.workdir);
        for (const [name, content] of Object.entries(scenario.files ?? {})) {
          await writeFile(path.join(h.workdir, name), content);
        }
        await h.model.reset(scenario.script as never);
        await new ScenarioRunner(h, scenario, {
          nodeFor: (step) => step % NODES,
          watchOn: NODES - 1,
        }).run();
      } catch (err) {
        // The nodes' warnings and errors (a lease lost, a write refused) tell what happened where.
        for (const [i, node] of h.nodes.entries()) {
          const notable = node.server.output.filter((line) => /"level":(40|50|60)/.test(line));
          if (notable.length > 0) console.error(`node-${i}:\n${notable.join("\n")}`);
        }
        throw err;
      } finally {
        await h.close();
      }
    });
  }
});
