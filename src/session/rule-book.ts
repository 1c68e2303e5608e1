import { LRUCache } from "lru-cache";
import type { RuleScope } from "../permissions/index.js";
import type { Rule } from "../agent/types.js";
import { notFound } from "../common/errors.js";
import { ConflictError } from "../store/storage-failure.js";
import { SerialWork } from "./serial-work.js";
import { newId } from "../common/ids.js";
import { MAX_RULES_PER_SCOPE, sameRule } from "../permissions/index.js";
import type { StoreSignals } from "../store/signals.js";
import { rulesTopic } from "./signal-topics.js";
import type { Store, StoreBatch } from "../store/store.js";
import { RuleRecord } from "./records.js";
import { type RuleScopeKey, recordKey, scopeFull, scopeKey } from "./rule-scope.js";
import { findRule, indexRule, unindexRule } from "./rule-ids.js";

export type { RuleScopeKey } from "./rule-scope.js";

/** A stored rule: always has an id, a scope and its tenant. */
export type StoredRule = Rule & {
  id: string;
  tenant: string;
  scope: RuleScope;
};

/** How long several nodes keep a scope's rules without reading them again (a lost signal). */
const SHARED_CACHE_MS = 2000;

/**
 * The most scopes a tenant's rules are cached for, the least recently read going first: one per
 * session in use, besides the tenant's and its agents', so a server that has served a million
 * sessions does not keep a million entries. A scope read again after it went is read from the store.
 */
const MAX_CACHED_SCOPES = 16_384;

/**
 * The stored permission rules of one tenant, by scope, cached in memory after the first read.
 * Adding is de-duplicated per scope (same tool, content and behavior); writes go into the caller's
 * batch so a rule accepted with a confirmation commits atomically with it. With several nodes on
 * one database (`signals`), every change is signalled and each node forgets its cache on the
 * signal, and reads a scope again after at most two seconds anyway: a rule revoked on one node
 * stops deciding on the others.
 */
export class RuleBook {
  private readonly cache = new LRUCache<string, StoredRule[]>({
    max: MAX_CACHED_SCOPES,
    // A scope replaced by a fresh read keeps its time; one evicted or deleted loses it.
    dispose: (_rules, key, reason) => {
      if (reason !== "set") this.readAt.delete(key);
    },
  });
  /** When each scope was read, with several nodes. */
  private readonly readAt = new Map<string, number>();
  /** Adds and removals, one at a time. */
  private readonly writes = new SerialWork();
  /** Rules being removed, by scope key: no longer read from the store while their removal is written. */
  private readonly withdrawing = new Set<{ scope: string; rule: StoredRule }>();

  constructor(
    private readonly store: Store,
    private readonly tenant: string,
    private readonly signals?: StoreSignals,
  ) {
    signals?.watch(rulesTopic(tenant), () => this.cache.clear());
  }

  /** Tells the other nodes that this tenant's rules changed (after the write). */
  changed(): void {
    this.signals?.signal(rulesTopic(this.tenant));
  }

  /** The cached rules of scope `k`, unless absent or (with several nodes) read too long ago. */
  private cached(k: string): StoredRule[] | undefined {
    const rules = this.cache.get(k);
    if (rules && this.signals && Date.now() - (this.readAt.get(k) ?? 0) > SHARED_CACHE_MS) {
      return undefined;
    }
    return rules;
  }

  /**
   * The rules of a scope, from the cache unless `fresh` (then read from the store). Of equal rules
   * (see `sameRule`) only the first stored is listed: two accepted at the same moment (two answers,
   * an answer and AddRules, two nodes) may both have been written.
   */
  private async load(key: RuleScopeKey, fresh = false): Promise<StoredRule[]> {
    const k = scopeKey(key);
    let rules = fresh ? undefined : this.cached(k);
    if (!rules) {
      if (this.signals) this.readAt.set(k, Date.now());
      rules = [];
      const prefix = `${this.tenant}/${k}/`;
      for await (const [, rule] of this.store.entries(RuleRecord, {
        gte: prefix,
        lt: `${prefix}\uffff`,
      })) {
        if (rules.some((kept) => sameRule(kept, rule))) continue;
        if (this.isWithdrawing(k, rule as StoredRule)) continue;
        rules.push(rule as StoredRule);
      }
      this.cache.set(k, rules);
    }
    return rules;
  }

