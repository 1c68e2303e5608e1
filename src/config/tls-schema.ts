import { z } from "zod";

/** Where each `tls` key can be given, for the message naming a missing one. */
const TLS_SOURCES = {
  cert: "--tls-cert, PARKWAY_TLS_CERT or tls.cert in the config file",
  key: "--tls-key, PARKWAY_TLS_KEY or tls.key in the config file",
} as const;

/**
 * TLS for the gRPC listener: PEM files read when the server starts. With `clientCa`, clients must
 * present a certificate signed by it (mTLS); grpc-js can only require and verify client
 * certificates, not ask for them optionally, so `requireClientCert` follows `clientCa` and may be
 * written out but not contradict it.
 */
export const tlsConfigSchema = z
  .strictObject({
    /** Server certificate (chain), PEM. Required: optional here only to name what is missing. */
    cert: z.string().min(1).optional(),
    /** Private key of `cert`, PEM (unencrypted). Required, as `cert`. */
    key: z.string().min(1).optional(),
    /** CA certificate(s), PEM, that client certificates must be signed by. */
    clientCa: z.string().min(1).optional(),
    /** Refuse clients without a certificate signed by `clientCa`; true exactly when it is set. */
    requireClientCert: z.boolean().optional(),
  })
  .superRefine((tls, ctx) => {
    // A half TLS setup names what is missing, what it goes with, and where to give it.
    const given =
      tls.cert !== undefined ? "tls.cert" : tls.key !== undefined ? "tls.key" : undefined;
    const mtls = tls.clientCa !== undefined ? "tls.clientCa" : undefined;
    for (const field of ["cert", "key"] as const) {
      if (tls[field] !== undefined) continue;
      const withWhat = given ?? mtls;
      ctx.addIssue({
        code: "custom",
        path: [field],
        message: `${withWhat ? `required with ${withWhat}` : "required for TLS"} (${TLS_SOURCES[field]})`,
      });
    }
    if (tls.requireClientCert === true && tls.clientCa === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["requireClientCert"],
        message: "needs clientCa, the CA that signs the client certificates",
      });
    }
    if (tls.requireClientCert === false && tls.clientCa !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["clientCa"],
        message:
          "client certificates are verified only when required; remove clientCa or set requireClientCert to true",
      });
    }
  })
  .transform((tls) => ({
    ...tls,
    cert: tls.cert ?? "",
    key: tls.key ?? "",
    requireClientCert: tls.clientCa !== undefined,
  }));
export type TlsConfig = z.infer<typeof tlsConfigSchema>;
