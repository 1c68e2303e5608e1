import {
  type Context,
  type HrTime,
  type Link,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
} from "@opentelemetry/api";
import type { SpanAttributes, SpanOptions, TraceSpan, Tracing } from "../common/telemetry.js";
import type { PresetIds } from "./preset-ids.js";

/** A W3C `traceparent` of version 00: trace id, parent span id, flags. */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const INVALID_TRACE = "0".repeat(32);
const INVALID_SPAN = "0".repeat(16);

const KINDS = {
  server: SpanKind.SERVER,
  client: SpanKind.CLIENT,
  internal: SpanKind.INTERNAL,
} as const;

/** The span a W3C `traceparent` names, when it is a valid one (else undefined: a new trace). */
function spanContextOf(traceparent: string | undefined): SpanContext | undefined {
  const match = traceparent === undefined ? null : TRACEPARENT.exec(traceparent);
  if (!match || match[1] === INVALID_TRACE || match[2] === INVALID_SPAN) return undefined;
  return {
    traceId: match[1]!,
    spanId: match[2]!,
    traceFlags: Number.parseInt(match[3]!, 16),
    isRemote: true,
  };
}

function contextOf(traceparent: string | undefined): Context {
  const parent = spanContextOf(traceparent);
  return parent ? trace.setSpanContext(ROOT_CONTEXT, parent) : ROOT_CONTEXT;
}

/**
 * Epoch milliseconds (fractions allowed) as an OpenTelemetry `HrTime`. A plain number smaller than
 * the process's time origin would be read as a `performance.now()`: a park that began before a
 * restart would move.
 */
function hrTime(epochMs: number): HrTime {
  const seconds = Math.floor(epochMs / 1000);
  const nanos = Math.min(999_999_999, Math.round((epochMs - seconds * 1000) * 1e6));
  return [seconds, nanos];
}

type Defined = Record<string, string | number | boolean | string[]>;

/** The attributes without the undefined ones (copied only when there are some). */
function clean(attributes: SpanAttributes): Defined {
  for (const key in attributes) {
    if (attributes[key] !== undefined) continue;
    const out: Defined = {};
    for (const [k, value] of Object.entries(attributes)) if (value !== undefined) out[k] = value;
    return out;
  }
  return attributes as Defined;
}

class OtelSpan implements TraceSpan {
  private parent: string | undefined;

  constructor(private readonly span: Span) {}

  get traceparent(): string {
    if (this.parent === undefined) {
      const { traceId, spanId, traceFlags } = this.span.spanContext();
      this.parent = `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, "0")}`;
    }
    return this.parent;
  }

  get traceId(): string {
    return this.span.spanContext().traceId;
  }

  setAttributes(attributes: SpanAttributes): void {
    this.span.setAttributes(clean(attributes));
  }

  end(options: { error?: string; at?: number } = {}): void {
    if (options.error !== undefined) {
      this.span.setStatus({ code: SpanStatusCode.ERROR, message: options.error });
      this.span.setAttribute("error.type", options.error);
    }
    this.span.end(options.at === undefined ? undefined : hrTime(options.at));
  }
}

/**
 * Spans through an OpenTelemetry tracer. Parents and links are given as W3C `traceparent`s, never
 * as the active context, so a span can be the child of one started on another node or before a
 * restart (its ids are stored with the reply).
 */
export class OtelTracing implements Tracing {
  readonly enabled = true;

  constructor(
    private readonly tracer: Tracer,
    private readonly ids: PresetIds,
  ) {}

  reserve(parent?: string): string {
    const within = spanContextOf(parent);
    const fresh = this.ids.fresh();
    const traceId = within?.traceId ?? fresh.traceId;
    const flags = within ? (within.traceFlags & 0xff).toString(16).padStart(2, "0") : "01";
    return `00-${traceId}-${fresh.spanId}-${flags}`;
  }

  start(name: string, options: SpanOptions = {}): TraceSpan {
    const links: Link[] = [];
    for (const parent of options.links ?? []) {
      const linked = spanContextOf(parent);
      if (linked) links.push({ context: linked });
    }
    const reserved = spanContextOf(options.reserved);
    this.ids.preset = reserved && { traceId: reserved.traceId, spanId: reserved.spanId };
    let span: Span;
    try {
      span = this.tracer.startSpan(
        name,
        {
          kind: KINDS[options.kind ?? "internal"],
          ...(options.at === undefined ? {} : { startTime: hrTime(options.at) }),
          ...(options.attributes ? { attributes: clean(options.attributes) } : {}),
          links,
        },
        contextOf(options.parent),
      );
    } finally {
      this.ids.preset = undefined;
    }
    return new OtelSpan(span);
  }
}
