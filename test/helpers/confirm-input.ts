import { confirmation, denial } from "../../src/client/inputs.js";
import { ToolCallBlock } from "../../src/generated/parkway/v1/content.js";

/**
 * A `user_confirm_result` input, for `Reply` or a Chat stream, that confirms (or denies) one call:
 * built with the client's own `confirmation` and `denial`, from the call or its id.
 */
export function confirmInput(call: string | Partial<ToolCallBlock>, confirmed = true) {
  const block = ToolCallBlock.fromPartial(typeof call === "string" ? { id: call } : call);
  return {
    $case: "userConfirmResult" as const,
    value: { replyId: "", confirmResults: [confirmed ? confirmation(block) : denial(block)] },
  };
}
