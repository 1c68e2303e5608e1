import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SessionStatus } from "../../src/generated/parkway/v1/agent_service.js";
import { FinishedReason, ToolCallState } from "../../src/generated/parkway/v1/content.js";
import {
  type Script,
  startScriptedModel,
  type ScriptedModelServer,
} from "../../src/model/scripted/index.js";
import {
  collect,
  type Harness,
  kind,
  startedCalls,
  startHarness,
} from "../helpers/parkway-harness.js";

let h: Harness | undefined;
let model: ScriptedModelServer | undefined;
afterEach(async () => {
  await h?.close();
  await model?.close();
  h = undefined;
  model = undefined;
});

/**
 * Like the demo model: the script gives no ids, so the model numbers its calls `call_1`, `call_2`, …
 * per process, and turns are chosen by the last message, so a restarted model picks up where the
 * conversation is.
 */
const script = (wd: string): Script => ({
  turns: [
    {
      match: { lastUser: "go" },
      toolCalls: [{ name: "Bash", input: { command: "touch one.txt && echo ONE-DONE" } }],
    },
    {
      match: { toolName: "Bash" },
      toolCalls: [
        { name: "Write", input: { file_path: path.join(wd, "two.txt"), content: "two" } },
      ],
    },
    { match: { toolName: "Write" }, text: "Both done." },
  ],
});

/** The ids of the tool calls the model was sent back, assistant message by assistant message. */
function idsSentBack(m: ScriptedModelServer): string[][] {
  const last = m.requests.at(-1)!;
  return last.messages.flatMap((msg) =>
    msg.role === "assistant" && msg.tool_calls ? [msg.tool_calls.map((c) => c.id)] : [],
  );
}

describe("a model whose call ids repeat after a restart", () => {
  it("answers a call parked after the restart whose model id is a finished call's", async () => {
    h = await startHarness({ turns: [] });
    const session = await h.client.createSession({ agentId: "test" });
    const wd = session.workingDirectories[0]!;
    await h.model.reset(script(wd));

    const chat = await h.client.attach(session.id);
    const first = await collect(chat.message("go"));
    expect(first.map(kind).slice(-2)).toEqual(["require_user_confirm", "reply_parked"]);
    const [bash] = startedCalls(first);
    chat.close();

    // The server restarts, and the model with it: its numbering starts over at call_1.
    const modelUrl = new URL(h.model.url);
    await h.model.close();
    model = await startScriptedModel({
      script: script(wd),
      listen: `${modelUrl.hostname}:${modelUrl.port}`,
    });
    await h.restart();

    const parked = await h.client.getSession(session.id);
    expect(parked.status).toBe(SessionStatus.SESSION_STATUS_AWAITING_PERMISSION);
    expect(parked.pendingToolCalls.map((c) => c.id)).toEqual([bash]);
    const again = await h.client.attach(session.id, { afterSeq: parked.lastSeq });
    await again.confirm(parked.pendingToolCalls[0]!);
    const second = await collect(again.untilSettled(AbortSignal.timeout(20_000)));
    expect(second.map(kind).slice(-2)).toEqual(["require_user_confirm", "reply_parked"]);
    const [write] = startedCalls(second);
    expect(write).toBeDefined();
    expect(write).not.toBe(bash);
    // The model did repeat itself: both calls are call_1 to it.
    expect(idsSentBack(model)).toEqual([["call_1"]]);
    expect(model.requests.at(-1)!.messages.at(-1)).toMatchObject({ tool_call_id: "call_1" });

    const waiting = await h.client.getSession(session.id);
    expect(waiting.status).toBe(SessionStatus.SESSION_STATUS_AWAITING_PERMISSION);
    expect(waiting.pendingToolCalls.map((c) => [c.id, c.name, c.state])).toEqual([
      [write, "Write", ToolCallState.TOOL_CALL_STATE_ASKING],
    ]);

    const pendingWrite = waiting.pendingToolCalls[0]!;
    await again.confirm(pendingWrite);
    const rest = await collect(again.untilSettled(AbortSignal.timeout(20_000)));
    again.close();
    const end = rest.at(-1);
    expect(end?.event?.$case === "replyEnd" && end.event.value.finishedReason).toBe(
      FinishedReason.FINISHED_REASON_COMPLETED,
    );
    const done = await h.client.getSession(session.id);
    expect(done.status).toBe(SessionStatus.SESSION_STATUS_IDLE);
    expect(done.pendingToolCalls).toEqual([]);
    expect(existsSync(path.join(wd, "one.txt"))).toBe(true);
    expect(await readFile(path.join(wd, "two.txt"), "utf8")).toBe("two");
    // Each turn reads back to the model as it wrote it: call_1, then call_1 again.
    expect(idsSentBack(model)).toEqual([["call_1"], ["call_1"]]);
  });
});
