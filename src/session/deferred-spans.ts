import { performance } from "node:perf_hooks";
import type { SpanAttributes, SpanOptions, TraceSpan, Tracing } from "../common/telemetry.js";

/** A span timed now and handed to the tracer later: `span` is set once it is. */
export interface Deferred {
  span?: TraceSpan;
}

/** Now as epoch milliseconds, below the millisecond (what spans are timed with). */
export const epochNow = () => performance.timeOrigin + performance.now();

/**
 * Spans whose starts and ends are timed when they happen and handed to the tracer after the
 * current turn of the event loop, in order: behind the write that stores the events of that turn
 * (the hub issues it first), so that the tracer's work (tens of microseconds a span, with its
 * export) does not delay what the write makes visible. With tracing off, nothing is queued.
 */
export class DeferredSpans {
  private queue: (() => void)[] = [];

  constructor(private readonly tracing: Tracing) {}

  /** Starts a span later, at the time of now (or `options.at`). */
  start(name: string, options: SpanOptions): Deferred {
    const deferred: Deferred = {};
    const at = options.at ?? epochNow();
    this.later(() => (deferred.span = this.tracing.start(name, { ...options, at })));
    return deferred;
  }

  /** Ends a span later, at the time of now, with `attributes` set first. */
  end(deferred: Deferred, attributes?: SpanAttributes, options: { error?: string } = {}): void {
    const at = epochNow();
    this.later(() => {
      if (attributes) deferred.span?.setAttributes(attributes);
      deferred.span?.end({ ...options, at });
    });
  }

  private later(work: () => void): void {
    if (!this.tracing.enabled) return;
    if (this.queue.push(work) === 1) setImmediate(() => this.flush());
  }

  private flush(): void {
    const queue = this.queue;
    this.queue = [];
    for (const work of queue) {
      try {
        work();
      } catch {
        // Spans never fail a reply: here, off its path, a throw would end the process.
      }
    }
  }
}
