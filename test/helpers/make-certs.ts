import { webcrypto } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
// @peculiar/x509 resolves its services through tsyringe, which needs the Reflect metadata polyfill
// loaded first.
import "reflect-metadata";
import * as x509 from "@peculiar/x509";

// Node's Web Crypto, typed by @types/node rather than the DOM lib this project does not load.
x509.cryptoProvider.set(webcrypto as never);

type CryptoKeyPair = webcrypto.CryptoKeyPair;

const ALG = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
const DAY_MS = 24 * 60 * 60 * 1000;

/** The PEM files written by `makeCerts`, by role. */
export interface CertFiles {
  /** A throwaway CA that signs `server` and `client`. */
  ca: string;
  /** Server certificate for localhost and 127.0.0.1 (SAN DNS and IP), signed by `ca`. */
  serverCert: string;
  serverKey: string;
  /** Client certificate (CN parkway-test-client), signed by `ca`. */
  clientCert: string;
  clientKey: string;
  /** A second CA, unrelated to `ca`. */
  otherCa: string;
  /** Client certificate signed by `otherCa`: a server trusting only `ca` must refuse it. */
  otherClientCert: string;
  otherClientKey: string;
}

interface Issued {
  cert: x509.X509Certificate;
  keys: CryptoKeyPair;
}

function generateKeys(): Promise<CryptoKeyPair> {
  return webcrypto.subtle.generateKey(ALG, true, ["sign", "verify"]);
}

function validity(): { notBefore: Date; notAfter: Date } {
  const now = Date.now();
  return { notBefore: new Date(now - DAY_MS), notAfter: new Date(now + DAY_MS) };
}

async function makeCa(name: string, serial: string): Promise<Issued> {
  const keys = await generateKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial,
    name: `CN=${name}`,
    ...validity(),
    signingAlgorithm: ALG,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign |
          x509.KeyUsageFlags.cRLSign |
          x509.KeyUsageFlags.digitalSignature,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert, keys };
}

async function issue(
  ca: Issued,
  options: { name: string; serial: string; usage: "server" | "client" },
): Promise<Issued> {
  const keys = await generateKeys();
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
    new x509.ExtendedKeyUsageExtension(
      [
        options.usage === "server"
          ? x509.ExtendedKeyUsage.serverAuth
          : x509.ExtendedKeyUsage.clientAuth,
      ],
      false,
    ),
    await x509.AuthorityKeyIdentifierExtension.create(ca.keys.publicKey),
  ];
  if (options.usage === "server") {
    extensions.push(
      new x509.SubjectAlternativeNameExtension([
        { type: "dns", value: "localhost" },
        { type: "ip", value: "127.0.0.1" },
      ]),
    );
  }
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: options.serial,
    subject: `CN=${options.name}`,
    issuer: ca.cert.subject,
    ...validity(),
    signingAlgorithm: ALG,
    publicKey: keys.publicKey,
    signingKey: ca.keys.privateKey,
    extensions,
  });
  return { cert, keys };
}

async function keyPem(keys: CryptoKeyPair): Promise<string> {
  const der = await webcrypto.subtle.exportKey("pkcs8", keys.privateKey);
  return x509.PemConverter.encode(der, "PRIVATE KEY");
}

/**
 * Generates a throwaway PKI in `dir` (created when missing): a CA, a server certificate for
 * localhost / 127.0.0.1 and a client certificate signed by it, and an unrelated second CA with a
 * client certificate of its own. ECDSA P-256 keys (PKCS#8 PEM), valid from a day ago to a day
 * ahead. Resolves with the files' absolute paths.
 */
export async function makeCerts(dir: string): Promise<CertFiles> {
  await mkdir(dir, { recursive: true });
  const ca = await makeCa("Parkway Test CA", "01");
  const server = await issue(ca, { name: "localhost", serial: "02", usage: "server" });
  const client = await issue(ca, { name: "parkway-test-client", serial: "03", usage: "client" });
  const otherCa = await makeCa("Unrelated Test CA", "11");
  const otherClient = await issue(otherCa, {
    name: "parkway-test-client",
    serial: "12",
    usage: "client",
  });

  const files: CertFiles = {
    ca: "ca.pem",
    serverCert: "server.pem",
    serverKey: "server-key.pem",
    clientCert: "client.pem",
    clientKey: "client-key.pem",
    otherCa: "other-ca.pem",
    otherClientCert: "other-client.pem",
    otherClientKey: "other-client-key.pem",
  };
  const contents: Record<keyof CertFiles, string> = {
    ca: ca.cert.toString("pem"),
    serverCert: server.cert.toString("pem"),
    serverKey: await keyPem(server.keys),
    clientCert: client.cert.toString("pem"),
    clientKey: await keyPem(client.keys),
    otherCa: otherCa.cert.toString("pem"),
    otherClientCert: otherClient.cert.toString("pem"),
    otherClientKey: await keyPem(otherClient.keys),
  };
  const root = path.resolve(dir);
  for (const key of Object.keys(files) as (keyof CertFiles)[]) {
    files[key] = path.join(root, files[key]);
    await writeFile(files[key], `${contents[key]}\n`, { mode: 0o600 });
  }
  return files;
}
