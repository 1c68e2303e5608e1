import { createHash, timingSafeEqual } from "node:crypto";
import type { Metadata } from "@grpc/grpc-js";
import { ParkwayError } from "../common/errors.js";
import type { Principal } from "./call-context.js";

/** A tenant and the tokens that act for it, stored as SHA-256 hex digests. */
export interface TenantTokens {
  id: string;
  tokens: { name: string; sha256: string }[];
}

/** Maps call metadata to the principal it acts for; throws UNAUTHENTICATED when it cannot. */
export type Authenticate = (metadata: Metadata) => Principal;

const SINGLE_TENANT: Principal = { tenant: "default", name: "anonymous" };

/**
 * With no tenants configured every call acts for the single tenant "default". Otherwise a call must
 * carry `authorization: Bearer <token>` whose SHA-256 digest is one of a tenant's tokens; a missing
 * or unknown token is UNAUTHENTICATED, before any handler runs.
 */
export function createAuthenticator(tenants: readonly TenantTokens[]): Authenticate {
  if (tenants.length === 0) return () => SINGLE_TENANT;
  const byDigest = new Map<string, Principal>();
  for (const tenant of tenants) {
    for (const token of tenant.tokens) {
      byDigest.set(token.sha256.toLowerCase(), { tenant: tenant.id, name: token.name });
    }
  }
  return (metadata) => {
    const header = metadata.get("authorization")[0];
    const match = typeof header === "string" ? /^Bearer\s+(\S+)$/i.exec(header) : null;
    if (!match?.[1]) {
      throw new ParkwayError("unauthenticated", "missing bearer token (authorization: Bearer …)");
    }
    const digest = createHash("sha256").update(match[1]).digest("hex");
    for (const [known, principal] of byDigest) {
      if (timingSafeEqual(Buffer.from(known, "hex"), Buffer.from(digest, "hex"))) return principal;
    }
    throw new ParkwayError("unauthenticated", "unknown bearer token");
  };
}
