import path from "node:path";
import { pathToFileURL } from "node:url";
import type { ExternalResult } from "../../client/index.js";
import type { Position } from "./approval.js";
import { inputLines, parseInput } from "./format.js";
import { type Outcome, type PromptContext, submit, unanswered } from "./prompt-context.js";
import { MARK } from "./style.js";
import type { ToolCallBlock } from "./wire.js";

/** What a handler returns: the output text, or the output with a state and metadata. */
export type HandlerResult = string | ExternalResult;

/**
 * Executes one external tool: receives the call's input object and the call itself. A handler may
 * carry `description` and `inputSchema` (a JSON Schema object), used to declare the tool in a new
 * session when the agent does not already have it.
 */
export type Handler = ((
  input: Record<string, unknown>,
  call: { id: string; name: string },
) => HandlerResult | Promise<HandlerResult>) & {
  description?: string;
  inputSchema?: Record<string, unknown>;
};

/** The handlers of a `--external` module by tool name, and the module's path for messages. */
export interface Handlers {
  file: string;
  byName: Map<string, Handler>;
}

/** A handler module that cannot be used; the message is one line. */
export class HandlerModuleError extends Error {
  override readonly name = "HandlerModuleError";
}

/**
 * Loads a handler module: its default export, when that is an object, else its named exports; each
 * function is the handler of the tool of its key, e.g. `export default { Lookup: async (input) => "…" }`.
 */
export async function loadHandlers(file: string): Promise<Handlers> {
  const absolute = path.resolve(file);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(absolute).href)) as Record<string, unknown>;
  } catch (err) {
    throw new HandlerModuleError(
      `cannot load handlers from ${file}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const table =
    mod.default !== null && typeof mod.default === "object"
      ? (mod.default as Record<string, unknown>)
      : mod;
  const byName = new Map<string, Handler>();
  for (const [name, value] of Object.entries(table)) {
    if (typeof value === "function") byName.set(name, value as Handler);
  }
  if (byName.size === 0) {
    throw new HandlerModuleError(
      `${file} exports no handlers: expected an object such as { ToolName: async (input) => "output" }`,
    );
  }
  return { file, byName };
}

/** Runs a handler; a thrown error becomes an error result the model sees. */
async function runHandler(handler: Handler, call: ToolCallBlock): Promise<ExternalResult> {
  try {
    const result = await handler(parseInput(call.input) ?? {}, { id: call.id, name: call.name });
    if (typeof result === "string") return { output: result, state: "success" };
    return { state: "success", ...result };
  } catch (err) {
    return { output: err instanceof Error ? err.message : String(err), state: "error" };
  }
}

/**
 * Answers one external call: with its handler when the module has one (no prompt), else with a
 * result the user types (a leading "!" reports an error).
 */
export async function executeExternal(
  ctx: PromptContext,
  call: ToolCallBlock,
  at: Position,
  handlers: Handlers | undefined,
): Promise<Outcome> {
  const { screen, input, session, signal } = ctx;
  const c = screen.c;
  const handler = handlers?.byName.get(call.name);
  if (handler && handlers) {
    screen.line(
      `${c.cyan(MARK.external)} ${c.bold(call.name)} ${c.dim(`runs in ${handlers.file}`)}`,
    );
    const result = await runHandler(handler, call);
    const sent = await submit(screen, () => session.submitResult(call, result));
    return sent === "retry" ? "later" : sent;
  }
  const of = at.total > 1 ? c.dim(` (${at.index + 1} of ${at.total})`) : "";
  screen.line(
    `${c.cyan(MARK.external)} ${c.bold(call.name)} runs in this client: type its result${of}`,
    ...inputLines(call.input).map((l) => `  ${l}`),
  );
  for (;;) {
    const line = await input.readLine(c.dim("  result (start with ! to report an error): "), {
      signal,
      escapable: true,
    });
    if (line.kind !== "line") return signal.aborted ? "cancel" : unanswered(line);
    const text = line.text;
    const result: ExternalResult = text.startsWith("!")
      ? { output: text.slice(1).trim(), state: "error" }
      : { output: text, state: "success" };
    const sent = await submit(screen, () => session.submitResult(call, result));
    if (sent !== "retry") return sent;
  }
}
