import OpenAI from "openai";
import type { ScriptedModelServer } from "../../../src/model/scripted/index.js";

/** A real openai SDK client pointed at a scripted model server. */
export function clientFor(server: ScriptedModelServer, maxRetries = 0): OpenAI {
  return new OpenAI({ baseURL: server.url, apiKey: "test", maxRetries });
}

/** Drains an async iterable into an array. */
export async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of stream) items.push(item);
  return items;
}

/** The user message list most tests send. */
export function userSays(text: string): OpenAI.ChatCompletionMessageParam[] {
  return [{ role: "user", content: text }];
}
