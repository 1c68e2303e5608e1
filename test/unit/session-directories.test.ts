import { mkdir, mkdtemp, readdir, realpath, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AgentDefinition } from "../../src/agent/agent.js";
import { isParkwayError, type ParkwayError } from "../../src/common/errors.js";
import { silentLogger } from "../../src/common/logger.js";
import type { Model } from "../../src/model/model.js";
import { makeSessionDirectories, newSession } from "../../src/session/new-session.js";
import { SessionRecord } from "../../src/session/records.js";
import { SessionManager } from "../../src/session/session-manager.js";
import { createLevelStore } from "../../src/store/index.js";
import type { Store } from "../../src/store/store.js";

/** An agent with two working directories; its model is never called here. */
function agent(dirs: string[], share: boolean): AgentDefinition {
  return {
    id: "test",
    description: "",
    systemPrompt: "",
    model: { name: "none" } as unknown as Model,
    tools: new Map(),
    permissionMode: "default",
    workingDirectories: dirs,
    shareWorkingDirectories: share,
    maxIters: 1,
    expiryPolicy: "deny",
    maxToolOutputBytes: 1000,
    rules: [],
  };
}

/** What `fn` throws, as a ParkwayError. */
function thrown(fn: () => unknown): ParkwayError {
  try {
    fn();
  } catch (err) {
    if (isParkwayError(err)) return err;
    throw err;
  }
  throw new Error("expected a ParkwayError");
}

const input = (workingDirectories: string[] = []) => ({
  agentId: "test",
  externalTools: [],
  workingDirectories,
});

let root: string;
let dirs: string[];
beforeEach(async () => {
  root = await realpath(await mkdtemp(path.join(tmpdir(), "parkway-session-dirs-")));
  dirs = [path.join(root, "a"), path.join(root, "b")];
  for (const dir of dirs) await mkdir(dir);
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("a new session's working directories", () => {
  it("are <agent dir>/<session id> for each of the agent's when it does not share them", () => {
    const data = newSession("default", agent(dirs, false), ["test"], input());
    expect(data.workingDirectories).toEqual(dirs.map((dir) => path.join(dir, data.id)));
  });

  it("refuses working_directories naming the field when the agent does not share its directories", () => {
    const err = thrown(() =>
      newSession("default", agent(dirs, false), ["test"], input([dirs[0]!])),
    );
    expect(err.code).toBe("invalid_argument");
    expect(err.details.fieldViolations).toEqual([
      {
        field: "working_directories",
        description:
          "must be empty: agent test gives each session its own directory inside each of its working directories; an agent with shareWorkingDirectories set lets sessions choose directories inside its own",
      },
    ]);
    expect(err.message).toMatch(/^working_directories: must be empty/);
  });

  it("are the agent's, or those asked for inside them, when it shares them", () => {
    const shared = agent(dirs, true);
    expect(newSession("default", shared, ["test"], input()).workingDirectories).toEqual(dirs);
    const inside = path.join(dirs[1]!, "sub");
    expect(newSession("default", shared, ["test"], input([inside])).workingDirectories).toEqual([
      inside,
    ]);
    const outside = thrown(() => newSession("default", shared, ["test"], input(["/etc"])));
    expect(outside.details.fieldViolations?.[0]?.field).toBe("working_directories[0]");
  });

  it("are created with mode 0700, and a failure removes those made and names the directory", async () => {
    const own = agent(dirs, false);
    const data = newSession("default", own, ["test"], input());
    await makeSessionDirectories(own, data);
    for (const dir of data.workingDirectories) {
      expect((await stat(dir)).isDirectory()).toBe(true);
      expect((await stat(dir)).mode & 0o777).toBe(0o700);
    }

    // The second agent directory is a file: its session directory cannot be made.
    await rm(dirs[1]!, { recursive: true });
    await writeFile(dirs[1]!, "not a directory");
    const next = newSession("default", own, ["test"], input());
    const err = await makeSessionDirectories(own, next).then(
      () => new Error("expected a failure"),
      (e: unknown) => e,
    );
    expect(isParkwayError(err, "internal")).toBe(true);
    expect((err as Error).message).toContain(
      `cannot create the working directory ${next.workingDirectories[1]} of the new session: ENOTDIR`,
    );
    expect(await readdir(dirs[0]!)).toEqual([data.id]);
  });
});

describe("SessionManager.create", () => {
  let store: Store;
  beforeEach(async () => {
    store = createLevelStore(path.join(root, "data"));
    await store.open();
  });
  afterEach(async () => {
    await store.close();
  });

  it("makes the session's directories before its record, and writes nothing when they cannot be made", async () => {
    const manager = new SessionManager(
      store,
      new Map([["test", agent(dirs, false)]]),
      silentLogger,
    );
    const view = await manager.create("acme", input());
    expect(view.workingDirectories).toEqual(dirs.map((dir) => path.join(dir, view.id)));
    for (const dir of view.workingDirectories) expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect((await store.get(SessionRecord, view.id))?.workingDirectories).toEqual(
      view.workingDirectories,
    );

    await rm(dirs[0]!, { recursive: true });
    await writeFile(dirs[0]!, "not a directory");
    await expect(manager.create("acme", input())).rejects.toThrow(
      /cannot create the working directory .* of the new session/,
    );
    expect((await manager.list("acme", { pageSize: 10 })).sessions.map((s) => s.id)).toEqual([
      view.id,
    ]);
    expect(await readdir(dirs[1]!)).toEqual([view.id]);
  });

  it("keeps the directories stored in a session's record", async () => {
    const manager = new SessionManager(
      store,
      new Map([["test", agent(dirs, false)]]),
      silentLogger,
    );
    const view = await manager.create("acme", input());
    // A session stored before sessions had directories of their own names the agent's.
    const stored = (await store.get(SessionRecord, view.id))!;
    await store
      .batch()
      .put(SessionRecord, view.id, { ...stored, workingDirectories: dirs })
      .write();
    expect((await manager.get("acme", view.id)).workingDirectories).toEqual(dirs);
  });
});
