import type { StoreSignals } from "../store/signals.js";
import type { Telemetry } from "../common/telemetry.js";
import type { TargetsFor } from "./notifications/outbox.js";
import type { TargetOf } from "./notifications/sender.js";
import type { RequestIdLimits } from "./request-ids.js";
import type { LeaseOptions } from "./session-leases.js";
import type { SessionLimits } from "./session-limits.js";

/** How a `SessionManager` keeps, limits and shares its sessions. */
export interface SessionManagerOptions {
  /** Keep the events of this many finished replies per session; undefined keeps all. */
  keepFinishedReplies?: number;
  /** Limits on sessions and replies (see `SessionLimits`). */
  limits?: SessionLimits;
  /** How many request ids each session remembers, and for how long. */
  requestIds?: Partial<RequestIdLimits>;
  /** Session leases, for several nodes on one database (see `SessionLeases`). */
  leases?: LeaseOptions;
  /** Wake-ups between those nodes (see `StoreSignals`); none by default. */
  signals?: StoreSignals;
  /** Where replies report their metrics and spans; none by default. */
  telemetry?: Telemetry;
  /** The receivers of park notifications (see `Outbox`); none by default. */
  notifications?: { targetsFor: TargetsFor; targetOf: TargetOf };
}
