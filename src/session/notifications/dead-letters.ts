import { invalidArgument } from "../../common/errors.js";
import type { Store } from "../../store/store.js";
import { type DeadLetter, DeadLetterRecord, deadLetterKey } from "./outbox-records.js";

const TOKEN_VERSION = "d1";
const ID_PATTERN = /^ntf_[0-9a-z]{22}$/;

function decodeToken(token: string): string {
  const text = /^[A-Za-z0-9_-]+$/.test(token) ? Buffer.from(token, "base64url").toString() : "";
  const [version, id] = text.split(":");
  if (version !== TOKEN_VERSION || id === undefined || !ID_PATTERN.test(id)) {
    throw invalidArgument([
      { field: "page_token", description: "is not a token returned by ListDeadLetters" },
    ]);
  }
  return id;
}

/**
 * A tenant's dead letters, oldest first, a page at a time (one key range: the tenant's);
 * `nextPageToken` is set only when another exists after the page.
 */
export async function listDeadLetters(
  store: Store,
  tenant: string,
  page: { pageSize: number; pageToken?: string },
  signal?: AbortSignal,
): Promise<{ deadLetters: DeadLetter[]; nextPageToken?: string }> {
  const after = page.pageToken ? decodeToken(page.pageToken) : undefined;
  const deadLetters: DeadLetter[] = [];
  for await (const [, letter] of store.entries(DeadLetterRecord, {
    ...(after ? { gt: deadLetterKey(tenant, after) } : { gte: deadLetterKey(tenant, "") }),
    lt: deadLetterKey(tenant, "\uffff"),
    limit: page.pageSize + 1,
    ...(signal ? { signal } : {}),
  })) {
    if (deadLetters.length === page.pageSize) {
      const last = deadLetters[deadLetters.length - 1]!.id;
      return {
        deadLetters,
        nextPageToken: Buffer.from(`${TOKEN_VERSION}:${last}`).toString("base64url"),
      };
    }
    deadLetters.push(letter);
  }
  return { deadLetters };
}
