import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createParkwayClient } from "../../src/client/index.js";
import { SessionStatus } from "../../src/generated/parkway/v1/agent_service.js";
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import { startScriptedModel, type ScriptedModelServer } from "../../src/model/scripted/index.js";
import { collect, kind, startedCalls } from "../helpers/parkway-harness.js";
import { startPostgres, type TestPostgres } from "../helpers/postgres.js";
import {
  REPO_ROOT,
  runServe,
  type SpawnedServer,
  spawnServer,
  tempDir,
} from "../helpers/spawn-server.js";

/** Parkway served on PostgreSQL (`--database-url`) through the README's serve command. */
let postgres: TestPostgres;
let model: ScriptedModelServer | undefined;
let server: SpawnedServer | undefined;
beforeAll(async () => {
  postgres = await startPostgres();
});
afterAll(async () => {
  await server?.stop();
  await model?.close();
  await postgres?.stop();
});

const PASSWORD = "pw-never-logged";

const replyEnd = (events: ServerEvent[]) => {
  const e = events.find((x) => x.event?.$case === "replyEnd");
  return e?.event?.$case === "replyEnd" ? e.event.value : undefined;
};

describe("Parkway on PostgreSQL", () => {
  it("parks a reply, keeps it through SIGKILL and a restart, and completes it when answered, as on LevelDB", async () => {
    const root = await tempDir("parkway-pg-");
    const workdir = path.join(root, "work");
    model = await startScriptedModel({
      script: {
        turns: [
          {
            toolCalls: [
              { id: "c1", name: "Bash", input: { command: "touch kept.txt && echo kept" } },
            ],
          },
          { text: "All done." },
        ],
      },
    });
    const config = path.join(root, "parkway.json");
    await writeFile(
      config,
      JSON.stringify({
        model: { url: model.url, name: "scripted", maxRetries: 0 },
        agents: [{ id: "test", workingDirectories: [workdir] }],
      }),
    );
    await postgres.createDatabase("parkway");
    const url = postgres.url("parkway", { password: PASSWORD });
    // The LevelDB directory is never made.
    const dataDir = path.join(root, "unused-data");
    const launch = () =>
      spawnServer({ dataDir, direct: true, args: ["--config", config, "--database-url", url] });

    server = await launch();
    const listening = server.output
      .map((line) => JSON.parse(line) as { msg?: string; database?: string })
      .find((entry) => entry.msg === "listening");
    expect(listening?.database).toBe(postgres.url("parkway", { password: "***" }));
    // The harness also passes --data: the server says it is unused.
    expect(server.output.join("\n")).toContain(
      "data (from flag --data) is unused: database.url (from flag --database-url) is set",
    );
    let client = createParkwayClient(server.address);
    const session = await client.createSession({ agentId: "test" });
    const chat = await client.attach(session.id);
    const before = await collect(chat.message("go"));
    expect(before.map(kind).slice(-2)).toEqual(["require_user_confirm", "reply_parked"]);
    chat.close();
    client.close();

    // Killed: the park was committed (synced) before REQUIRE_USER_CONFIRM was sent.
    const killed = server;
    const exited = new Promise((resolve) => killed.child.once("exit", resolve));
    process.kill(-killed.child.pid!, "SIGKILL");
    await exited;
    const firstOutput = killed.output.join("\n");
    server = await launch();
    client = createParkwayClient(server.address);
    const parked = await client.getSession(session.id);
    expect(parked.status).toBe(SessionStatus.SESSION_STATUS_AWAITING_PERMISSION);
    expect(parked.pendingToolCalls.map((call) => call.id)).toEqual(startedCalls(before));
    expect(parked.lastSeq).toBe(before[before.length - 1]!.seq);

    const again = await client.attach(session.id, { afterSeq: parked.lastSeq });
    const reannounced = await again.next();
    expect(reannounced?.event?.$case).toBe("requireUserConfirm");
    await again.send({
      $case: "userConfirmResult",
      value: {
        replyId: "",
        confirmResults: [
          {
            confirmed: true,
            toolCall: { ...parked.pendingToolCalls[0]!, input: "" },
            rules: [],
            reason: "",
          },
        ],
      },
    });
    const after = await collect(again.untilSettled());
    again.close();
    client.close();
    expect(after[0]!.seq).toBe(parked.lastSeq + 1);
    expect(after.map(kind)).not.toContain("reply_start");
    expect(replyEnd(after)?.finishedReason).toBe(1);
    expect(existsSync(path.join(session.workingDirectories[0]!, "kept.txt"))).toBe(true);
    expect(JSON.stringify(model.requests.at(-1)?.messages)).toContain("kept");
    expect(await server.stop()).toBe(0);
    const output = `${firstOutput}\n${server.output.join("\n")}`;
    server = undefined;
    expect(existsSync(dataDir)).toBe(false);
    expect(output).not.toContain(PASSWORD);
  });

  it("refuses a URL that is not PostgreSQL's with one line naming the field", async () => {
    const res = await runServe([
      "--listen",
      "127.0.0.1:0",
      "--database-url",
      `mysql://u:${PASSWORD}@h/db`,
    ]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(
      /^parkway: invalid config: database\.url \(from flag --database-url\): expected a PostgreSQL URL/,
    );
    expect(res.stderr + res.stdout).not.toContain(PASSWORD);
  });

  it("refuses to start on a database it cannot reach, naming it with the password masked", async () => {
    const url = postgres.url("missing_db", { password: PASSWORD });
    const res = await runServe(["--listen", "127.0.0.1:0", "--database-url", url]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      `parkway: cannot open database ${postgres.url("missing_db", { password: "***" })}`,
    );
    expect(res.stderr + res.stdout).not.toContain(PASSWORD);
  });

  it("masks a password given as a URL parameter (?password=, ?sslpassword=) in its log and messages", async () => {
    await postgres.createDatabase("parkway_query_password");
    const base = postgres.url("parkway_query_password");
    const url = `${base}?password=${PASSWORD}&sslpassword=${PASSWORD}-ssl&application_name=ops`;
    const running = await spawnServer({ direct: true, args: ["--database-url", url] });
    const output = running.output.join("\n");
    expect(await running.stop()).toBe(0);
    expect(output).not.toContain(PASSWORD);
    const listening = running.output
      .map((line) => JSON.parse(line) as { msg?: string; database?: string })
      .find((entry) => entry.msg === "listening");
    expect(listening?.database).toBe(`${base}?password=***&sslpassword=***&application_name=ops`);
    const missing = `${postgres.url("missing_db")}?password=${PASSWORD}`;
    const res = await runServe(["--listen", "127.0.0.1:0", "--database-url", missing]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      `parkway: cannot open database ${postgres.url("missing_db")}?password=***`,
    );
    expect(res.stderr + res.stdout).not.toContain(PASSWORD);
  });

  it("leaves repair to LevelDB directories: with a database configured it names it and changes nothing", () => {
    const url = postgres.url("parkway", { password: PASSWORD });
    const res = spawnSync(process.execPath, ["bin/parkway.js", "repair"], {
      cwd: REPO_ROOT,
      env: { ...process.env, PARKWAY_DATABASE_URL: url },
      encoding: "utf8",
    });
    expect(res.status).toBe(2);
    expect(res.stderr).toContain(postgres.url("parkway", { password: "***" }));
    expect(res.stderr).not.toContain(PASSWORD);
    expect(res.stdout).toBe("");
  });
});
