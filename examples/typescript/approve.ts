/**
 * A small approval frontend: sends one message, prints the streamed answer, approves every
 * confirmation (accepting the suggested rule with --always), answers AskUser with each question's
 * first option, and prints the final answer (the last text block) with how the reply finished.
 *
 * Usage: node --import tsx examples/typescript/approve.ts ADDR AGENT "message" [--always]
 */
import { createParkwayClient, FinishedReason } from "../../src/client/index.js";

const [address = "127.0.0.1:50051", agentId = "assistant", text = "hello"] = process.argv.slice(2);
const always = process.argv.includes("--always");

const client = createParkwayClient(address, { timeoutMs: 30_000 });
const session = await client.createSession({ agentId });
const chat = await client.attach(session.id);
console.log(`[session] ${session.id}`);

let answer = ""; // the latest text block
await chat.send({ $case: "userMessage", value: { text, content: [] } });
for await (const event of chat) {
  const e = event.event;
  if (!e) continue;
  if (e.$case === "textBlockStart") {
    answer = "";
  } else if (e.$case === "textBlockDelta") {
    answer += e.value.delta;
    process.stdout.write(e.value.delta);
  } else if (e.$case === "textBlockEnd") {
    process.stdout.write("\n");
  } else if (e.$case === "requireUserConfirm") {
    for (const call of e.value.toolCalls) {
      console.log(`[approve] ${call.name} ${call.input}`);
      await chat.confirm(call, always ? { rules: "suggested" } : {});
    }
  } else if (e.$case === "requireExternalExecution") {
    for (const call of e.value.toolCalls) {
      if (!call.askUser) continue;
      const picks = Object.fromEntries(
        call.askUser.questions.map((q) => [q.question, q.options[0]?.label ?? ""]),
      );
      console.log(`[ask] ${JSON.stringify(picks)}`);
      await chat.answer(call, picks);
    }
  } else if (e.$case === "replyEnd") {
    // The enum's name without its prefix, lower case, as the Python example prints it: "completed".
    const reason = (FinishedReason[e.value.finishedReason] ?? String(e.value.finishedReason))
      .replace(/^FINISHED_REASON_/, "")
      .toLowerCase();
    console.log(`[final] ${answer} (${reason})`);
    break;
  }
}
chat.close();
client.close();
