import { h, uid } from "./dom.js";
import { type CallContext, submitFrom } from "./call-context.js";
import {
  type AskUserAnswerInput,
  type AskUserInput,
  type AskUserQuestion,
  askUserInput,
  externalResultInput,
  ToolResultState,
} from "./parkway.js";

const INPUT_TYPES: Record<string, string> = {
  number: "number",
  integer: "number",
  email: "email",
  uri: "url",
  date: "date",
  "date-time": "datetime-local",
};

/** One question's controls, and how to read its answer (undefined: unanswered). */
interface QuestionView {
  el: HTMLElement;
  answer(): AskUserAnswerInput | undefined;
  question: AskUserQuestion;
}

function questionView(q: AskUserQuestion): QuestionView {
  const name = uid("q");
  const legendId = uid("legend");
  const multi = q.multiSelect;
  const type = multi ? "checkbox" : "radio";
  const options = q.options.map((option) => {
    const id = uid("opt");
    const input = h("input", { type, id, name, value: option.label });
    const label = h(
      "label",
      { for: id },
      h("span", { class: "option-label" }, option.label),
      option.description ? h("span", { class: "option-desc" }, option.description) : null,
    );
    return { option, input, row: h("div", { class: "check" }, input, label) };
  });

  const otherText = h("input", {
    type: q.options.length === 0 ? (INPUT_TYPES[q.answerFormat ?? ""] ?? "text") : "text",
    "aria-label": q.options.length === 0 ? q.question : `Other answer: ${q.question}`,
    placeholder: q.options.length === 0 ? "" : "Type another answer",
    ...(q.answerFormat === "integer" ? { step: "1" } : {}),
  });
  let otherBox: HTMLInputElement | undefined;
  let otherRow: HTMLElement;
  if (q.options.length === 0) {
    otherRow = h("div", { class: "field" }, otherText);
  } else {
    const id = uid("other");
    otherBox = h("input", { type, id, name, value: "" });
    otherRow = h(
      "div",
      { class: "check other" },
      otherBox,
      h("label", { for: id }, "Other"),
      otherText,
    );
    const box = otherBox;
    otherText.addEventListener("input", () => {
      if (otherText.value.trim()) box.checked = true;
    });
  }

  const withPreview = !multi && q.options.some((o) => o.preview);
  const preview = withPreview
    ? h("pre", { class: "preview", tabindex: "0", "aria-label": `Preview: ${q.question}` })
    : null;
  const showPreview = (text: string | undefined) => {
    if (preview) preview.textContent = text ?? "(no preview for this option)";
  };
  if (preview) {
    showPreview(q.options[0]?.preview);
    for (const { option, input } of options) {
      input.addEventListener("change", () => showPreview(option.preview));
      input.addEventListener("focus", () => showPreview(option.preview));
    }
  }

  const el = h(
    "fieldset",
    { class: "question", "aria-labelledby": legendId },
    h(
      "legend",
      { id: legendId },
      q.header ? h("span", { class: "chip" }, q.header) : null,
      " ",
      q.question,
      q.maySkip ? h("span", { class: "muted" }, " (optional)") : null,
    ),
    q.context ? h("pre", { class: "context", tabindex: "0" }, q.context) : null,
    h(
      "div",
      { class: preview ? "options with-preview" : "options" },
      h(
        "div",
        {},
        options.map((o) => o.row),
        otherRow,
      ),
      preview,
    ),
  );

  return {
    el,
    question: q,
    answer() {
      const selected = options.filter((o) => o.input.checked).map((o) => o.option.label);
      const typed = otherText.value.trim();
      const other = (otherBox ? otherBox.checked : true) && typed ? typed : undefined;
      if (selected.length === 0 && other === undefined) return undefined;
      return { question: q.question, selected, ...(other === undefined ? {} : { other }) };
    },
  };
}

/** The questions of an AskUser call as a form: options, previews, Other; Send answers. */
export function askUserForm(card: HTMLElement, ctx: CallContext, ask: AskUserInput): HTMLElement {
  const views = ask.questions.map(questionView);
  const form = h(
    "form",
    { class: "ask-user" },
    ask.message ? h("p", {}, ask.message) : null,
    views.map((v) => v.el),
  );
  const actions = h(
    "div",
    { class: "actions" },
    h("button", { type: "submit", class: "primary" }, "Send answers"),
  );
  if (ctx.call.askedBy) {
    actions.append(
      h(
        "button",
        {
          type: "button",
          onclick: () =>
            void submitFrom(card, ctx, "Declined", () =>
              externalResultInput(ctx.session.replyId, ctx.call, { state: ToolResultState.DENIED }),
            ),
        },
        "Decline",
      ),
    );
  }
  form.append(actions);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void submitFrom(card, ctx, "Answered", () => {
      const answers: AskUserAnswerInput[] = [];
      for (const view of views) {
        const answer = view.answer();
        if (answer) answers.push(answer);
        else if (!view.question.maySkip) {
          view.el.querySelector<HTMLInputElement>("input")?.focus();
          throw new Error(`Answer "${view.question.question}" first.`);
        }
      }
      return askUserInput(ctx.session.replyId, ctx.call, answers);
    });
  });
  return form;
}
