import { h, uid } from "./dom.js";
import { askUserForm } from "./ask-user-form.js";
import { type CallContext, submitFrom } from "./call-context.js";
import { externalResultForm } from "./external-result-form.js";
import { prettyJson, ruleText, timeText } from "./format.js";
import {
  allow,
  confirmInput,
  deny,
  RuleScope,
  type SendInput,
  type Session,
  type ToolCallBlock,
  ToolCallState,
} from "./parkway.js";

const SCOPES: [RuleScope, (s: Session) => string][] = [
  [RuleScope.SESSION, () => "This session"],
  [RuleScope.AGENT, (s) => `Every session of agent ${s.agentId}`],
  [RuleScope.TENANT, () => "Every session of this tenant"],
];

function whyItAsks(call: ToolCallBlock): HTMLElement | null {
  const d = call.decision;
  if (!d) return null;
  return h(
    "p",
    { class: "why" },
    h("strong", {}, call.state === ToolCallState.ASKING ? "Why it asks: " : "Why it waits: "),
    d.reason || "no reason given",
    d.check ? h("span", { class: "muted" }, ` (${d.check})`) : null,
    d.bypassImmune ? h("span", { class: "badge warn" }, "safety check: no rule clears it") : null,
  );
}

function confirmControls(card: HTMLElement, ctx: CallContext): HTMLElement[] {
  const { call, session } = ctx;
  const send = (what: string, input: () => SendInput) => submitFrom(card, ctx, what, input);
  const approve = h(
    "button",
    {
      type: "button",
      class: "primary",
      onclick: () => void send("Approved", () => confirmInput(session.replyId, [allow(call)])),
    },
    "Approve",
  );

  const parts: HTMLElement[] = [h("div", { class: "actions" }, approve)];

  if (call.suggestedRules.length > 0) {
    const boxes = call.suggestedRules.map((rule, i) => {
      const id = uid("rule");
      const box = h("input", { type: "checkbox", id, checked: true, "data-rule": String(i) });
      return h(
        "div",
        { class: "check" },
        box,
        h("label", { for: id }, h("code", {}, ruleText(rule))),
      );
    });
    const scopeId = uid("scope");
    const scope = h(
      "select",
      { id: scopeId, name: "scope" },
      SCOPES.map(([value, label]) => h("option", { value: String(value) }, label(session))),
    );
    const always = h(
      "button",
      {
        type: "button",
        onclick: () =>
          void send("Approved and always allowed", () => {
            const rules = call.suggestedRules.filter(
              (_, i) => card.querySelector<HTMLInputElement>(`[data-rule="${i}"]`)?.checked,
            );
            if (rules.length === 0) throw new Error("Choose at least one rule to always allow.");
            return confirmInput(session.replyId, [
              allow(call, { rules, scope: Number(scope.value) as RuleScope }),
            ]);
          }),
      },
      "Always allow",
    );
    parts.push(
      h(
        "fieldset",
        { class: "always" },
        h("legend", {}, "Approve and always allow"),
        boxes,
        h("div", { class: "field" }, h("label", { for: scopeId }, "Scope"), scope),
        h("div", { class: "actions" }, always),
      ),
    );
  }

  const editId = uid("edit");
  const edited = h("textarea", { id: editId, rows: "6", spellcheck: "false" });
  edited.value = prettyJson(call.input);
  parts.push(
    h(
      "details",
      { class: "edit" },
      h("summary", {}, "Edit the input, then approve"),
      h("div", { class: "field" }, h("label", { for: editId }, "Input (JSON)"), edited),
      h(
        "div",
        { class: "actions" },
        h(
          "button",
          {
            type: "button",
            onclick: () =>
              void send("Approved with edited input", () => {
                let parsed: unknown;
                try {
                  parsed = JSON.parse(edited.value);
                } catch {
                  throw new Error("The edited input is not valid JSON.");
                }
                if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
                  throw new Error("The edited input must be a JSON object.");
                }
                return confirmInput(session.replyId, [
                  allow(call, { editedInput: JSON.stringify(parsed) }),
                ]);
              }),
          },
          "Approve edited input",
        ),
      ),
    ),
  );

  const reasonId = uid("reason");
  const reason = h("input", { id: reasonId, type: "text", placeholder: "Shown to the model" });
  parts.push(
    h(
      "fieldset",
      { class: "deny" },
      h("legend", {}, "Deny"),
      h("div", { class: "field" }, h("label", { for: reasonId }, "Reason"), reason),
      h(
        "div",
        { class: "actions" },
        h(
          "button",
          {
            type: "button",
            class: "danger",
            onclick: () =>
              void send("Denied", () =>
                confirmInput(session.replyId, [deny(call, reason.value.trim())]),
              ),
          },
          "Deny",
        ),
      ),
    ),
  );
  return parts;
}

/** Where a Bash command runs: the session's first working directory. */
function runsIn({ call, session }: CallContext): HTMLElement | string {
  const dir = session.workingDirectories[0];
  if (call.name !== "Bash" || !dir) return "";
  return h("p", { class: "muted runs-in" }, "Runs in ", h("code", {}, dir));
}

/** A card for one pending call: what it is, why it asks, and the controls that answer it. */
export function pendingCallCard(ctx: CallContext): HTMLElement {
  const { call } = ctx;
  const headingId = uid("call");
  const asking = call.state === ToolCallState.ASKING;
  const kind = asking ? "needs approval" : call.askUser ? "asks you" : "runs on your side";
  const card = h("article", {
    class: `call ${asking ? "confirm" : "external"}`,
    "aria-labelledby": headingId,
    "data-call-id": call.id,
  });
  card.append(
    h(
      "h3",
      { id: headingId },
      h("code", {}, call.name),
      " ",
      h("span", { class: `badge ${asking ? "ask" : "ext"}` }, kind),
    ),
    whyItAsks(call) ?? "",
    runsIn(ctx),
    call.expiresAt ? h("p", { class: "muted" }, `Expires ${timeText(call.expiresAt)}`) : "",
    call.askedBy ? h("p", { class: "muted" }, `A form of the tool call ${call.askedBy}`) : "",
  );
  if (!call.askUser) {
    card.append(
      h(
        "details",
        { class: "input", open: true },
        h("summary", {}, "Input"),
        h("pre", { tabindex: "0" }, prettyJson(call.input)),
      ),
    );
  }
  if (asking) card.append(...confirmControls(card, ctx));
  else if (call.askUser) card.append(askUserForm(card, ctx, call.askUser));
  else card.append(externalResultForm(card, ctx));
  card.append(
    h("p", { class: "call-alert", role: "alert" }),
    h("p", { class: "call-status", role: "status" }),
  );
  // Every card has an Approve and a Deny: each button is described by its call's heading, so a
  // screen reader says which call a button answers.
  for (const button of card.querySelectorAll("button")) {
    if (!button.hasAttribute("aria-describedby")) {
      button.setAttribute("aria-describedby", headingId);
    }
  }
  return card;
}
