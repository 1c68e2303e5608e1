import { z } from "zod";

/**
 * The parts of an OpenAI Chat Completions request body the scripted model reads. Objects are loose:
 * every other field is accepted and kept, so `requests` shows exactly what the client sent.
 */

const contentSchema = z.union([z.string(), z.array(z.unknown()), z.null()]).optional();

const requestToolCallSchema = z.looseObject({
  id: z.string(),
  function: z.looseObject({ name: z.string(), arguments: z.string().optional() }),
});

/** One message of the request. */
export const chatMessageSchema = z.looseObject({
  role: z.string(),
  content: contentSchema,
  /** On assistant messages. */
  tool_calls: z.array(requestToolCallSchema).optional(),
  /** On tool messages. */
  tool_call_id: z.string().optional(),
});

/** A Chat Completions request body. */
export const chatRequestSchema = z.looseObject({
  model: z.string().optional(),
  messages: z.array(chatMessageSchema),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
});

export type ChatMessage = z.infer<typeof chatMessageSchema>;
export type ChatRequest = z.infer<typeof chatRequestSchema>;

/** The text of a message: its string content, or its text parts joined. */
export function messageText(message: ChatMessage): string {
  const { content } = message;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const texts: string[] = [];
  for (const part of content) {
    if (typeof part === "object" && part !== null && "text" in part) {
      if (typeof part.text === "string") texts.push(part.text);
    }
  }
  return texts.join("");
}
