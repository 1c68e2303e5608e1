import type { ConfirmAnswer, ExternalAnswer } from "./reply-inputs.js";

/** One input of the Chat stream or the Reply RPC. */
export type SessionInput =
  | { kind: "user_message"; text: string }
  | { kind: "user_interrupt"; replyId: string }
  | { kind: "confirm"; replyId: string; answers: ConfirmAnswer[] }
  | { kind: "external_results"; replyId: string; answers: ExternalAnswer[] };
