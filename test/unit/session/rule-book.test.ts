import { describe, expect, it } from "vitest";
import { RuleIdRecord } from "../../../src/session/records.js";
import { RuleBook } from "../../../src/session/rule-book.js";
import { createMemoryStore } from "../../../src/store/index.js";
import { countingStore } from "../../helpers/counting-store.js";

describe("the rule book's cache", () => {
  it("keeps the scopes read most recently, not one per session ever served, and reads a forgotten one again", async () => {
    const { store, scans } = countingStore();
    await store.open();
    const book = new RuleBook(store, "t1");
    const allow = { toolName: "Bash", ruleContent: "ls", behavior: "allow" as const };
    await book.add([{ rule: allow, key: { scope: "session", sessionId: "ses_0" } }]);
    expect((await book.forSession("ses_0", "a1")).map((r) => r.ruleContent)).toEqual(["ls"]);

    // Many more sessions than the cache holds, each read once, as a long-running server would.
    const sessions = 20_000;
    for (let i = 1; i <= sessions; i++) await book.forSession(`ses_${i}`, "a1");
    const scanned = scans.length;
    // The tenant's and the agent's scopes are read with every session: still cached.
    expect(
      scans.filter((s) => s.startsWith("rule:t1/tenant") || s.startsWith("rule:t1/agent")),
    ).toHaveLength(2);
    // The last session read is cached; the first ones went.
    await book.forSession(`ses_${sessions}`, "a1");
    expect(scans.length).toBe(scanned);
    const again = await book.forSession("ses_0", "a1");
    expect(scans.slice(scanned)).toEqual(["rule:t1/session:ses_0/"]);
    expect(again.map((r) => r.ruleContent)).toEqual(["ls"]);
    await store.close();
  });
});

describe("equal rules stored twice", () => {
  it("are listed once, and revoking the one listed revokes both", async () => {
    const store = createMemoryStore();
    await store.open();
    // Two nodes (or an answer and AddRules) accept the same rule at the same moment: each
    // prepares it before the other's write, so each stores it.
    const first = new RuleBook(store, "t1");
    const second = new RuleBook(store, "t1");
    const key = { scope: "agent" as const, agentId: "a1" };
    const allow = { toolName: "Bash", ruleContent: "npm test:*", behavior: "allow" as const };
    const prepared = [
      await first.prepare([{ rule: allow, key }]),
      await second.prepare([{ rule: allow, key }]),
    ];
    for (const [i, book] of [first, second].entries()) {
      const batch = store.batch();
      book.write(batch, prepared[i]!.fresh);
      await batch.write({ sync: true });
      book.committed(prepared[i]!.fresh);
    }
    const ids = prepared.map((p) => p.stored[0]!.id);
    expect(new Set(ids).size).toBe(2);

    const reader = new RuleBook(store, "t1");
    const listed = await reader.list(key);
    expect(listed.map((r) => r.id)).toEqual([ids.sort()[0]]);
    // The book that stored the later copy lists one too once it reads the scope again.
    expect((await new RuleBook(store, "t1").forSession("ses_x", "a1")).length).toBe(1);

    await reader.remove(listed[0]!.id);
    expect(await new RuleBook(store, "t1").list(key)).toEqual([]);
    expect(await reader.list(key)).toEqual([]);
    for (const id of ids) expect(await store.get(RuleIdRecord, `t1/${id}`)).toBeUndefined();
    await store.close();
  });
});
