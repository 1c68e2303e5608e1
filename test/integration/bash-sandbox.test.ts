import { afterEach, describe, expect, it } from "vitest";
import { FinishedReason, ToolResultState } from "../../src/generated/parkway/v1/content.js";
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import {
  collect,
  type Harness,
  startedCalls,
  startHarness,
  toolResult,
} from "../helpers/parkway-harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  delete process.env.PARKWAY_TEST_PASSED;
  delete process.env.PARKWAY_TEST_SECRET;
});

async function run(command: string): Promise<ServerEvent[]> {
  await h!.model.reset({
    turns: [
      { toolCalls: [{ id: "call_bash", name: "Bash", input: { command, timeout: 30_000 } }] },
      { text: "done" },
    ],
  });
  const session = await h!.client.createSession({ agentId: "test" });
  const chat = await h!.client.attach(session.id);
  try {
    return await collect(chat.message("go"));
  } finally {
    chat.close();
  }
}

function finished(events: ServerEvent[]): number | undefined {
  const last = events[events.length - 1];
  return last?.event?.$case === "replyEnd" ? last.event.value.finishedReason : undefined;
}

describe("Bash in a served agent", () => {
  it("runs with the agent's bash.env and bash.passEnv, never the server's secrets", async () => {
    process.env.PARKWAY_TEST_PASSED = "passed through";
    process.env.PARKWAY_TEST_SECRET = "sk-must-not-leak";
    h = await startHarness(
      { turns: [{ text: "placeholder" }] },
      {
        permissionMode: "bypass",
        bash: { env: { GREETING: "hello" }, passEnv: ["PARKWAY_TEST_PASSED"] },
      },
    );
    const events = await run(
      'echo "$GREETING / $PARKWAY_TEST_PASSED / ${PARKWAY_TEST_SECRET:-absent} / $TERM"; env',
    );
    expect(finished(events)).toBe(FinishedReason.FINISHED_REASON_COMPLETED);
    const bash = toolResult(events, startedCalls(events)[0]!);
    expect(bash.state).toBe(ToolResultState.TOOL_RESULT_STATE_SUCCESS);
    expect(bash.text).toMatch(/^hello \/ passed through \/ absent \/ dumb\n/);
    expect(bash.text).not.toContain("sk-must-not-leak");
  });

  it("kills a fork bomb past bash.maxProcesses; the model gets a clear error and the reply completes", async () => {
    h = await startHarness(
      { turns: [{ text: "placeholder" }] },
      { permissionMode: "bypass", bash: { maxProcesses: 40 } },
    );
    const events = await run(
      "f() { if [ $1 -gt 0 ]; then f $(($1-1)) & f $(($1-1)) & fi; sleep 60; }; f 8",
    );
    expect(finished(events)).toBe(FinishedReason.FINISHED_REASON_COMPLETED);
    const bash = toolResult(events, startedCalls(events)[0]!);
    expect(bash.state).toBe(ToolResultState.TOOL_RESULT_STATE_ERROR);
    expect(bash.text).toMatch(/killed: more than 40 processes at once/);
    const tool = h.model.requests[1]!.messages.find((m) => m.role === "tool");
    expect(tool?.content).toBe(bash.text);
  });
});