  private isWithdrawing(scope: string, rule: StoredRule): boolean {
    for (const w of this.withdrawing) if (w.scope === scope && sameRule(w.rule, rule)) return true;
    return false;
  }

  /**
   * Knows that a session created here has no rules of its own: its first reply reads none. With
   * several nodes, the scope counts as read at `since`, a time before the session's record was
   * written (no node could give it rules before), so it is read again two seconds after that.
   */
  sessionCreated(sessionId: string, since: number): void {
    const k = scopeKey({ scope: "session", sessionId });
    if (this.signals) this.readAt.set(k, since);
    this.cache.set(k, []);
  }

  /** Every rule in effect for a session: tenant, agent and session scope. */
  async forSession(sessionId: string, agentId: string): Promise<StoredRule[]> {
    // The three scopes cached (the usual case): no read, and no promise per scope.
    const tenantRules = this.cached(scopeKey({ scope: "tenant" }));
    const agentRules = tenantRules && this.cached(scopeKey({ scope: "agent", agentId }));
    const sessionRules = agentRules && this.cached(scopeKey({ scope: "session", sessionId }));
    if (sessionRules) return [...tenantRules, ...agentRules, ...sessionRules];
    const [tenant, agent, session] = await Promise.all([
      this.load({ scope: "tenant" }),
      this.load({ scope: "agent", agentId }),
      this.load({ scope: "session", sessionId }),
    ]);
    return [...tenant, ...agent, ...session];
  }

  /** The rules of one scope. */
  list(key: RuleScopeKey): Promise<StoredRule[]> {
    return this.load(key).then((rules) => [...rules]);
  }

  /**
   * Prepares rules for storing: returns each rule as it will be stored (an equal rule already in
   * the scope is returned instead of a new one) and the new ones to write; RESOURCE_EXHAUSTED when a
   * new one would pass MAX_RULES_PER_SCOPE. `reread` reads each scope from the store, not the cache.
   * Nothing changes until `write` puts them into a batch and `committed` is called after the batch
   * is written.
   */
  async prepare(
    rules: { rule: Rule; key: RuleScopeKey }[],
    reread = false,
  ): Promise<{ stored: StoredRule[]; fresh: { rule: StoredRule; key: RuleScopeKey }[] }> {
    const stored: StoredRule[] = [];
    const fresh: { rule: StoredRule; key: RuleScopeKey }[] = [];
    const read = new Set<string>();
    for (const { rule, key } of rules) {
      const k = scopeKey(key);
      const first = reread && !read.has(k);
      read.add(k);
      const existing = [
        ...(await this.load(key, first)),
        ...fresh.filter((f) => scopeKey(f.key) === k).map((f) => f.rule),
      ];
      const same = existing.find((r) => sameRule(r, rule));
      if (same) {
        stored.push(same);
        continue;
      }
      if (existing.length >= MAX_RULES_PER_SCOPE) throw scopeFull(key);
      const created: StoredRule = {
        ...rule,
        id: newId("rule"),
        tenant: this.tenant,
        scope: key.scope,
        ...(key.scope === "session" ? { sessionId: key.sessionId } : {}),
        ...(key.scope === "agent" ? { agentId: key.agentId } : {}),
        createdAt: rule.createdAt ?? new Date().toISOString(),
      };
      stored.push(created);
      fresh.push({ rule: created, key });
    }
    return { stored, fresh };
  }

  /** Puts prepared rules into a batch. */
  write(batch: StoreBatch, fresh: { rule: StoredRule; key: RuleScopeKey }[]): void {
    for (const { rule, key } of fresh) {
      const scope = scopeKey(key);
      batch.put(RuleRecord, recordKey(this.tenant, scope, rule.id), rule);
      indexRule(batch, this.tenant, scope, rule.id);
    }
  }

