import type { SessionData } from "./records.js";

/** What ending a reply compacts: the stored chunks of events to delete, and the record's change. */
export interface Compaction {
  keys: string[];
  data: Pick<SessionData, "compactedThrough" | "replyStarts">;
}

/**
 * What ending a reply compacts when a session keeps the events of its last `keep` finished replies:
 * the events of older replies (they live on as history messages), deleted in the batch that ends
 * the reply; later attaches to a compacted range are told so. Undefined when nothing is due.
 */
export async function compaction(
  data: SessionData,
  keep: number | undefined,
  lastSeq: number,
  chunkKeys: (afterSeq: number, uptoSeq: number) => Promise<string[]>,
): Promise<Compaction | undefined> {
  const starts = data.replyStarts ?? [];
  if (keep === undefined || starts.length <= keep) return undefined;
  const boundary = (starts[starts.length - keep] ?? lastSeq + 1) - 1;
  const from = data.compactedThrough ?? 0;
  if (boundary <= from) return undefined;
  // A chunk that also holds events after the boundary stays; those before it are never served.
  const keys = await chunkKeys(from, boundary);
  return { keys, data: { compactedThrough: boundary, replyStarts: starts.slice(-keep) } };
}

/** The REPLY_START seqs to remember once a reply starts at `startSeq`, for compaction. */
export function replyStarts(
  data: SessionData,
  keep: number | undefined,
  startSeq: number,
): Pick<SessionData, "replyStarts"> {
  if (keep === undefined) return {};
  return { replyStarts: [...(data.replyStarts ?? []), startSeq].slice(-(keep + 1)) };
}

/** The first seq a session can still replay. */
export function firstAvailableSeq(data: SessionData): number {
  return (data.compactedThrough ?? 0) + 1;
}
