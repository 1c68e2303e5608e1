import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ToolResultState } from "../../src/generated/parkway/v1/content.js";
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import {
  collect,
  type Harness,
  startedCalls,
  startHarness,
  toolResult,
} from "../helpers/parkway-harness.js";
import { REPO_ROOT } from "../helpers/spawn-server.js";

/**
 * The reference "everything" server's simulate-research-query runs only as an MCP task
 * (`execution.taskSupport: "required"`): the call answers with a task at once, and its report is
 * fetched once the task, four stages of a second each, has completed; an ambiguous query asks for
 * a clarification (a form) on the way.
 */
const EVERYTHING = path.join(
  REPO_ROOT,
  "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
);
const TOOL = "mcp__everything__simulate-research-query";
const SCRIPT = {
  turns: [
    {
      match: { lastUser: "^research" },
      toolCalls: [{ name: TOOL, input: { topic: "parking lots" } }],
      repeat: true,
    },
    {
      match: { lastUser: "^ambiguous" },
      toolCalls: [{ name: TOOL, input: { topic: "python", ambiguous: true } }],
      repeat: true,
    },
    { match: { toolName: TOOL }, text: "read it", repeat: true },
  ],
};

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const confirmations = (events: ServerEvent[]) =>
  events.flatMap((e) => (e.event?.$case === "requireUserConfirm" ? e.event.value.toolCalls : []));
const questions = (events: ServerEvent[]) =>
  events.flatMap((e) =>
    e.event?.$case === "requireExternalExecution" ? e.event.value.toolCalls : [],
  );

async function start() {
  h = await startHarness(SCRIPT, {
    mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, "stdio"] } },
  });
  const session = await h.client.createSession({ agentId: "test" });
  return h.client.attach(session.id);
}

describe("an MCP tool the server runs only as a task", () => {
  it("is called as a task, and its result comes back once the task completed", async () => {
    const chat = await start();
    const first = await collect(chat.message("research"));
    const [call] = confirmations(first);
    expect(call?.name).toBe(TOOL);
    await chat.confirm(call!);
    const rest = await collect(chat.untilSettled());
    chat.close();
    const result = toolResult([...first, ...rest], startedCalls(first)[0]!);
    expect(result.state).toBe(ToolResultState.TOOL_RESULT_STATE_SUCCESS);
    expect(result.text).toContain("# Research Report: parking lots");
    expect(result.text).toContain("Stage 4: Generating report ✓");
  }, 30_000);

  it("a form the task asks for on the way is answered through Parkway", async () => {
    const chat = await start();
    const first = await collect(chat.message("ambiguous"));
    await chat.confirm(confirmations(first)[0]!);
    const asked = await collect(chat.untilSettled());
    const [question] = questions(asked);
    expect(question?.askUser?.message).toContain('The research query "python"');
    const field = question!.askUser!.questions[0]!;
    const snake = field.options.find((o) => o.label === "Python snake species");
    expect(snake).toBeDefined();
    await chat.answer(question!, { [field.question]: snake!.label });
    const rest = await collect(chat.untilSettled());
    chat.close();
    const result = toolResult([...first, ...asked, ...rest], startedCalls(first)[0]!);
    expect(result.state).toBe(ToolResultState.TOOL_RESULT_STATE_SUCCESS);
    expect(result.text).toContain("# Research Report: python (snake)");
  }, 30_000);
});
