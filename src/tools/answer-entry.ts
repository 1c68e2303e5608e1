import { z } from "zod";
import type { AskUserAnswer } from "./tool-question.js";

/**
 * One entry of `answers` in an AskUser result's metadata as a client sends it (AskUserAnswer in
 * ask_user.proto): the question's text, the labels chosen and the text typed. Other keys are
 * dropped; null stands for an unset field, as in protobuf's JSON.
 */
export const answerEntrySchema = z.object({
  question: z.string(),
  selected: z.array(z.string()).nullish(),
  other: z.string().nullish(),
});

const answersSchema = z.array(answerEntrySchema);

/**
 * The answers a result's metadata holds when its `answers` is a list of answer objects, else
 * undefined: a question declined, or another tool's result, keeps its metadata as the client sent it.
 */
export function answersIn(
  metadata: Record<string, unknown> | undefined,
): AskUserAnswer[] | undefined {
  const answers = metadata?.answers;
  if (!Array.isArray(answers)) return undefined;
  const parsed = answersSchema.safeParse(answers);
  if (!parsed.success) return undefined;
  return parsed.data.map((a) => ({
    question: a.question,
    selected: a.selected ?? [],
    ...(typeof a.other === "string" ? { other: a.other } : {}),
  }));
}
