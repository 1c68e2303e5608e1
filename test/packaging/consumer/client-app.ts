// A frontend that uses only the light client, compiled by the packaging test under @tsconfig/strictest.
import {
  createParkwayClient,
  FinishedReason,
  type ParkwayClient,
  ParkwayClientError,
  type ServerEvent,
} from "@parkway/client";

export async function ask(client: ParkwayClient, agentId: string, text: string): Promise<string> {
  const session = await client.createSession({ agentId });
  const chat = await client.attach(session.id);
  let answer = "";
  try {
    await chat.send({ $case: "userMessage", value: { text, content: [] } });
    for await (const event of chat) {
      const e: ServerEvent["event"] = event.event;
      if (e?.$case === "textBlockDelta") answer += e.value.delta;
      if (e?.$case === "requireUserConfirm") {
        for (const call of e.value.toolCalls) await chat.confirm(call, { rules: "suggested" });
      }
      if (e?.$case === "replyEnd") return `${answer} (${FinishedReason[e.value.finishedReason]})`;
    }
    return answer;
  } catch (error) {
    if (error instanceof ParkwayClientError) return `refused: ${error.message}`;
    throw error;
  } finally {
    chat.close();
  }
}

export const client: ParkwayClient = createParkwayClient("127.0.0.1:50051", { timeoutMs: 5_000 });
