/** The signal topic of a session's new events (see `StoreSignals`). */
export const eventsTopic = (sessionId: string): string => `events:${sessionId}`;

/** The signal topic of the inputs forwarded to the node that serves a session. */
export const inboxTopic = (sessionId: string): string => `inbox:${sessionId}`;

/** The signal topic of the outcome of one forwarded input. */
export const outcomeTopic = (entryKey: string): string => `outcome:${entryKey}`;
