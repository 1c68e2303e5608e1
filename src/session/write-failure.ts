import { ParkwayError } from "../common/errors.js";
import type { Logger } from "../common/logger.js";
import { StorageFailure, StoreClosedError } from "../store/storage-failure.js";

/**
 * What a session's failed write becomes for those waiting on it and its streams: a storage failure
 * or a closed store as it is (a storage failure is logged once, by whoever watches the store; a
 * closed store is a stop), anything else logged with `fields` and reported as UNAVAILABLE.
 */
export function writeFailure(err: unknown, log: Logger, fields: object): Error {
  if (err instanceof StorageFailure || err instanceof StoreClosedError) return err;
  log.error({ err, ...fields }, "event log write failed");
  return new ParkwayError(
    "unavailable",
    "the server could not store the session; reattach",
    {},
    { cause: err },
  );
}
