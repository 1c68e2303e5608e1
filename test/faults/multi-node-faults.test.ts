import { afterAll, beforeAll, expect, it } from "vitest";
import { startPostgres, type TestPostgres } from "../helpers/postgres.js";
import { runMultiNodeFaults } from "./multi-node-harness.js";

/**
 * Short mode (`npm test`: 8 SIGKILLs, 2 PostgreSQL crashes, 400 parks and answers) and long mode
 * (PARKWAY_FAULTS_LONG=1: 20, 3 and 1,000); each target can be set on its own while developing
 * (e.g. PARKWAY_FAULTS_KILLS=5 PARKWAY_FAULTS_OPS=200).
 */
const long = process.env.PARKWAY_FAULTS_LONG === "1";
const kills = Number(process.env.PARKWAY_FAULTS_KILLS ?? (long ? 20 : 8));
const minOps = Number(process.env.PARKWAY_FAULTS_OPS ?? (long ? 1000 : 400));
const postgresRestarts = Number(process.env.PARKWAY_FAULTS_PG_RESTARTS ?? (long ? 3 : 2));

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startPostgres();
});
afterAll(async () => {
  await postgres?.stop();
});

it(`keeps every promise through ${kills} node SIGKILLs and ${postgresRestarts} PostgreSQL crashes over ${minOps} parks and answers on 3 nodes`, async () => {
  const report = await runMultiNodeFaults(postgres, {
    nodes: 3,
    kills,
    postgresRestarts,
    minOps,
    sessions: 12,
    opsPerKill: [20, 70],
    opsPerPostgresRestart: [150, 300],
    postgresDownMs: [0, 1500],
    // It stops as soon as every target is reached; the limit only ends a run that cannot reach
    // them, on a machine busy with other work.
    timeLimitMs: 480_000,
  });
  console.log(`multi-node fault harness: ${JSON.stringify(report)}`);
  expect(report.violations).toEqual([]);
  expect(report.kills).toBeGreaterThanOrEqual(kills);
  expect(report.postgresRestarts).toBeGreaterThanOrEqual(postgresRestarts);
  expect(report.parks + report.answers).toBeGreaterThanOrEqual(minOps);
}, 540_000);
