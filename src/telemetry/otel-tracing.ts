import {
  defaultTextMapGetter,
  defaultTextMapSetter,
  type Link,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import type { SpanAttributes, SpanOptions, TraceSpan, Tracing } from "../common/telemetry.js";

const w3c = new W3CTraceContextPropagator();

const KINDS = {
  server: SpanKind.SERVER,
  client: SpanKind.CLIENT,
  internal: SpanKind.INTERNAL,
} as const;

/** The context whose parent is the span a W3C `traceparent` names (root when it names none). */
function contextOf(traceparent: string | undefined) {
  if (!traceparent) return ROOT_CONTEXT;
  return w3c.extract(ROOT_CONTEXT, { traceparent }, defaultTextMapGetter);
}

function traceparentOf(span: Span): string | undefined {
  const carrier: Record<string, string> = {};
  w3c.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, defaultTextMapSetter);
  return carrier.traceparent;
}

function clean(attributes: SpanAttributes): Record<string, string | number | boolean | string[]> {
  const out: Record<string, string | number | boolean | string[]> = {};
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) out[key] = value;
  return out;
}

class OtelSpan implements TraceSpan {
  readonly traceparent: string | undefined;
  readonly traceId: string;

  constructor(private readonly span: Span) {
    this.traceparent = traceparentOf(span);
    this.traceId = span.spanContext().traceId;
  }

  setAttributes(attributes: SpanAttributes): void {
    this.span.setAttributes(clean(attributes));
  }

  end(options: { error?: string; at?: number } = {}): void {
    if (options.error !== undefined) {
      this.span.setStatus({ code: SpanStatusCode.ERROR, message: options.error });
      this.span.setAttribute("error.type", options.error);
    }
    this.span.end(options.at);
  }
}

/**
 * Spans through an OpenTelemetry tracer. Parents and links are given as W3C `traceparent`s, never
 * as the active context, so a span can be the child of one started on another node or before a
 * restart (its ids are stored with the reply).
 */
export class OtelTracing implements Tracing {
  readonly enabled = true;

  constructor(private readonly tracer: Tracer) {}

  start(name: string, options: SpanOptions = {}): TraceSpan {
    const links: Link[] = [];
    for (const parent of options.links ?? []) {
      const linked = trace.getSpanContext(contextOf(parent));
      if (linked) links.push({ context: linked });
    }
    const span = this.tracer.startSpan(
      name,
      {
        kind: KINDS[options.kind ?? "internal"],
        ...(options.at === undefined ? {} : { startTime: options.at }),
        ...(options.attributes ? { attributes: clean(options.attributes) } : {}),
        links,
      },
      contextOf(options.parent),
    );
    return new OtelSpan(span);
  }
}
