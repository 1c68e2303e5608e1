import { trace } from "@opentelemetry/api";
import type { Logger } from "../common/logger.js";
import { noMetrics, noTracing, type Telemetry, type Tracing } from "../common/telemetry.js";
import { type MetricsServer, startMetricsServer } from "./metrics-server.js";
import { ExplicitContextManager } from "./explicit-context.js";
import { OtelTracing } from "./otel-tracing.js";
import type { PrometheusMetrics } from "./prometheus-metrics.js";

/** What to turn on. */
export interface TelemetryOptions {
  /** Serve `/metrics` on this `HOST:PORT`; unset = no metrics. */
  metricsListen?: string | undefined;
  /** Label replies and tokens by tenant. */
  tenantLabel?: boolean;
  /**
   * Trace through the OpenTelemetry SDK, configured by the standard `OTEL_*` variables (exporter,
   * endpoint, protocol, headers, sampler, batch delays, resource); unset = no tracing.
   * `serviceName` is used unless `OTEL_SERVICE_NAME` names one.
   */
  tracing?: { serviceName?: string } | undefined;
}

/** Telemetry that runs, with what it started. */
export interface RunningTelemetry {
  readonly telemetry: Telemetry;
  /** Where `/metrics` is served, when it is. */
  readonly metricsUrl: string | undefined;
  /**
   * Stops serving metrics and flushes the spans not yet exported; a failed flush is logged (a
   * warning), never thrown.
   */
  close(): Promise<void>;
}

interface SharedSdk {
  tracing: Tracing;
  users: number;
  shutdown(): Promise<void>;
}

/**
 * One OpenTelemetry SDK per process: it registers global providers, so servers started in the same
 * process (tests, an embedding application) share it; the last to close shuts it down.
 */
let sdk: Promise<SharedSdk> | undefined;

async function startSdk(serviceName: string | undefined): Promise<SharedSdk> {
  // Loaded only when tracing is on: the SDK and its exporters cost start time and memory.
  const [{ NodeSDK }, { PresetIds }] = await Promise.all([
    import("@opentelemetry/sdk-node"),
    import("./preset-ids.js"),
  ]);
  const ids = new PresetIds();
  const node = new NodeSDK({
    idGenerator: ids,
    ...(serviceName === undefined ? {} : { serviceName }),
    instrumentations: [],
    // Spans get their parents explicitly: no context is carried across every await.
    contextManager: new ExplicitContextManager(),
    // Parkway's metrics go to Prometheus, its logs to standard output: the SDK exports spans only.
    metricReaders: [],
    logRecordProcessors: [],
  });
  node.start();
  return {
    tracing: new OtelTracing(trace.getTracer("parkway"), ids),
    users: 0,
    shutdown: () => node.shutdown(),
  };
}

async function acquireSdk(serviceName: string | undefined): Promise<SharedSdk> {
  sdk ??= startSdk(serviceName);
  const shared = await sdk;
  shared.users += 1;
  return shared;
}

async function releaseSdk(shared: SharedSdk): Promise<void> {
  shared.users -= 1;
  if (shared.users > 0) return;
  sdk = undefined;
  await shared.shutdown();
}

/** Starts the metrics endpoint and the tracer that `options` ask for. */
export async function startTelemetry(
  options: TelemetryOptions,
  log: Logger,
): Promise<RunningTelemetry> {
  let metrics: PrometheusMetrics | undefined;
  let server: MetricsServer | undefined;
  if (options.metricsListen !== undefined) {
    // Loaded only when metrics are on, as the tracing SDK is.
    const { PrometheusMetrics } = await import("./prometheus-metrics.js");
    metrics = new PrometheusMetrics(options.tenantLabel ?? false);
    server = await startMetricsServer(options.metricsListen, metrics.registry, log);
  }
  let shared: SharedSdk | undefined;
  if (options.tracing) {
    try {
      shared = await acquireSdk(options.tracing.serviceName);
    } catch (err) {
      await server?.close();
      throw err;
    }
  }
  return {
    telemetry: { metrics: metrics ?? noMetrics, tracing: shared?.tracing ?? noTracing },
    metricsUrl: server?.url,
    async close() {
      await server?.close();
      // A collector out of reach loses the last spans; it does not fail the stop.
      if (shared)
        await releaseSdk(shared).catch((err: unknown) =>
          log.warn({ err }, "could not export the last spans; they are lost"),
        );
    },
  };
}