  /** Makes written rules visible in the cache. */
  committed(fresh: { rule: StoredRule; key: RuleScopeKey }[]): void {
    for (const { rule, key } of fresh) {
      const cached = this.cache.get(scopeKey(key));
      if (cached && !cached.some((kept) => sameRule(kept, rule))) cached.push(rule);
    }
    if (fresh.length > 0) this.changed();
  }

  /**
   * Adds rules in their own atomic write, with what `extra` puts for the new ones. Adds and removals
   * of the tenant's rules run one at a time on this node, so rules added at the same time see each
   * other: an equal rule is stored once, and a scope never passes MAX_RULES_PER_SCOPE. With several
   * nodes the scopes are read from the store first, not from the cache.
   */
  add(
    rules: { rule: Rule; key: RuleScopeKey }[],
    extra?: (batch: StoreBatch, added: StoredRule[]) => void,
  ): Promise<{ stored: StoredRule[]; added: number }> {
    return this.writes.run(async () => {
      const { stored, fresh } = await this.prepare(rules, this.signals !== undefined);
      const batch = this.store.batch();
      this.write(batch, fresh);
      extra?.(
        batch,
        fresh.map((f) => f.rule),
      );
      await batch.write({ sync: true });
      this.committed(fresh);
      return { stored, added: fresh.length };
    });
  }

  /**
   * Removes a rule by id, in one atomic write with what `extra` puts; NOT_FOUND when the tenant has
   * none with that id.
   */
  remove(
    id: string,
    extra?: (batch: StoreBatch, removed: StoredRule) => void,
  ): Promise<StoredRule> {
    return this.writes.run(() => this.removeNow(id, extra));
  }

  private async removeNow(
    id: string,
    extra?: (batch: StoreBatch, removed: StoredRule) => void,
  ): Promise<StoredRule> {
    const found = await findRule(this.store, this.tenant, id);
    if (!found) throw notFound("rule", id);
    const { key } = found;
    const rule = found.rule as StoredRule;
    // Deleted only if still there: of removals at the same time (on several nodes) one wins.
    const batch = this.store
      .batch()
      .check(RuleRecord, key, (current) => current !== undefined, `rule ${id} stored`)
      .del(RuleRecord, key);
    unindexRule(batch, this.tenant, id);
    // Equal copies in its scope (see `load`) go with it: revoking a rule revokes what it allows.
    const scopePrefix = key.slice(0, key.length - id.length);
    for await (const [other, copy] of this.store.entries(RuleRecord, {
      gte: scopePrefix,
      lt: `${scopePrefix}\uffff`,
    })) {
      if (other === key || !sameRule(copy, rule)) continue;
      batch.del(RuleRecord, other);
      unindexRule(batch, this.tenant, copy.id);
    }
    extra?.(batch, rule);
    // The rule stops deciding before its removal is written, so no decision is made by a rule
    // the audit log already shows removed; should the write fail, the scope is read again.
    const scope = scopePrefix.slice(this.tenant.length + 1, -1);
    const withdrawn = { scope, rule };
    this.withdrawing.add(withdrawn);
    const cached = this.cache.get(scope);
    if (cached)
      this.cache.set(
        scope,
        cached.filter((r) => !sameRule(r, rule)),
      );
    try {
      await batch.write({ sync: true });
    } catch (err) {
      this.cache.delete(scope);
      if (err instanceof ConflictError) throw notFound("rule", id);
      throw err;
    } finally {
      this.withdrawing.delete(withdrawn);
    }
    this.changed();
    return rule;
  }

  /** Deletes every session-scoped rule of a session, into a batch. */
  async deleteSessionRules(batch: StoreBatch, sessionId: string): Promise<void> {
    const k = scopeKey({ scope: "session", sessionId });
    for (const rule of await this.load({ scope: "session", sessionId })) {
      batch.del(RuleRecord, recordKey(this.tenant, k, rule.id));
      unindexRule(batch, this.tenant, rule.id);
    }
    this.cache.delete(k);
  }
}
