import { execFile } from "node:child_process";
import { cp, readdir, readFile, rm, stat, truncate, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createParkwayClient, type ParkwayClientError } from "../../src/client/index.js";
import { SessionStatus } from "../../src/generated/parkway/v1/agent_service.js";
import { type Script, startScriptedModel } from "../../src/model/scripted/index.js";
import type { ScriptedModelServer } from "../../src/model/scripted/index.js";
import { SessionRecord } from "../../src/session/records.js";
import { createLevelStore } from "../../src/store/index.js";
import { confirmInput } from "../helpers/confirm-input.js";
import { REPO_ROOT, type SpawnedServer, spawnServer, tempDir } from "../helpers/spawn-server.js";

const script: Script = {
  turns: [
    {
      match: { lastUser: "park" },
      repeat: true,
      toolCalls: [{ name: "Bash", input: { command: "touch parked.txt" } }],
    },
    { match: { toolName: "Bash" }, repeat: true, text: "done" },
    { match: { lastUser: "hello" }, repeat: true, text: "hi" },
  ],
};

/** The sessions of the populated store, by what their replies did. */
interface Population {
  /** Replies finished without parking. */
  idle: string[];
  /** Replies still parked. */
  parked: string[];
  /** Replies that parked, then finished (their end was the last thing written). */
  finished: string[];
}

let root: string;
let model: ScriptedModelServer;
let config: string;
/** A data directory as a clean stop left it: every write still in LevelDB's log. */
let logged: string;
let population: Population;

const userMessage = (text: string) => ({
  $case: "userMessage" as const,
  value: { text, content: [] },
});

/** Runs `parkway ARGS` (what `npm start` runs, without npm) to its exit. */
function parkway(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["bin/parkway.js", ...args],
      { cwd: REPO_ROOT, timeout: 30_000 },
      (err, stdout, stderr) => {
        const code = err ? ((err as { code?: number }).code ?? -1) : 0;
        resolve({ code: typeof code === "number" ? code : -1, stdout, stderr });
      },
    );
  });
}

const serve = (dataDir: string) =>
  spawnServer({ dataDir, direct: true, args: ["--config", config] });

/** Starts the server on `dataDir` expecting a refusal; resolves with its exit code and stderr. */
const refusedStart = (dataDir: string) =>
  parkway(["serve", "--listen", "127.0.0.1:0", "--data", dataDir, "--config", config]);

/** A fresh copy of the populated store. */
async function copyOf(source: string, name: string): Promise<string> {
  const dir = path.join(root, name);
  await cp(source, dir, { recursive: true });
  return dir;
}

async function codeOf(p: Promise<unknown>): Promise<ParkwayClientError | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    return err as ParkwayClientError;
  }
}

/**
 * What a client sees of each session on a running server: its status, or the error name. A reply
 * that finished may be gone or lost, never parked again.
 */
async function observe(server: SpawnedServer, ids: string[]): Promise<Map<string, string>> {
  const client = createParkwayClient(server.address);
  const seen = new Map<string, string>();
  for (const id of ids) {
    try {
      seen.set(id, SessionStatus[(await client.getSession(id)).status] ?? "?");
    } catch (err) {
      seen.set(id, (err as ParkwayClientError).codeName);
    }
  }
  client.close();
  return seen;
}

beforeAll(async () => {
  root = await tempDir("parkway-corruption-");
  model = await startScriptedModel({ script });
  config = path.join(root, "parkway.json");
  await writeFile(
    config,
    JSON.stringify({
      model: { url: model.url, name: "scripted", maxRetries: 0 },
      agents: [{ id: "test", workingDirectories: [path.join(root, "work")] }],
    }),
  );
  logged = path.join(root, "logged");
  const server = await serve(logged);
  const client = createParkwayClient(server.address);
  population = { idle: [], parked: [], finished: [] };
  const parkedCalls = new Map<string, string>();
  for (let i = 0; i < 36; i++) {
    const { id } = await client.createSession({ agentId: "test" });
    if (i < 12) {
      await client.reply({ sessionId: id, input: userMessage("hello") });
      population.idle.push(id);
      continue;
    }
    const parked = await client.reply({ sessionId: id, input: userMessage("park") });
    parkedCalls.set(id, parked.pendingToolCalls[0]!.id);
    (i < 24 ? population.parked : population.finished).push(id);
  }
  for (const id of population.finished) {
    const done = await client.reply({ sessionId: id, input: confirmInput(parkedCalls.get(id)!) });
    expect(done.message?.finishedReason).toBeGreaterThan(0);
  }
  client.close();
  expect(await server.stop()).toBe(0);
}, 60_000);

