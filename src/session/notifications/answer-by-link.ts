import { ParkwayError } from "../../common/errors.js";
import type { Store } from "../../store/store.js";
import type { SessionInput } from "../session-input.js";
import { AnswerTokenRecord, tokenHash } from "./answer-links.js";

/** What a POST to an answer link says. */
export interface LinkAnswer {
  decision: "allow" | "deny";
  /** Why, for a denial (the model reads it). */
  reason?: string;
}

/** Applies an input as a client's would (`SessionManager.apply`). */
export type ApplyInput = (
  tenant: string,
  sessionId: string,
  input: SessionInput,
  options: { principal: string; requestId: string },
) => Promise<{ duplicate?: boolean }>;

/**
 * Answers the call an answer link names, through the same path as a ConfirmResult: checked against
 * the call's state and applied once (the link's request id makes a repeat a duplicate), with the
 * receiver that got the link named in the audit trail ("answer link (<receiver url>)"). The link
 * is single-use: its token is deleted once the answer is applied. NOT_FOUND when the token is
 * unknown or used, FAILED_PRECONDITION when it expired or the call is no longer waiting.
 */
export async function answerByLink(
  store: Store,
  apply: ApplyInput,
  token: string,
  answer: LinkAnswer,
): Promise<{ sessionId: string; callId: string }> {
  const hash = tokenHash(token);
  const link = await store.get(AnswerTokenRecord, hash);
  if (!link) throw new ParkwayError("not_found", "unknown or already used answer link");
  if (Date.parse(link.expiresAt) <= Date.now()) {
    await store.batch().del(AnswerTokenRecord, hash).write();
    throw new ParkwayError("failed_precondition", `the answer link expired at ${link.expiresAt}`);
  }
  const allow = answer.decision === "allow";
  const applied = await apply(
    link.tenant,
    link.sessionId,
    {
      kind: "confirm",
      replyId: link.replyId,
      answers: [
        {
          toolCallId: link.callId,
          confirmed: allow,
          rules: [],
          reason: allow ? "" : (answer.reason ?? "denied through an answer link"),
        },
      ],
    },
    { principal: `answer link (${link.origin})`, requestId: `link_${hash.slice(0, 48)}` },
  );
  await store.batch().del(AnswerTokenRecord, hash).write();
  if (applied.duplicate) throw new ParkwayError("not_found", "unknown or already used answer link");
  return { sessionId: link.sessionId, callId: link.callId };
}
