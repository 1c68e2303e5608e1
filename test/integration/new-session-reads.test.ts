import { afterEach, describe, expect, it } from "vitest";
import { createParkwayClient, type ParkwayClient } from "../../src/client/index.js";
import { PermissionBehavior, RuleScope } from "../../src/generated/parkway/v1/permission.js";
import { type RunningParkway, startParkway } from "../../src/runtime/start-parkway.js";
import { createLevelStore } from "../../src/store/index.js";
import type { Store } from "../../src/store/store.js";
import { captureLog } from "../helpers/capture-log.js";
import { parkingConfig } from "../helpers/parking-config.js";
import { collect, kind } from "../helpers/parkway-harness.js";

/**
 * A session created on this server is known to it without a read: attaching to it and its first
 * reply (its rules included) read nothing from the store. A session the server has not just
 * created is read as before.
 */
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** The store's LevelDB, counting every read: single records, several at once, and ranges. */
function countingStore(dataDir: string): { store: Store; reads: string[] } {
  const inner = createLevelStore(dataDir);
  const reads: string[] = [];
  const counted = new Set(["get", "getMany", "entries", "keys"]);
  const store = new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== "function") return value;
      const fn = (value as (...a: unknown[]) => unknown).bind(target);
      if (!counted.has(String(prop))) return fn;
      return (...args: unknown[]) => {
        reads.push(`${String(prop)} ${(args[0] as { kind: string }).kind}`);
        return fn(...args);
      };
    },
  });
  return { store, reads };
}

async function started() {
  const config = await parkingConfig("parkway-new-session-", cleanups);
  const self = {
    parkway: undefined as unknown as RunningParkway,
    client: undefined as unknown as ParkwayClient,
    reads: [] as string[],
    async start() {
      const { store, reads } = countingStore(config.data);
      self.reads = reads;
      self.parkway = await startParkway({ config, log: captureLog(), store });
      self.client = createParkwayClient(self.parkway.address);
    },
    async stop() {
      self.client.close();
      await self.parkway.close();
    },
  };
  await self.start();
  cleanups.push(() => self.stop());
  return self;
}

describe("a session created here", () => {
  it("is attached and parks its first reply without reading the store; one created before is read", async () => {
    const s = await started();
    /** The store reads made while `call` ran. */
    const readsOf = async (call: () => Promise<unknown>): Promise<string[]> => {
      const before = s.reads.length;
      await call();
      return s.reads.slice(before);
    };
    const parkedNew = async () => {
      const { id } = await s.client.createSession({ agentId: "test" });
      const chat = await s.client.attach(id);
      const events = await collect(chat.message("park"));
      chat.close();
      return { id, kinds: events.map(kind) };
    };

    // The first session reads the tenant's count and the tenant's and the agent's rules.
    const first = await parkedNew();
    expect(first.kinds).toContain("require_user_confirm");
    let second: { id: string; kinds: string[] } | undefined;
    expect(await readsOf(async () => (second = await parkedNew()))).toEqual([]);
    expect(second!.kinds).toContain("require_user_confirm");
    expect(second!.kinds.at(-1)).toBe("reply_parked");

    // After a restart, a session created before is read when attached.
    await s.stop();
    await s.start();
    const attached = await readsOf(async () => (await s.client.attach(second!.id)).close());
    expect(attached).toContain("get session");
  });

  it("takes a rule given to it before its first reply, and is gone once deleted before any use", async () => {
    const s = await started();
    const { id } = await s.client.createSession({ agentId: "test" });
    await s.client.addRules([
      {
        toolName: "Bash",
        ruleContent: "touch parked.txt",
        behavior: PermissionBehavior.PERMISSION_BEHAVIOR_ALLOW,
        scope: RuleScope.RULE_SCOPE_SESSION,
        sessionId: id,
      },
    ]);
    const chat = await s.client.attach(id);
    // The rule allows the call: it runs without asking, and the model is called again.
    const kinds = (await collect(chat.message("run"))).map(kind);
    chat.close();
    expect(kinds).not.toContain("require_user_confirm");
    expect(kinds).toContain("tool_result_end");
    expect(kinds.at(-1)).toBe("reply_end");

    const gone = await s.client.createSession({ agentId: "test" });
    await s.client.deleteSession(gone.id);
    const refused = await s.client.attach(gone.id).then(
      (stream) => {
        stream.close();
        return "attached";
      },
      (err: { code?: number }) => err.code,
    );
    expect(refused).toBe(5); // NOT_FOUND
    await expect(s.client.getSession(gone.id)).rejects.toMatchObject({ code: 5 });
  });
});
