import type { Scope } from "../../client/index.js";
import { duration, inputLines, parseInput, ruleText } from "./format.js";
import { type Outcome, type PromptContext, submit, unanswered } from "./prompt-context.js";
import { type Choice, select } from "./select.js";
import { MARK } from "./style.js";
import type { ToolCallBlock } from "./wire.js";

/** Where a call stands among the calls shown together. */
export interface Position {
  index: number;
  total: number;
}

/** The lines that say what is asked and why: the tool, its input, the decision, the expiry. */
export function approvalTitle(ctx: PromptContext, call: ToolCallBlock, at: Position): string[] {
  const c = ctx.screen.c;
  const of = at.total > 1 ? c.dim(` (${at.index + 1} of ${at.total})`) : "";
  const lines = [`${c.yellow(MARK.park)} ${c.bold(call.name)} needs your approval${of}`];
  for (const l of inputLines(call.input)) lines.push(`  ${l}`);
  const decision = call.decision;
  if (decision) {
    const by = decision.rule
      ? `rule ${ruleText(decision.rule)}`
      : decision.check
        ? `check ${decision.check}`
        : "";
    const immune = decision.bypassImmune ? "; a safety check: no rule can allow it" : "";
    lines.push(`  ${c.dim("why:")} ${decision.reason}${by ? c.dim(` (${by}${immune})`) : ""}`);
  }
  if (call.expiresAt) {
    lines.push(`  ${c.dim(`expires in ${duration(call.expiresAt.getTime() - Date.now())}`)}`);
  }
  return lines;
}

const SCOPES: { scope: Scope; label: (agentId: string) => string }[] = [
  { scope: "session", label: () => "this session" },
  { scope: "agent", label: (agent) => `every session of agent ${agent}` },
  { scope: "tenant", label: () => "every session (tenant)" },
];

/**
 * Asks for one call awaiting confirmation: yes; yes and always (the suggested rules, in a scope the
 * user picks); no, with an optional reason the model sees; or edit the input (JSON), then approve.
 * A refused edit is shown and asked again.
 */
export async function confirmCall(
  ctx: PromptContext,
  call: ToolCallBlock,
  at: Position,
): Promise<Outcome> {
  const { screen, input, session, signal } = ctx;
  const c = screen.c;
  const rules = call.suggestedRules.map(ruleText).join(", ");
  const choices: (Choice & { action: "yes" | "always" | "no" | "edit" })[] = [
    { label: "Yes", shortcut: "y", action: "yes" },
    ...(rules
      ? [{ label: `Yes, and always allow ${rules}`, shortcut: "a", action: "always" as const }]
      : []),
    { label: "No, and tell the agent why", shortcut: "n", action: "no" },
    { label: "Edit the input, then approve", shortcut: "e", action: "edit" },
  ];
  let edited: string | undefined;
  for (;;) {
    const picked = await select(screen, input, {
      title: approvalTitle(ctx, call, at),
      choices,
      escapable: true,
      signal,
    });
    if (picked.kind !== "chosen") return signal.aborted ? "cancel" : unanswered(picked);
    const action = choices[picked.indices[0] ?? 0]?.action;
    let result: Awaited<ReturnType<typeof submit>>;
    if (action === "yes") {
      result = await submit(screen, () => session.confirm(call));
    } else if (action === "always") {
      const where = await select(screen, input, {
        title: [`  Where should ${c.bold(rules)} apply?`],
        choices: SCOPES.map((s) => ({ label: s.label(ctx.agentId) })),
        preset: 0,
        escapable: true,
        signal,
      });
      if (where.kind === "cancel" && !signal.aborted) continue;
      if (where.kind !== "chosen") return signal.aborted ? "cancel" : unanswered(where);
      const scope = SCOPES[where.indices[0] ?? 0]?.scope ?? "session";
      result = await submit(screen, () => session.confirm(call, { rules: "suggested", scope }));
    } else if (action === "no") {
      const reason = await input.readLine(c.dim("  reason for the agent (optional): "), {
        signal,
        escapable: true,
      });
      if (reason.kind === "cancel" && !signal.aborted) continue;
      if (reason.kind !== "line") return signal.aborted ? "cancel" : unanswered(reason);
      result = await submit(screen, () => session.deny(call, reason.text.trim()));
    } else {
      const read = await editInput(ctx, edited ?? compact(call.input));
      if (read === undefined) continue;
      if (typeof read !== "object") return read;
      const text = read.text;
      edited = text;
      result = await submit(screen, () => session.confirm(call, { editedInput: text }));
    }
    if (result === "answered" || result === "gone" || result === "later") return result;
  }
}

function compact(json: string): string {
  const value = parseInput(json);
  return value ? JSON.stringify(value) : json;
}

/**
 * Reads an edited input as one line of JSON, pre-filled with `initial`, until it parses as an
 * object. Returns the text, undefined when the user backs out with Escape, or an outcome.
 */
async function editInput(
  ctx: PromptContext,
  initial: string,
): Promise<{ text: string } | Outcome | undefined> {
  const { screen, input, signal } = ctx;
  const c = screen.c;
  let text = initial;
  if (!input.keys) screen.line(c.dim(`  current input: ${initial}`));
  for (;;) {
    const line = await input.readLine(c.dim("  input JSON: "), {
      signal,
      escapable: true,
      prefill: text,
    });
    if (line.kind === "cancel" && !signal.aborted) return undefined;
    if (line.kind !== "line") return signal.aborted ? "cancel" : unanswered(line);
    text = line.text.trim();
    if (parseInput(text)) return { text };
    screen.line(c.red(`  ${MARK.fail} not a JSON object; edit it again (esc to go back)`));
  }
}
