import { RandomIdGenerator } from "@opentelemetry/sdk-trace-base";

/**
 * The tracer's ids: random, except for the one span started with ids chosen before it
 * (`Tracing.reserve`), which `preset` names for the span being started now.
 */
export class PresetIds {
  private readonly random = new RandomIdGenerator();
  /** The ids of the span being started, when they were reserved. */
  preset: { traceId: string; spanId: string } | undefined;

  generateTraceId(): string {
    return this.preset?.traceId ?? this.random.generateTraceId();
  }

  generateSpanId(): string {
    return this.preset?.spanId ?? this.random.generateSpanId();
  }

  /** New random ids. */
  fresh(): { traceId: string; spanId: string } {
    return { traceId: this.random.generateTraceId(), spanId: this.random.generateSpanId() };
  }
}
