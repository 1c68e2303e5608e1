import { h, uid } from "./dom.js";
import { type CallContext, submitFrom } from "./call-context.js";
import { externalResultInput, type JsonObject, ToolResultState } from "./parkway.js";

const STATES: [ToolResultState, string][] = [
  [ToolResultState.SUCCESS, "Success"],
  [ToolResultState.ERROR, "Error"],
  [ToolResultState.DENIED, "Refused"],
];

/** A form that submits the result of an external tool call: text, outcome, optional metadata. */
export function externalResultForm(card: HTMLElement, ctx: CallContext): HTMLElement {
  const outputId = uid("output");
  const stateId = uid("state");
  const metaId = uid("meta");
  const output = h("textarea", { id: outputId, rows: "4" });
  const state = h(
    "select",
    { id: stateId },
    STATES.map(([value, label]) => h("option", { value: String(value) }, label)),
  );
  const metadata = h("textarea", { id: metaId, rows: "3", spellcheck: "false", placeholder: "{}" });
  const form = h(
    "form",
    { class: "external-result" },
    h(
      "div",
      { class: "field" },
      h("label", { for: outputId }, "Result (what the model reads)"),
      output,
    ),
    h("div", { class: "field" }, h("label", { for: stateId }, "Outcome"), state),
    h(
      "div",
      { class: "field" },
      h("label", { for: metaId }, "Metadata (JSON object, optional)"),
      metadata,
    ),
    h(
      "div",
      { class: "actions" },
      h("button", { type: "submit", class: "primary" }, "Submit result"),
    ),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void submitFrom(card, ctx, "Result submitted", () => {
      let meta: JsonObject | undefined;
      if (metadata.value.trim()) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(metadata.value);
        } catch {
          throw new Error("The metadata is not valid JSON.");
        }
        if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
          throw new Error("The metadata must be a JSON object.");
        }
        meta = parsed as JsonObject;
      }
      return externalResultInput(ctx.session.replyId, ctx.call, {
        output: output.value,
        state: Number(state.value),
        ...(meta ? { metadata: meta } : {}),
      });
    });
  });
  return form;
}