afterAll(async () => {
  await model?.close();
  await rm(root, { recursive: true, force: true });
});

describe("a damaged store", () => {
  it("refuses to start when half of LevelDB's log is cut, and after a repair serves what survived without parking a finished reply again", async () => {
    const dir = await copyOf(logged, "cut-log");
    const log = (await readdir(dir)).find((f) => f.endsWith(".log"))!;
    await truncate(path.join(dir, log), Math.floor((await stat(path.join(dir, log))).size / 2));

    const refused = await refusedStart(dir);
    expect(refused.code, refused.stderr).toBe(65);
    expect(refused.stderr.trim().split("\n")).toHaveLength(1);
    expect(refused.stderr).toContain(`${log}: lost the last`);
    expect(refused.stderr).toContain(`parkway repair --data ${dir}`);
    // Refused again: LevelDB has replaced the cut log by now, the marker remembers.
    expect((await refusedStart(dir)).stderr).toContain(log);

    const repaired = await parkway(["repair", "--data", dir]);
    expect(repaired.stdout).toMatch(/writes lost: \d+/);
    expect(repaired.code).toBe(3);

    const server = await serve(dir);
    const seen = await observe(server, [
      ...population.idle,
      ...population.parked,
      ...population.finished,
    ]);
    await server.stop();
    expect(population.idle.every((id) => seen.get(id) === "SESSION_STATUS_IDLE")).toBe(true);
    expect([...seen.values()].filter((s) => s === "NOT_FOUND").length).toBeGreaterThan(0);
    for (const id of [...population.parked, ...population.finished]) {
      expect(["NOT_FOUND", "DATA_LOSS", "SESSION_STATUS_IDLE"], id).toContain(seen.get(id));
    }
    expect(repaired.stdout).toContain(
      [...seen].find(([, s]) => s === "DATA_LOSS")?.[0] ?? "no session answers DATA_LOSS",
    );
  }, 60_000);

  it("refuses to start when CURRENT is gone rather than creating an empty store, and a repair brings every session back", async () => {
    const dir = await copyOf(logged, "no-current");
    await rm(path.join(dir, "CURRENT"));

    const [refused, help] = await Promise.all([refusedStart(dir), parkway(["repair", "--help"])]);
    expect(refused.code, refused.stderr).toBe(65);
    expect(refused.stderr.trim().split("\n")).toHaveLength(1);
    expect(refused.stderr).toContain("CURRENT: is missing while the directory holds LevelDB files");
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("usage: parkway repair [options]");
    expect(help.stdout).toContain("--data DIR");

    const repaired = await parkway(["repair", "--data", dir]);
    expect(repaired.code).toBe(0);
    expect(repaired.stdout).toContain("sessions checked: 36; answering DATA_LOSS: 0");

    const server = await serve(dir);
    const seen = await observe(server, [...population.parked, ...population.finished]);
    await server.stop();
    for (const id of population.parked) {
      expect(seen.get(id)).toBe("SESSION_STATUS_AWAITING_PERMISSION");
    }
    for (const id of population.finished) expect(seen.get(id)).toBe("SESSION_STATUS_IDLE");
  }, 60_000);

  it("refuses to start on a damaged parkway-store.json without rewriting it, and a repair rewrites it, counting parked replies as lost", async () => {
    const dir = await copyOf(logged, "damaged-marker");
    const marker = path.join(dir, "parkway-store.json");
    await writeFile(marker, "{x");

    const refused = await refusedStart(dir);
    expect(refused.code, refused.stderr).toBe(65);
    const lines = refused.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(`^parkway: store ${dir} is damaged: parkway-store\\.json: is not valid JSON \\(`),
    );
    expect(lines[0]).toContain(`run \`parkway repair --data ${dir}\``);
    expect(await readFile(marker, "utf8")).toBe("{x");

    await writeFile(marker, JSON.stringify({ format: 1, storeId: "s" }));
    const incomplete = await refusedStart(dir);
    expect(incomplete.code, incomplete.stderr).toBe(65);
    expect(incomplete.stderr).toContain("parkway-store.json: is not a store marker (bad writes)");

    const repaired = await parkway(["repair", "--data", dir]);
    expect(repaired.stdout).toContain("parkway-store.json is not a store marker (bad writes)");
    expect(repaired.stdout).toContain(
      `sessions checked: 36; answering DATA_LOSS: ${population.parked.length}`,
    );
    expect(repaired.code).toBe(3);
    const server = await serve(dir);
    const seen = await observe(server, [...population.idle, ...population.parked]);
    await server.stop();
    for (const id of population.idle) expect(seen.get(id)).toBe("SESSION_STATUS_IDLE");
    for (const id of population.parked) expect(seen.get(id)).toBe("DATA_LOSS");
  }, 60_000);

  it("refuses to start on a truncated table or MANIFEST, naming the file", async () => {
    // Opening the store once turns its log into a table.
    const tabled = await copyOf(logged, "tabled");
    const store = createLevelStore(tabled);
    await store.open();
    await store.close();
    const table = (await readdir(tabled)).find((f) => f.endsWith(".ldb"))!;
    const manifest = (await readdir(tabled)).find((f) => f.startsWith("MANIFEST-"))!;

    const cutTable = await copyOf(tabled, "cut-table");
    await truncate(path.join(cutTable, table), (await stat(path.join(cutTable, table))).size - 20);
    const cutManifest = await copyOf(tabled, "cut-manifest");
    const size = (await stat(path.join(cutManifest, manifest))).size;
    await truncate(path.join(cutManifest, manifest), Math.floor(size / 2));
    const [tableRefused, manifestRefused] = await Promise.all([
      refusedStart(cutTable),
      refusedStart(cutManifest),
    ]);
    expect(tableRefused.code, tableRefused.stderr).toBe(65);
    expect(tableRefused.stderr.trim().split("\n")).toHaveLength(1);
    expect(tableRefused.stderr).toContain(`${table}: is truncated (`);

    expect(manifestRefused.code, manifestRefused.stderr).toBe(65);
    expect(manifestRefused.stderr.trim().split("\n")).toHaveLength(1);
    expect(manifestRefused.stderr).toContain(`${manifest}: LevelDB reports`);

    // The table held every record: the repair sets it aside, and loses every session with it.
    const [repaired, manifestRepaired] = await Promise.all([
      parkway(["repair", "--data", cutTable]),
      parkway(["repair", "--data", cutManifest]),
    ]);
    expect(repaired.stdout).toContain(`unreadable, moved aside: lost/${table}`);
    expect(repaired.stdout).toContain("repaired; some records were lost");
    expect(manifestRepaired.stdout).toContain("sessions checked: 36; answering DATA_LOSS: 0");
    expect(manifestRepaired.code).toBe(0);
  }, 60_000);

  it("answers DATA_LOSS for a session whose record disagrees with its events, logs it once, and serves the others", async () => {
    const dir = await copyOf(logged, "edited");
    const store = createLevelStore(dir);
    await store.open();
    const victim = population.parked[0]!;
    const data = (await store.get(SessionRecord, victim))!;
    await store
      .batch()
      .put(SessionRecord, victim, { ...data, lastSeq: data.lastSeq + 3 })
      .write({ sync: true });
    await store.close();

    const server = await serve(dir);
    const client = createParkwayClient(server.address);
    const got = await codeOf(client.getSession(victim));
    expect(got?.codeName).toBe("DATA_LOSS");
    expect(got?.message).toContain(`session ${victim} has lost data`);
    expect(got?.message).toContain(`below its last seq ${data.lastSeq + 3}`);
    const input = await codeOf(client.reply({ sessionId: victim, input: userMessage("hello") }));
    expect(input?.codeName).toBe("DATA_LOSS");
    const attach = await codeOf(
      (async () => {
        const chat = await client.attach(victim);
        try {
          await chat.next();
        } finally {
          chat.close();
        }
      })(),
    );
    expect(attach?.codeName).toBe("DATA_LOSS");

    const other = population.parked[1]!;
    expect((await client.getSession(other)).status).toBe(
      SessionStatus.SESSION_STATUS_AWAITING_PERMISSION,
    );
    const { id } = await client.createSession({ agentId: "test" });
    const reply = await client.reply({ sessionId: id, input: userMessage("hello") });
    expect(reply.message?.finishedReason).toBeGreaterThan(0);
    // Deleting is still possible.
    await client.deleteSession(victim);
    expect((await codeOf(client.getSession(victim)))?.codeName).toBe("NOT_FOUND");
    client.close();
    await server.stop();
    const lines = server.output.filter((line) => line.includes("session has lost data"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(victim);
  }, 60_000);
});
