import type { Metadata, ServiceError } from "@grpc/grpc-js";
import { status as Status } from "@grpc/grpc-js";
import { BadRequest, PreconditionFailure } from "../generated/google/rpc/error_details.js";
import { Status as RpcStatus } from "../generated/google/rpc/status.js";

/** An error from the server: its status code, message, and the google.rpc details it carried. */
export class ParkwayClientError extends Error {
  override readonly name = "ParkwayClientError";

  constructor(
    /** The gRPC status code (see `status` from @grpc/grpc-js). */
    readonly code: number,
    message: string,
    /** BadRequest field violations: which fields were invalid and why. */
    readonly fieldViolations: { field: string; description: string }[] = [],
    /** PreconditionFailure violations: which state did not allow the input. */
    readonly preconditionViolations: { type: string; subject: string; description: string }[] = [],
  ) {
    super(message);
  }

  /** The status code's name, e.g. "FAILED_PRECONDITION". */
  get codeName(): string {
    return Status[this.code] ?? String(this.code);
  }
}

/** Builds the client error from a google.rpc.Status (as in InputAck.status). */
export function fromRpcStatus(status: RpcStatus): ParkwayClientError {
  const fields: { field: string; description: string }[] = [];
  const preconditions: { type: string; subject: string; description: string }[] = [];
  for (const detail of status.details) {
    if (detail.typeUrl.endsWith("/google.rpc.BadRequest")) {
      fields.push(...BadRequest.decode(detail.value).fieldViolations);
    } else if (detail.typeUrl.endsWith("/google.rpc.PreconditionFailure")) {
      preconditions.push(...PreconditionFailure.decode(detail.value).violations);
    }
  }
  return new ParkwayClientError(status.code, status.message, fields, preconditions);
}

/** Builds the client error from a failed call, decoding `grpc-status-details-bin`. */
export function fromServiceError(
  err: ServiceError | (Error & { code?: number; metadata?: Metadata }),
): ParkwayClientError {
  const bin = err.metadata?.get("grpc-status-details-bin")[0];
  if (bin instanceof Buffer) return fromRpcStatus(RpcStatus.decode(bin));
  const details = (err as ServiceError).details ?? err.message;
  return new ParkwayClientError(err.code ?? Status.UNKNOWN, details);
}
