/**
 * Wake-ups between the processes that share a store (several nodes on one database): a write that
 * others may want to read is followed by a signal naming what changed (its topic, e.g. a session's
 * events). A signal carries nothing but its topic and may be lost (a dropped connection), so whoever
 * listens reads what it follows on a timer too, and `watch` listeners are also called when signals
 * may have been missed (after a reconnection).
 */
export interface StoreSignals {
  /** Starts listening to the other processes; rejects when they cannot be reached. */
  open(): Promise<void>;
  /** Wakes the listeners of `topic` in every process, this one included (here at once). */
  signal(topic: string): void;
  /** Calls `listener` on every signal of `topic`; returns what stops it. */
  watch(topic: string, listener: () => void): () => void;
  /** Stops signalling and listening. */
  close(): Promise<void>;
}

/** The listeners of each topic in this process. */
export class LocalSignals implements StoreSignals {
  private readonly listeners = new Map<string, Set<() => void>>();

  open(): Promise<void> {
    return Promise.resolve();
  }

  signal(topic: string): void {
    for (const listener of this.listeners.get(topic) ?? []) listener();
  }

  /** Calls every listener of every topic (signals may have been missed). */
  signalAll(): void {
    for (const set of this.listeners.values()) for (const listener of set) listener();
  }

  watch(topic: string, listener: () => void): () => void {
    let set = this.listeners.get(topic);
    if (!set) this.listeners.set(topic, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(topic) === set) this.listeners.delete(topic);
    };
  }

  close(): Promise<void> {
    this.listeners.clear();
    return Promise.resolve();
  }
}
