import { readFile } from "node:fs/promises";
import path from "node:path";
import { credentials, status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createParkwayClient,
  type ParkwayClient,
  ParkwayClientError,
  type TlsOptions,
} from "../../src/client/index.js";
import { healthCheck } from "../helpers/grpc-tools.js";
import { type CertFiles, makeCerts } from "../helpers/make-certs.js";
import { runServe, type SpawnedServer, spawnServer, tempDir } from "../helpers/spawn-server.js";

type Pems = Record<keyof CertFiles, Buffer>;

let files: CertFiles;
let pem: Pems;

beforeAll(async () => {
  files = await makeCerts(await tempDir("parkway-certs-"));
  const entries = await Promise.all(
    Object.entries(files).map(
      async ([role, file]: [string, string]) => [role, await readFile(file)] as const,
    ),
  );
  pem = Object.fromEntries(entries) as Pems;
});

/** Creates a session of the default agent and returns the demo model's reply text. */
async function converse(client: ParkwayClient): Promise<string> {
  const session = await client.createSession({ agentId: "assistant" });
  const res = await client.reply({
    sessionId: session.id,
    input: { $case: "userMessage", value: { text: "hello over TLS?", content: [] } },
  });
  return (res.message?.content ?? [])
    .map((b) => (b.block?.$case === "text" ? b.block.value.text : ""))
    .join("");
}

/** The status code a client's ListAgents fails with (or "OK"). */
async function listAgentsCode(address: string, tls: TlsOptions | undefined): Promise<number> {
  const client = createParkwayClient(address, { timeoutMs: 20_000, ...(tls ? { tls } : {}) });
  try {
    await client.listAgents();
    return status.OK;
  } catch (err) {
    if (err instanceof ParkwayClientError) return err.code;
    throw err;
  } finally {
    client.close();
  }
}

describe("parkway serve with tls (flags --tls-cert, --tls-key)", () => {
  let server: SpawnedServer;

  beforeAll(async () => {
    server = await spawnServer({
      args: ["--tls-cert", files.serverCert, "--tls-key", files.serverKey],
    });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("serves a client that trusts its CA: health SERVING and a reply", async () => {
    const creds = credentials.createSsl(pem.ca);
    expect(await healthCheck(server.address, "", creds)).toBe("SERVING");
    const client = createParkwayClient(server.address, { tls: { ca: pem.ca }, timeoutMs: 20_000 });
    try {
      expect(await converse(client)).toContain("Parkway demo model");
    } finally {
      client.close();
    }
  });

  it("also takes ready-made channel credentials", async () => {
    const client = createParkwayClient(server.address, {
      credentials: credentials.createSsl(pem.ca),
      timeoutMs: 20_000,
    });
    try {
      expect((await client.listAgents()).map((a) => a.id)).toEqual(["assistant"]);
    } finally {
      client.close();
    }
  });

  it.each<[string, () => TlsOptions | undefined]>([
    ["a plaintext client", () => undefined],
    ["a client that trusts another CA", () => ({ ca: pem.otherCa })],
  ])("refuses %s with UNAVAILABLE", async (_name, tls) => {
    expect(status[await listAgentsCode(server.address, tls())]).toBe("UNAVAILABLE");
  });

  it("logs that it listens over tls", () => {
    expect(server.output.join("\n")).toMatch(/"transport":"tls".*"msg":"listening"/);
  });
});

describe("parkway serve with mTLS (PARKWAY_TLS_* environment)", () => {
  let server: SpawnedServer;

  beforeAll(async () => {
    server = await spawnServer({
      env: {
        PARKWAY_TLS_CERT: files.serverCert,
        PARKWAY_TLS_KEY: files.serverKey,
        PARKWAY_TLS_CLIENT_CA: files.ca,
      },
    });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("serves a client whose certificate its CA signed: health SERVING and a reply", async () => {
    const creds = credentials.createSsl(pem.ca, pem.clientKey, pem.clientCert);
    expect(await healthCheck(server.address, "", creds)).toBe("SERVING");
    const client = createParkwayClient(server.address, {
      tls: { ca: pem.ca, cert: pem.clientCert, key: pem.clientKey },
      timeoutMs: 20_000,
    });
    try {
      expect(await converse(client)).toContain("Parkway demo model");
    } finally {
      client.close();
    }
  });

  it.each<[string, () => TlsOptions | undefined]>([
    ["a client without a certificate", () => ({ ca: pem.ca })],
    [
      "a client whose certificate another CA signed",
      () => ({ ca: pem.ca, cert: pem.otherClientCert, key: pem.otherClientKey }),
    ],
    ["a plaintext client", () => undefined],
  ])("refuses %s with UNAVAILABLE", async (_name, tls) => {
    expect(status[await listAgentsCode(server.address, tls())]).toBe("UNAVAILABLE");
  });
});

describe("parkway serve with a bad tls configuration", () => {
  /** Runs serve with `args` and returns its only stderr line, after checking it exited with 1. */
  async function failure(args: string[]): Promise<string> {
    const dir = await tempDir();
    const run = await runServe(["--listen", "127.0.0.1:0", "--data", dir, ...args]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    const lines = run.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    return lines[0] ?? "";
  }

  it("names a certificate file that does not exist", async () => {
    const missing = path.join(path.dirname(files.ca), "missing.pem");
    expect(await failure(["--tls-cert", missing, "--tls-key", files.serverKey])).toBe(
      `parkway: invalid config: tls.cert: cannot read ${missing} (ENOENT)`,
    );
  });

  it("names a key that does not match the certificate", async () => {
    expect(await failure(["--tls-cert", files.serverCert, "--tls-key", files.clientKey])).toBe(
      `parkway: invalid config: tls.key: ${files.clientKey} does not match the certificate in ${files.serverCert}`,
    );
  });

  it("names a client CA file that holds no certificate", async () => {
    const args = ["--tls-cert", files.serverCert, "--tls-key", files.serverKey];
    expect(await failure([...args, "--tls-client-ca", files.serverKey])).toBe(
      `parkway: invalid config: tls.clientCa: ${files.serverKey} holds no PEM certificate`,
    );
  });

  it("names the key that is missing, what it goes with and where to give it", async () => {
    expect(await failure(["--tls-cert", files.serverCert])).toBe(
      "parkway: invalid config: tls.key: required with tls.cert (--tls-key, PARKWAY_TLS_KEY or tls.key in the config file)",
    );
    expect(await failure(["--tls-key", files.serverKey])).toBe(
      "parkway: invalid config: tls.cert: required with tls.key (--tls-cert, PARKWAY_TLS_CERT or tls.cert in the config file)",
    );
  });

  it("names the certificate and key that mutual TLS needs when only the client CA is given", async () => {
    expect(await failure(["--tls-client-ca", files.ca])).toBe(
      "parkway: invalid config: tls.cert: required with tls.clientCa (--tls-cert, PARKWAY_TLS_CERT or tls.cert in the config file); " +
        "tls.key: required with tls.clientCa (--tls-key, PARKWAY_TLS_KEY or tls.key in the config file)",
    );
  });
});
