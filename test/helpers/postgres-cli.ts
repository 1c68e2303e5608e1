/**
 * A temporary PostgreSQL cluster for the Python and Go runners (see `startPostgres`): starts it,
 * creates one database, prints `{"url": "postgres://…", "port": N}` as one line on stdout, then
 * waits. The cluster is stopped and removed when stdin closes (the runner ended or died) or on
 * SIGTERM/SIGINT.
 *
 * Usage: node --import tsx test/helpers/postgres-cli.ts
 */
import { createInterface } from "node:readline";
import { startPostgres } from "./postgres.js";

const postgres = await startPostgres();
const url = await postgres.createDatabase("parkway");
process.stdout.write(`${JSON.stringify({ url, port: postgres.port })}\n`);

let stopping: Promise<void> | undefined;
const stop = () => {
  stopping ??= postgres.stop().finally(() => process.exit(0));
  return stopping;
};
process.on("SIGTERM", () => void stop());
process.on("SIGINT", () => void stop());
createInterface({ input: process.stdin }).on("close", () => void stop());
