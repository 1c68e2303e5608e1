import type { Store } from "../../store/store.js";
import { pageTokens } from "../page-token.js";
import { type DeadLetter, DeadLetterRecord, deadLetterKey } from "./outbox-records.js";

const tokens = pageTokens("d1", /^ntf_[0-9a-z]{22}$/, "ListDeadLetters");

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
  const after = page.pageToken ? tokens.decode(page.pageToken) : undefined;
  const deadLetters: DeadLetter[] = [];
  for await (const [, letter] of store.entries(DeadLetterRecord, {
    ...(after ? { gt: deadLetterKey(tenant, after) } : { gte: deadLetterKey(tenant, "") }),
    lt: deadLetterKey(tenant, "\uffff"),
    limit: page.pageSize + 1,
    ...(signal ? { signal } : {}),
  })) {
    if (deadLetters.length === page.pageSize) {
      const last = deadLetters[deadLetters.length - 1]!.id;
      return { deadLetters, nextPageToken: tokens.encode(last) };
    }
    deadLetters.push(letter);
  }
  return { deadLetters };
}
