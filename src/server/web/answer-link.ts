import type { LinkAnswer } from "../../session/notifications/answer-by-link.js";

/**
 * Answers the call of an answer link's token (see `answerByLink`). Apart from the route so that
 * the package's public types do not reach Connect's (which assume the DOM's fetch types).
 */
export type AnswerLink = (token: string, answer: LinkAnswer) => Promise<object>;
