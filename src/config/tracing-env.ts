/**
 * Whether spans are exported, from the standard OpenTelemetry variables: on when
 * `OTEL_TRACES_EXPORTER` names an exporter (`otlp`, `zipkin`, `console`) and `OTEL_SDK_DISABLED` is
 * not true; off when it is unset or `none`. Everything else (endpoint, protocol, headers, sampler,
 * batching, resource) the OpenTelemetry SDK reads itself. The service name is "parkway" unless
 * `OTEL_SERVICE_NAME` (or `service.name` in `OTEL_RESOURCE_ATTRIBUTES`) names one.
 */
export function tracingFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): { serviceName?: string } | undefined {
  const exporters = (env.OTEL_TRACES_EXPORTER ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "" && s !== "none");
  if (exporters.length === 0) return undefined;
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return undefined;
  const named =
    (env.OTEL_SERVICE_NAME ?? "") !== "" ||
    /(^|,)\s*service\.name\s*=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? "");
  return named ? {} : { serviceName: "parkway" };
}
