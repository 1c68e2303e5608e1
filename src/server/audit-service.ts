import { unimplemented } from "../common/errors.js";
import type {
  ListAuditRecordsRequest,
  ListAuditRecordsResponse,
  ListDeadLettersRequest,
  ListDeadLettersResponse,
} from "../generated/parkway/v1/audit.js";
import type { UnaryHandler } from "./adapters.js";

/** The handlers of parkway.v1.AuditService. */
export interface AuditServiceHandlers {
  listAuditRecords: UnaryHandler<ListAuditRecordsRequest, ListAuditRecordsResponse>;
  listDeadLetters: UnaryHandler<ListDeadLettersRequest, ListDeadLettersResponse>;
}

/** AuditService handlers for a server built without it: each answers UNIMPLEMENTED naming it. */
export function unimplementedAuditService(): AuditServiceHandlers {
  return {
    listAuditRecords: () =>
      Promise.reject(unimplemented("AuditService.ListAuditRecords (the audit trail)")),
    listDeadLetters: () =>
      Promise.reject(unimplemented("AuditService.ListDeadLetters (park notifications)")),
  };
}
