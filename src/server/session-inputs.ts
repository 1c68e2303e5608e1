import { invalidArgument } from "../common/errors.js";
import type { ClientEvent } from "../generated/parkway/v1/events.js";
import type { ReplyRequest } from "../generated/parkway/v1/agent_service.js";
import type { SessionInput } from "../session/session-manager.js";

type Input = NonNullable<ClientEvent["event"]> | NonNullable<ReplyRequest["input"]>;

/** Decodes one client input into the session's terms; INVALID_ARGUMENT names a bad field. */
export function toSessionInput(input: Input | undefined, field: string): SessionInput {
  if (!input) {
    throw invalidArgument([{ field, description: "exactly one input must be set" }]);
  }
  switch (input.$case) {
    case "userMessage": {
      const parts = [input.value.text];
      for (const block of input.value.content) {
        if (block.block?.$case === "text") parts.push(block.block.value.text);
      }
      const text = parts.filter((p) => p !== "").join("\n");
      if (text.trim() === "") {
        throw invalidArgument([
          { field: "user_message.text", description: "the message has no text" },
        ]);
      }
      return { kind: "user_message", text };
    }
    case "userInterrupt":
      return { kind: "user_interrupt", replyId: input.value.replyId };
    case "userConfirmResult":
    case "externalExecutionResult":
      throw invalidArgument([
        {
          field:
            input.$case === "userConfirmResult"
              ? "user_confirm_result"
              : "external_execution_result",
          description: "there is no parked reply awaiting it",
        },
      ]);
    case "attach":
      throw invalidArgument([
        {
          field: "attach",
          description: "the stream is already attached; open a new stream to attach again",
        },
      ]);
  }
}
