import { z } from "zod";
import { zodViolations } from "../common/zod-violations.js";
import { answerEntrySchema } from "./answer-entry.js";
import type { ExternalResult, ResultProblem, Tool } from "./tool.js";
import type { AskUserAnswer, QuestionInput } from "./tool-question.js";

const optionSchema = z.strictObject({
  label: z.string().min(1).describe("The option's text; answers name options by label"),
  description: z.string().describe("What choosing this option means"),
  preview: z
    .string()
    .optional()
    .describe("Side-by-side content such as a code snippet or a mockup; single-select only"),
});

const questionSchema = z
  .strictObject({
    question: z.string().min(1).describe("The question itself"),
    header: z.string().min(1).max(12).describe("A label of at most 12 characters, shown as a chip"),
    context: z
      .string()
      .optional()
      .describe("What the user must look at while answering, shown above the options"),
    options: z
      .array(optionSchema)
      .min(2)
      .max(4)
      .describe('2 to 4 options; do not add an "Other" option, the user can always type one'),
    multi_select: z.boolean().default(false).describe("Whether more than one option may be chosen"),
  })
  .superRefine((q, ctx) => {
    const labels = q.options.map((o) => o.label);
    if (new Set(labels).size !== labels.length) {
      ctx.addIssue({ code: "custom", path: ["options"], message: "option labels must be unique" });
    }
    if (q.multi_select && q.options.some((o) => o.preview !== undefined)) {
      ctx.addIssue({
        code: "custom",
        path: ["options"],
        message: "preview is only allowed on single-select questions",
      });
    }
  });

/** The input of AskUser: one to four multiple-choice questions with unique texts. */
export const askUserInputSchema = z
  .strictObject({
    questions: z.array(questionSchema).min(1).max(4).describe("1 to 4 questions"),
  })
  .superRefine((input, ctx) => {
    const texts = input.questions.map((q) => q.question);
    if (new Set(texts).size !== texts.length) {
      ctx.addIssue({
        code: "custom",
        path: ["questions"],
        message: "question texts must be unique",
      });
    }
  });
export type AskUserInput = z.infer<typeof askUserInputSchema>;

export type { AskUserAnswer } from "./tool-question.js";

function readAnswers(metadata: Record<string, unknown> | undefined): unknown[] | undefined {
  const answers = metadata?.answers;
  return Array.isArray(answers) ? answers : undefined;
}

/**
 * Checks the answers of an AskUser result against its questions: each entry an answer object
 * (`answerEntrySchema`), every question answered once (unless it may be skipped), known labels
 * only, each at most once, at most one label on a single-select question, and a choice or `other` text in each
 * answer. Returns the problems, each naming its field.
 */
export function checkAnswers(
  input: QuestionInput,
  metadata: Record<string, unknown> | undefined,
): {
  problems: ResultProblem[];
  answers: AskUserAnswer[];
} {
  const raw = readAnswers(metadata);
  if (!raw)
    return { problems: [{ field: "ask_user.answers", description: "is required" }], answers: [] };
  const problems: ResultProblem[] = [];
  const answers: AskUserAnswer[] = [];
  const seen = new Set<string>();
  raw.forEach((entry, i) => {
    const field = `ask_user.answers[${i}]`;
    const parsed = answerEntrySchema.safeParse(entry);
    if (!parsed.success) {
      problems.push(...zodViolations(parsed.error, field));
      return;
    }
    const a = parsed.data;
    const question = input.questions.find((q) => q.question === a.question);
    if (!question) {
      problems.push({
        field: `${field}.question`,
        description: `no question ${JSON.stringify(a.question)} was asked`,
      });
      return;
    }
    if (seen.has(question.question)) {
      problems.push({ field: `${field}.question`, description: "answers the same question twice" });
      return;
    }
    seen.add(question.question);
    const selected = a.selected ?? [];
    const labels = new Set(question.options.map((o) => o.label));
    const chosen = new Set<string>();
    selected.forEach((label, j) => {
      if (!labels.has(label)) {
        problems.push({
          field: `${field}.selected[${j}]`,
          description:
            labels.size === 0
              ? "the question has no options: give the answer as other text"
              : `unknown option ${JSON.stringify(label)}; options: ${[...labels].join(", ")}`,
        });
      } else if (chosen.has(label)) {
        problems.push({
          field: `${field}.selected[${j}]`,
          description: `option ${JSON.stringify(label)} is already chosen; name each option once`,
        });
      }
      chosen.add(label);
    });
    if (!question.multi_select && selected.length > 1) {
      problems.push({
        field: `${field}.selected`,
        description: "a single-select question takes one option",
      });
    }
    const other = a.other?.trim() ? a.other : undefined;
    if (selected.length === 0 && other === undefined) {
      problems.push({ field: field, description: "choose an option or give other text" });
    }
    answers.push({ question: question.question, selected, ...(other ? { other } : {}) });
  });
  for (const q of input.questions) {
    if (!seen.has(q.question) && q.may_skip !== true) {
      problems.push({
        field: "ask_user.answers",
        description: `question ${JSON.stringify(q.question)} is not answered`,
      });
    }
  }
  return { problems, answers };
}

/** The prose the model reads for a set of answers. */
export function answersProse(answers: AskUserAnswer[]): string {
  return answers
    .map((a) => {
      const parts = [...a.selected];
      if (a.other) parts.push(`other: ${a.other}`);
      return `${a.question} → ${parts.join("; ")}`;
    })
    .join("\n");
}

/**
 * Checks a client's result for an AskUser (the model's, or a question a running tool asked): a
 * successful one must answer the questions (`checkAnswers`); its output defaults to the answers'
 * prose and its metadata carries the answers as checked.
 */
export function checkQuestionResult(
  input: QuestionInput,
  result: ExternalResult,
): { problems: ResultProblem[]; result: ExternalResult } {
  if (result.state !== "success") return { problems: [], result };
  const { problems, answers } = checkAnswers(input, result.metadata);
  if (problems.length > 0) return { problems, result };
  return {
    problems,
    result: {
      ...result,
      output: result.output || answersProse(answers),
      metadata: { ...result.metadata, answers },
    },
  };
}

/**
 * The built-in AskUser tool: asks the person one to four multiple-choice questions. It is executed
 * by the client (REQUIRE_EXTERNAL_EXECUTION), is read-only and concurrency-safe, and never asks for
 * permission.
 */
export const askUserTool: Tool<AskUserInput> = {
  name: "AskUser",
  description:
    "Ask the user one to four multiple-choice questions when you need a decision from them. Each question has a short header (at most 12 characters) and 2 to 4 options; the user may also type their own answer.",
  inputSchema: askUserInputSchema,
  external: true,
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  checkExternalResult: checkQuestionResult,
  run() {
    return Promise.reject(new Error("AskUser is answered by the client"));
  },
};
