/**
 * A rule is found by its id without reading the tenant's other rules: its index record says where
 * it is. Rules stored before those records existed are indexed in one pass, the first time the
 * tenant's rules are looked up by id.
 */
import { describe, expect, it } from "vitest";
import { RuleIdRecord, RuleRecord } from "../../../src/session/records.js";
import { RuleBook } from "../../../src/session/rule-book.js";
import { reindexRuleIds } from "../../../src/session/rule-ids.js";
import { createMemoryStore } from "../../../src/store/index.js";
import type { Store } from "../../../src/store/store.js";
import { countingStore } from "../../helpers/counting-store.js";

const allow = (ruleContent: string) => ({
  toolName: "Bash",
  ruleContent,
  behavior: "allow" as const,
});

/** Stores rules as a server did before rules were indexed by id: the rule records alone. */
async function storeUnindexed(store: Store, tenant: string, count: number): Promise<string[]> {
  const batch = store.batch();
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const id = `old_${i}`;
    ids.push(id);
    batch.put(RuleRecord, `${tenant}/session:ses_${i}/${id}`, {
      ...allow(`echo ${i}`),
      id,
      tenant,
      scope: "session",
      sessionId: `ses_${i}`,
    });
  }
  await batch.write({ sync: true });
  return ids;
}

const tenantScans = (scans: string[], tenant: string) =>
  scans.filter((s) => s === `rule:${tenant}/`).length;

describe("rules found by id", () => {
  it("indexes the rules stored before the index once, then finds any rule without a scan", async () => {
    const { store, scans } = countingStore();
    await store.open();
    const ids = await storeUnindexed(store, "t1", 50);
    const book = new RuleBook(store, "t1");

    expect((await book.remove(ids[10]!)).ruleContent).toBe("echo 10");
    expect(tenantScans(scans, "t1")).toBe(1);
    expect(await store.get(RuleRecord, `t1/session:ses_10/${ids[10]}`)).toBeUndefined();
    expect(await store.get(RuleIdRecord, `t1/${ids[10]}`)).toBeUndefined();
    expect(await store.get(RuleIdRecord, `t1/${ids[11]}`)).toEqual({ scope: "session:ses_11" });

    // From then on: an old rule, a new one, an id never stored, one removed already.
    expect((await book.remove(ids[49]!)).ruleContent).toBe("echo 49");
    const { stored } = await book.add([
      { rule: allow("ls"), key: { scope: "agent", agentId: "a1" } },
    ]);
    expect((await book.remove(stored[0]!.id)).ruleContent).toBe("ls");
    for (const missing of ["nope", ids[10]!, stored[0]!.id]) {
      await expect(book.remove(missing)).rejects.toMatchObject({ code: "not_found" });
    }
    expect(tenantScans(scans, "t1")).toBe(1);
    // The other rules were left as they were.
    expect((await book.list({ scope: "session", sessionId: "ses_20" })).map((r) => r.id)).toEqual([
      ids[20],
    ]);
    await store.close();
  });

  it("indexes a tenant again after a repair, finding a rule whose index record was lost", async () => {
    const { store, scans } = countingStore();
    await store.open();
    const book = new RuleBook(store, "t1");
    const { stored } = await book.add([
      { rule: allow("ls"), key: { scope: "tenant" } },
      { rule: allow("pwd"), key: { scope: "tenant" } },
    ]);
    await expect(book.remove("nope")).rejects.toMatchObject({ code: "not_found" });
    // A repair lost the index record of one rule.
    await store.batch().del(RuleIdRecord, `t1/${stored[1]!.id}`).write({ sync: true });
    await expect(book.remove(stored[1]!.id)).rejects.toMatchObject({ code: "not_found" });
    await reindexRuleIds(store);
    expect((await book.remove(stored[1]!.id)).ruleContent).toBe("pwd");
    expect(tenantScans(scans, "t1")).toBe(2);
    expect((await book.remove(stored[0]!.id)).ruleContent).toBe("ls");
    expect(tenantScans(scans, "t1")).toBe(2);
    await store.close();
  });

  it("keeps tenants apart: one tenant's rule id is not found in another", async () => {
    const store = createMemoryStore();
    await store.open();
    const [id] = await storeUnindexed(store, "t1", 1);
    const { stored } = await new RuleBook(store, "t2").add([
      { rule: allow("ls"), key: { scope: "tenant" } },
    ]);
    await expect(new RuleBook(store, "t2").remove(id!)).rejects.toMatchObject({
      code: "not_found",
    });
    await expect(new RuleBook(store, "t1").remove(stored[0]!.id)).rejects.toMatchObject({
      code: "not_found",
    });
    expect((await new RuleBook(store, "t1").remove(id!)).ruleContent).toBe("echo 0");
    await store.close();
  });

  it("drops the index records of a deleted session's rules", async () => {
    const store = createMemoryStore();
    await store.open();
    const book = new RuleBook(store, "t1");
    const key = { scope: "session" as const, sessionId: "ses_a" };
    const { stored } = await book.add([
      { rule: allow("ls"), key },
      { rule: allow("pwd"), key },
    ]);
    for (const rule of stored) {
      expect(await store.get(RuleIdRecord, `t1/${rule.id}`)).toEqual({ scope: "session:ses_a" });
    }
    const batch = store.batch();
    await book.deleteSessionRules(batch, "ses_a");
    await batch.write({ sync: true });
    for (const rule of stored) {
      expect(await store.get(RuleIdRecord, `t1/${rule.id}`)).toBeUndefined();
      await expect(book.remove(rule.id)).rejects.toMatchObject({ code: "not_found" });
    }
    await store.close();
  });
});
