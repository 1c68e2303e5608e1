import { h } from "./dom.js";
import {
  auditKindText,
  errorText,
  modeText,
  resultStateText,
  scopeText,
  timeText,
} from "./format.js";
import {
  type AuditRecord,
  AuditKind,
  RuleScope,
  ToolResultState,
  type WebClient,
} from "./parkway.js";

function detail(r: AuditRecord): string {
  const parts: string[] = [];
  if (r.rule) parts.push(`rule ${r.rule}`);
  if (r.check) parts.push(`check ${r.check}`);
  if (r.reason) parts.push(r.reason);
  if (r.acceptedRules.length > 0) parts.push(`accepted ${r.acceptedRules.join(", ")}`);
  if (r.inputEdited) parts.push("input edited");
  if (r.selected.length > 0) parts.push(`selected ${r.selected.join(", ")}`);
  if (r.answeredOther) parts.push("answered with free text");
  if (r.resultState !== ToolResultState.UNSPECIFIED) parts.push(resultStateText(r.resultState));
  if (r.scope !== RuleScope.UNSPECIFIED) parts.push(`scope ${scopeText(r.scope)}`);
  if (r.kind === AuditKind.MODE_SET) parts.push(`mode ${modeText(r.mode)}`);
  return parts.join(" · ");
}

/**
 * The tenant's audit trail, newest first. `poll` reads the pages after the last one read (the
 * last page is read again, since records written later are appended to it).
 */
export function createAuditView(client: WebClient) {
  const tbody = h("tbody", {});
  const status = h("p", { class: "muted", role: "status" });
  const el = h(
    "div",
    {},
    status,
    h(
      "div",
      { class: "table-wrap" },
      h(
        "table",
        { class: "audit" },
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ["When", "What", "Who", "Session", "Tool", "Details"].map((c) =>
              h("th", { scope: "col" }, c),
            ),
          ),
        ),
        tbody,
      ),
    ),
  );
  const seen = new Set<string>();
  let lastPageToken = "";
  let polling = false;

  function row(r: AuditRecord): HTMLElement {
    return h(
      "tr",
      {},
      h("td", {}, timeText(r.time)),
      h("th", { scope: "row" }, auditKindText(r.kind)),
      h("td", {}, r.actor),
      h("td", {}, r.sessionId ? h("code", {}, r.sessionId) : ""),
      h("td", {}, r.toolName ? h("code", {}, r.toolName) : ""),
      h("td", {}, detail(r)),
    );
  }

  async function poll() {
    if (polling) return;
    polling = true;
    try {
      for (;;) {
        const page = await client.audit.listAuditRecords({
          pageSize: 500,
          pageToken: lastPageToken,
        });
        for (const record of page.records) {
          if (seen.has(record.id)) continue;
          seen.add(record.id);
          tbody.prepend(row(record));
        }
        if (!page.nextPageToken) break;
        lastPageToken = page.nextPageToken;
      }
      status.textContent = `${seen.size} records · updated ${new Date().toLocaleTimeString()}`;
    } catch (err) {
      status.textContent = `The audit trail could not be read: ${errorText(err)}`;
    } finally {
      polling = false;
    }
  }

  return { el, poll };
}
