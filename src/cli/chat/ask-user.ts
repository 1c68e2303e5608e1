import type { Answer } from "../../client/index.js";
import { parseInput } from "./format.js";
import { type Outcome, type PromptContext, submit, unanswered } from "./prompt-context.js";
import { select } from "./select.js";
import { MARK } from "./style.js";
import type { AskUserQuestion, ToolCallBlock } from "./wire.js";

const str = (value: unknown): string => (typeof value === "string" ? value : "");

/** The questions of an AskUser call: the typed `askUser` input, else parsed from its JSON input. */
export function questionsOf(call: ToolCallBlock): AskUserQuestion[] {
  if (call.askUser && call.askUser.questions.length > 0) return call.askUser.questions;
  const raw = parseInput(call.input)?.questions;
  if (!Array.isArray(raw)) return [];
  return raw.map((q: Record<string, unknown>) => ({
    question: str(q.question),
    header: str(q.header),
    context: typeof q.context === "string" ? q.context : undefined,
    multiSelect: q.multi_select === true,
    ...(q.may_skip === true ? { maySkip: true } : {}),
    ...(typeof q.answer_format === "string" ? { answerFormat: q.answer_format } : {}),
    options: (Array.isArray(q.options) ? q.options : []).map((o: Record<string, unknown>) => ({
      label: str(o.label),
      description: str(o.description),
      preview: typeof o.preview === "string" ? o.preview : undefined,
    })),
  }));
}

const OTHER = "Other";

/**
 * Asks an AskUser call's questions one by one, each as a single- or multi-select list with the
 * options' descriptions and previews and an "Other" free-text answer, the headers shown as chips;
 * then sends all answers at once. Escape on a question puts the call off; a refused answer is
 * shown and the questions are asked again.
 */
export async function askUser(ctx: PromptContext, call: ToolCallBlock): Promise<Outcome> {
  const { screen, input, session, signal } = ctx;
  const c = screen.c;
  const questions = questionsOf(call);
  for (;;) {
    const answers: Record<string, Answer> = {};
    for (let i = 0; i < questions.length; i++) {
      const q = questions[i]!;
      const chips = questions.map((other, j) => {
        const text = other.header || `Q${j + 1}`;
        if (j === i) return c.isColorSupported ? c.inverse(c.bold(` ${text} `)) : `[${text}]`;
        return j < i ? c.green(`${MARK.ok} ${text}`) : c.dim(text);
      });
      const title = [
        `${c.magenta("?")} ${chips.join("  ")}`,
        `  ${c.bold(q.question)}${q.multiSelect ? c.dim(" (choose any)") : ""}`,
        ...(q.context ?? "")
          .split("\n")
          .filter((l) => l !== "")
          .map((l) => `  ${c.dim("│")} ${l}`),
      ];
      if (i === 0 && call.askUser?.message) title.unshift(c.bold(call.askUser.message));
      if (q.options.length === 0) {
        // A form's field answered with typed text: no list to choose from.
        const format = q.answerFormat && q.answerFormat !== "text" ? ` (${q.answerFormat})` : "";
        const skip = q.maySkip ? c.dim(", empty to skip") : "";
        screen.line(...title);
        const typed = await input.readLine(c.dim(`  your answer${format}${skip}: `), {
          signal,
          escapable: true,
        });
        if (typed.kind !== "line") return signal.aborted ? "cancel" : unanswered(typed);
        if (typed.text.trim() !== "" || !q.maySkip) answers[q.question] = { other: typed.text };
        continue;
      }
      const picked = await select(screen, input, {
        title,
        choices: [
          ...q.options.map((o) => ({
            label: o.label,
            description: o.description,
            ...(o.preview !== undefined ? { preview: o.preview } : {}),
          })),
          { label: OTHER, description: "type your own answer" },
        ],
        multi: q.multiSelect,
        escapable: true,
        signal,
      });
      if (picked.kind !== "chosen") return signal.aborted ? "cancel" : unanswered(picked);
      const labels = picked.indices
        .filter((k) => k < q.options.length)
        .map((k) => q.options[k]!.label);
      if (!picked.indices.includes(q.options.length)) {
        answers[q.question] = q.multiSelect ? labels : (labels[0] ?? "");
        continue;
      }
      const other = await input.readLine(c.dim("  your answer: "), { signal, escapable: true });
      if (other.kind === "cancel" && !signal.aborted) {
        i--;
        continue;
      }
      if (other.kind !== "line") return signal.aborted ? "cancel" : unanswered(other);
      answers[q.question] = { other: other.text.trim(), selected: labels };
    }
    const result = await submit(screen, () => session.answer(call, answers));
    if (result !== "retry") return result;
  }
}
