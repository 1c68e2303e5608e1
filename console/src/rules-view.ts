import { h, replace } from "./dom.js";
import { behaviorText, errorText, ruleText, scopeText, sourceText, timeText } from "./format.js";
import { type PermissionRule, RuleScope, RuleSource, type WebClient } from "./parkway.js";

/** One group of rules and where it comes from. */
interface RuleGroup {
  title: string;
  rules: PermissionRule[];
}

/**
 * The rules in force: the tenant's, each agent's (configured and added), and each listed session's
 * own; a stored rule can be revoked (RemoveRule). `sessions` gives the sessions to list.
 */
export function createRulesView(
  client: WebClient,
  sessions: () => string[],
  announce: (text: string) => void,
) {
  const body = h("div", { class: "rules" });
  const status = h("p", { class: "muted", role: "status" });
  const refresh = h("button", { type: "button", onclick: () => void load() }, "Refresh");
  const el = h("div", {}, h("div", { class: "actions" }, refresh), status, body);

  async function groups(): Promise<RuleGroup[]> {
    const { agents } = await client.agent.listAgents({});
    const tenant = await client.permission.listRules({ scope: RuleScope.TENANT });
    const result: RuleGroup[] = [{ title: "Every session of the tenant", rules: tenant.rules }];
    for (const agent of agents) {
      const { rules } = await client.permission.listRules({
        scope: RuleScope.AGENT,
        agentId: agent.id,
      });
      result.push({ title: `Every session of agent ${agent.id}`, rules });
    }
    for (const sessionId of sessions()) {
      const { rules } = await client.permission.listRules({ sessionId, scope: RuleScope.SESSION });
      if (rules.length > 0) result.push({ title: `Session ${sessionId}`, rules });
    }
    return result;
  }

  function row(rule: PermissionRule): HTMLElement {
    const revocable = rule.id !== "" && rule.source !== RuleSource.CONFIG;
    return h(
      "tr",
      { "data-rule-id": rule.id },
      h("th", { scope: "row" }, h("code", {}, ruleText(rule))),
      h("td", {}, behaviorText(rule.behavior)),
      h("td", {}, scopeText(rule.scope)),
      h("td", {}, sourceText(rule.source)),
      h("td", {}, rule.createdBy),
      h("td", {}, timeText(rule.createdAt)),
      h(
        "td",
        {},
        revocable
          ? h(
              "button",
              {
                type: "button",
                class: "danger",
                "aria-label": `Revoke ${ruleText(rule)}`,
                onclick: () => void revoke(rule),
              },
              "Revoke",
            )
          : h("span", { class: "muted" }, "from config"),
      ),
    );
  }

  function table(group: RuleGroup): HTMLElement {
    return h(
      "section",
      { class: "rule-group" },
      h("h3", {}, group.title),
      group.rules.length === 0
        ? h("p", { class: "muted" }, "No rules.")
        : h(
            "div",
            { class: "table-wrap" },
            h(
              "table",
              {},
              h(
                "thead",
                {},
                h(
                  "tr",
                  {},
                  ["Rule", "Does", "Scope", "Source", "By", "Since", ""].map((c) =>
                    h("th", { scope: "col" }, c),
                  ),
                ),
              ),
              h("tbody", {}, group.rules.map(row)),
            ),
          ),
    );
  }

  async function revoke(rule: PermissionRule) {
    try {
      await client.permission.removeRule({ ruleId: rule.id });
      announce(`Revoked ${ruleText(rule)}.`);
      await load();
    } catch (err) {
      status.textContent = `Revoking ${ruleText(rule)} failed: ${errorText(err)}`;
    }
  }

  async function load() {
    status.textContent = "Loading…";
    try {
      replace(body, (await groups()).map(table));
      status.textContent = `Updated ${new Date().toLocaleTimeString()}`;
    } catch (err) {
      status.textContent = `The rules could not be read: ${errorText(err)}`;
    }
  }

  return { el, load };
}
