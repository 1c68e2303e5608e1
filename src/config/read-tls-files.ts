import { createPrivateKey, type KeyObject, X509Certificate } from "node:crypto";
import { readFile } from "node:fs/promises";
import { ConfigError } from "./load-config.js";
import type { TlsConfig } from "./tls-schema.js";

/** The PEM contents behind a `tls` configuration, checked to be usable. */
export interface TlsMaterial {
  /** Server certificate chain, PEM. */
  cert: Buffer;
  /** Its private key, PEM. */
  key: Buffer;
  /** CA certificate(s), PEM, that every client certificate must be signed by (mTLS); unset = none asked for. */
  clientCa?: Buffer;
}

function fail(field: string, message: string): never {
  throw new ConfigError(`invalid config: tls.${field}: ${message}`);
}

async function read(field: string, file: string): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return fail(field, `cannot read ${file}${code ? ` (${code})` : ""}`);
  }
}

function certificate(field: string, file: string, pem: Buffer): X509Certificate {
  if (!pem.includes("-----BEGIN CERTIFICATE-----")) {
    fail(field, `${file} holds no PEM certificate`);
  }
  try {
    return new X509Certificate(pem);
  } catch (err) {
    return fail(field, `${file} holds no valid PEM certificate (${(err as Error).message})`);
  }
}

function privateKey(file: string, pem: Buffer): KeyObject {
  try {
    return createPrivateKey(pem);
  } catch {
    return fail("key", `${file} holds no unencrypted PEM private key`);
  }
}

/**
 * Reads and checks the files a `tls` configuration names: `cert` and `clientCa` must hold PEM
 * certificates, `key` an unencrypted PEM private key matching the first certificate of `cert`.
 * Throws `ConfigError` with one line naming the field and the file.
 */
export async function readTlsFiles(tls: TlsConfig): Promise<TlsMaterial> {
  const cert = await read("cert", tls.cert);
  const key = await read("key", tls.key);
  const leaf = certificate("cert", tls.cert, cert);
  if (!leaf.checkPrivateKey(privateKey(tls.key, key))) {
    fail("key", `${tls.key} does not match the certificate in ${tls.cert}`);
  }
  if (tls.clientCa === undefined) return { cert, key };
  const clientCa = await read("clientCa", tls.clientCa);
  certificate("clientCa", tls.clientCa, clientCa);
  return { cert, key, clientCa };
}
