import type { Logger } from "../../common/logger.js";
import { noMetrics } from "../../common/telemetry.js";
import type { Store } from "../../store/store.js";
import type { SessionManagerOptions } from "../manager-options.js";
import { Outbox } from "./outbox.js";
import { NotificationSender } from "./sender.js";

/** The outbox and its sender, when receivers are configured (`options.notifications`). */
export function createNotifications(
  store: Store,
  log: Logger,
  options: SessionManagerOptions,
): { outbox: Outbox; sender: NotificationSender } | undefined {
  const targets = options.notifications;
  if (!targets) return undefined;
  const metrics = options.telemetry?.metrics ?? noMetrics;
  const sender = new NotificationSender(store, log, targets.targetOf, metrics);
  return { sender, outbox: new Outbox(targets.targetsFor, () => sender.note()) };
}
