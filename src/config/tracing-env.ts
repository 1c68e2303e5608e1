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

const EXPORTERS = ["otlp", "zipkin", "console", "none"];
const OTLP_PROTOCOLS = ["grpc", "http/protobuf", "http/json"];

/**
 * What in the `OTEL_*` variables the OpenTelemetry SDK would pass over with no more than a
 * diagnostic nobody sees: an exporter it does not have (no spans go there), an OTLP protocol it
 * does not know (it uses http/protobuf). One line each, for the server's log at start.
 */
export function tracingEnvWarnings(env: NodeJS.ProcessEnv = process.env): string[] {
  const warnings: string[] = [];
  for (const name of (env.OTEL_TRACES_EXPORTER ?? "").split(",").map((s) => s.trim())) {
    if (name === "" || EXPORTERS.includes(name)) continue;
    warnings.push(
      `OTEL_TRACES_EXPORTER: ${JSON.stringify(name)} is not an exporter this server has (${EXPORTERS.join(", ")}); no spans go there`,
    );
  }
  // The traces' own variable wins over the general one, as the SDK reads them.
  for (const variable of ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"]) {
    const protocol = env[variable]?.trim() ?? "";
    if (protocol === "") continue;
    if (!OTLP_PROTOCOLS.includes(protocol)) {
      warnings.push(
        `${variable}: ${JSON.stringify(protocol)} is not an OTLP protocol (${OTLP_PROTOCOLS.join(", ")}); the exporter uses http/protobuf`,
      );
    }
    break;
  }
  return warnings;
}
