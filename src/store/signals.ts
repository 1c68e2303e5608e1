/**
 * Wake-ups between the processes that share a store (several nodes on one database): a write that
 * other nodes may want to read is followed by a signal naming what changed (its topic, e.g. a
 * session's events). A signal carries nothing but its topic and may be lost (a dropped
 * connection), so whoever listens reads what it follows on a timer too, and `watch` listeners are
 * also called when signals may have been missed (after a reconnection).
 */
export interface StoreSignals {
  /** Starts listening to the other processes; rejects when they cannot be reached. */
  open(): Promise<void>;
  /** Wakes the listeners of `topic` in every other process (not this one's). */
  signal(topic: string): void;
  /** Calls `listener` on every signal of `topic` from another process; returns what stops it. */
  watch(topic: string, listener: () => void): () => void;
  /** Stops signalling and listening. */
  close(): Promise<void>;
}

/** Listeners by topic. */
export class Listeners {
  private readonly byTopic = new Map<string, Set<() => void>>();

  /** Calls the listeners of `topic`. */
  call(topic: string): void {
    for (const listener of this.byTopic.get(topic) ?? []) listener();
  }

  /** Calls every listener of every topic (signals may have been missed). */
  callAll(): void {
    for (const set of this.byTopic.values()) for (const listener of set) listener();
  }

  add(topic: string, listener: () => void): () => void {
    let set = this.byTopic.get(topic);
    if (!set) this.byTopic.set(topic, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.byTopic.get(topic) === set) this.byTopic.delete(topic);
    };
  }

  clear(): void {
    this.byTopic.clear();
  }
}

/**
 * Signals between nodes that live in one process (tests, embedding several nodes): each `node()`
 * is one node's `StoreSignals`, whose signals reach the listeners of every other node.
 */
export class SignalBus {
  private readonly nodes = new Set<Listeners>();

  node(): StoreSignals {
    const own = new Listeners();
    this.nodes.add(own);
    return {
      open: () => Promise.resolve(),
      signal: (topic) => {
        for (const node of this.nodes) if (node !== own) node.call(topic);
      },
      watch: (topic, listener) => own.add(topic, listener),
      close: () => {
        this.nodes.delete(own);
        own.clear();
        return Promise.resolve();
      },
    };
  }
}
