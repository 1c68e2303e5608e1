import type { Logger } from "../../common/logger.js";
import { noMetrics } from "../../common/telemetry.js";
import type { Store } from "../../store/store.js";
import type { SessionManagerOptions } from "../manager-options.js";
import { Outbox } from "./outbox.js";
import { NotificationSender } from "./sender.js";
import { AnswerTokenSweeper } from "./token-sweeper.js";

/**
 * The outbox, its sender and the sweeper of expired answer-link tokens, when receivers are
 * configured (`options.notifications`).
 */
export function createNotifications(
  store: Store,
  log: Logger,
  options: SessionManagerOptions,
): { outbox: Outbox; sender: NotificationSender; tokens: AnswerTokenSweeper } | undefined {
  const targets = options.notifications;
  if (!targets) return undefined;
  const metrics = options.telemetry?.metrics ?? noMetrics;
  const sender = new NotificationSender(store, log, targets.targetOf, metrics);
  const tokens = new AnswerTokenSweeper(store, log);
  return { sender, tokens, outbox: new Outbox(targets.targetsFor, () => sender.note()) };
}
