// Plain Node, no build step: asks the first agent of the server at argv[2] a question through the
// light client and prints what came back as one JSON line.
import { createParkwayClient, FinishedReason } from "@parkway/client";

const client = createParkwayClient(process.argv[2], { timeoutMs: 30_000 });
const agents = await client.listAgents();
const session = await client.createSession({ agentId: agents[0].id });
const chat = await client.attach(session.id);
await chat.send({ $case: "userMessage", value: { text: "what is this?", content: [] } });
let text = "";
let finished = "";
for await (const { event } of chat) {
  if (event?.$case === "textBlockDelta") text += event.value.delta;
  if (event?.$case === "replyEnd") {
    finished = FinishedReason[event.value.finishedReason];
    break;
  }
}
chat.close();
client.close();
console.log(JSON.stringify({ agents: agents.map((a) => a.id), finished, text }));
