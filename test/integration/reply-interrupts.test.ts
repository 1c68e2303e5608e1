import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ParkwayClientError } from "../../src/client/index.js";
import { askUserResult } from "../../src/client/inputs.js";
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import { collect, type Harness, kind, startHarness } from "../helpers/parkway-harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

function replyEnd(events: ServerEvent[]) {
  const last = events[events.length - 1];
  return last?.event?.$case === "replyEnd" ? last.event.value : undefined;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("interrupting a reply", () => {
  it("kills a running Bash command and its children and ends with REPLY_END(interrupted)", async () => {
    h = await startHarness({ turns: [{ text: "placeholder" }] }, { permissionMode: "bypass" });
    const session = await h.client.createSession({ agentId: "test" });
    const pidFile = path.join(session.workingDirectories[0]!, "child.pid");
    await h.model.reset({
      turns: [
        {
          toolCalls: [
            {
              id: "call_sleep",
              name: "Bash",
              input: { command: `sleep 60 & echo $! > ${pidFile}; echo started; wait` },
            },
          ],
        },
        { text: "never reached" },
      ],
    });
    const chat = await h.client.attach(session.id);
    await chat.send({ $case: "userMessage", value: { text: "run it", content: [] } });
    const events: ServerEvent[] = [];
    for (;;) {
      const e = await chat.next();
      if (!e) break;
      events.push(e);
      if (e.event?.$case === "toolResultTextDelta" && e.event.value.delta.includes("started"))
        break;
    }
    const childPid = Number((await readFile(pidFile, "utf8")).trim());
    expect(processAlive(childPid)).toBe(true);

    await chat.interrupt();
    events.push(...(await collect(chat.untilSettled())));
    chat.close();

    expect(replyEnd(events)?.finishedReason).toBe(2); // INTERRUPTED
    const end = events.find((e) => e.event?.$case === "toolResultEnd");
    expect(end?.event?.$case === "toolResultEnd" && end.event.value.state).toBe(3); // INTERRUPTED
    const kinds = events.map(kind);
    expect(kinds.slice(-2)).toEqual(["tool_result_end", "reply_end"]);
    await expect.poll(() => processAlive(childPid), { timeout: 5000 }).toBe(false);
    expect(h.model.requests).toHaveLength(1);
    expect((await h.client.getSession(session.id)).status).toBe(1);
  });

  it("stops a model call that is streaming", async () => {
    h = await startHarness({
      turns: [{ text: "a long answer that streams slowly", chunkSize: 1, delayMs: 50 }],
    });
    const session = await h.client.createSession({ agentId: "test" });
    const chat = await h.client.attach(session.id);
    await chat.send({ $case: "userMessage", value: { text: "talk", content: [] } });
    const events: ServerEvent[] = [];
    for (;;) {
      const e = (await chat.next())!;
      events.push(e);
      if (kind(e) === "text_block_delta") break;
    }
    await chat.interrupt();
    events.push(...(await collect(chat.untilSettled())));
    chat.close();
    const kinds = events.map(kind).filter((k) => k !== "text_block_delta");
    expect(kinds.slice(-4)).toEqual([
      "text_block_start",
      "text_block_end",
      "model_call_end",
      "reply_end",
    ]);
    const modelEnd = events.find((e) => e.event?.$case === "modelCallEnd");
    expect(modelEnd?.event?.$case === "modelCallEnd" && modelEnd.event.value.finishedReason).toBe(
      2,
    );
    expect(replyEnd(events)?.finishedReason).toBe(2);
  });

  it("refuses an answer to a call of the reply it ended with that call's state", async () => {
    const question = {
      question: "Which database?",
      header: "Database",
      options: [
        { label: "Postgres", description: "hosted" },
        { label: "SQLite", description: "embedded" },
      ],
    };
    h = await startHarness({
      turns: [
        {
          match: { lastUser: "^ask" },
          toolCalls: [{ name: "AskUser", input: { questions: [question] } }],
        },
        {
          match: { lastUser: "^run" },
          repeat: true,
          toolCalls: [{ name: "Bash", input: { command: "touch made.txt" } }],
        },
        { match: { toolName: "Bash" }, repeat: true, text: "ok" },
      ],
    });
    const session = await h.client.createSession({ agentId: "test" });
    const chat = await h.client.attach(session.id);
    for (const [text, kindOfAnswer] of [
      ["ask", "external result"],
      ["run", "confirmation"],
    ] as const) {
      const parked = await collect(chat.message(text));
      const call = parked.flatMap((e) =>
        e.event?.$case === "requireUserConfirm" || e.event?.$case === "requireExternalExecution"
          ? e.event.value.toolCalls
          : [],
      )[0]!;
      await chat.interrupt();
      const ended = await collect(chat.untilSettled());
      expect(replyEnd(ended)?.finishedReason).toBe(2);
      const answer =
        kindOfAnswer === "confirmation"
          ? chat.confirm(call)
          : chat.send({
              $case: "externalExecutionResult",
              value: {
                replyId: "",
                executionResults: [askUserResult(call, { [question.question]: "Postgres" })],
              },
            });
      const refused = await answer.then(
        () => undefined,
        (err: unknown) => err as ParkwayClientError,
      );
      expect(refused?.codeName, kindOfAnswer).toBe("FAILED_PRECONDITION");
      expect(refused?.preconditionViolations).toEqual([
        { type: "TOOL_CALL_STATE", subject: call.id, description: "already finished" },
      ]);
      expect(refused?.message).toContain(`is already finished (interrupted), not awaiting`);
    }

    // A call denied, its reply ended since: the refusal says it was denied.
    const parked = await collect(chat.message("run again"));
    const call = parked.flatMap((e) =>
      e.event?.$case === "requireUserConfirm" ? e.event.value.toolCalls : [],
    )[0]!;
    await chat.deny(call, "not now");
    expect(replyEnd(await collect(chat.untilSettled()))?.finishedReason).toBe(1);
    const refused = await chat.confirm(call).then(
      () => undefined,
      (err: unknown) => err as ParkwayClientError,
    );
    expect(refused?.message).toContain(`(Bash) is already finished (denied), not awaiting`);
    chat.close();
  });

  it("is a no-op on an idle session", async () => {
    h = await startHarness({ turns: [{ text: "hi" }] });
    const session = await h.client.createSession({ agentId: "test" });
    const chat = await h.client.attach(session.id);
    await chat.interrupt();
    chat.close();
    const after = await h.client.getSession(session.id);
    expect(after.status).toBe(1);
    expect(after.lastSeq).toBe(0);
  });
});
