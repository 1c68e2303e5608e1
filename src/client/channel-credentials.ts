import { type ChannelCredentials, credentials as grpcCredentials } from "@grpc/grpc-js";

/** TLS settings of a client: PEM contents, e.g. `readFileSync("ca.pem")`. */
export interface TlsOptions {
  /** CA certificate(s) the server's certificate must chain to; default: the system's roots. */
  ca?: Buffer;
  /** Client certificate (chain) for a server that requires one (mTLS); needs `key`. */
  cert?: Buffer;
  /** Private key of `cert`. */
  key?: Buffer;
}

/**
 * The channel credentials `options` ask for: `credentials` as given, TLS built from `tls`, or
 * plaintext. Throws `TypeError` naming the option when they contradict each other.
 */
export function channelCredentials(options: {
  credentials?: ChannelCredentials | undefined;
  tls?: TlsOptions | undefined;
}): ChannelCredentials {
  const { credentials, tls } = options;
  if (credentials && tls) throw new TypeError("ClientOptions: give credentials or tls, not both");
  if (credentials) return credentials;
  if (!tls) return grpcCredentials.createInsecure();
  if ((tls.cert === undefined) !== (tls.key === undefined)) {
    throw new TypeError(
      "ClientOptions.tls: cert and key go together (a client certificate and its key)",
    );
  }
  return grpcCredentials.createSsl(tls.ca ?? null, tls.key ?? null, tls.cert ?? null);
}
