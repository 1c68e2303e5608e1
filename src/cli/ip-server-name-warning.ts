/**
 * Keeps Node's DEP0123 warning ("Setting the TLS ServerName to an IP address is not permitted by
 * RFC 6066") out of the command's output. grpc-js sets the TLS server name to the target's host even
 * when the target is an IP address such as 127.0.0.1; Node then sends no server name and warns once
 * per process. The certificate is still checked against the IP address, so nothing is lost; every
 * other warning is printed as before. Embedders that connect to an IP address over TLS see the
 * warning once, unless they connect by host name.
 */
export function ignoreIpServerNameWarning(): void {
  const emit = process.emitWarning.bind(process) as (...args: unknown[]) => void;
  process.emitWarning = (warning: string | Error, ...args: unknown[]) => {
    const [typeOrOptions, code] = args;
    const given =
      typeof typeOrOptions === "object" && typeOrOptions !== null
        ? (typeOrOptions as { code?: string }).code
        : code;
    if (given === "DEP0123") return;
    emit(warning, ...args);
  };
}
