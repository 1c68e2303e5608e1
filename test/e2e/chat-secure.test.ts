import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/common/logger.js";
import { parseConfig } from "../../src/config/index.js";
import { startScriptedModel, type ScriptedModelServer } from "../../src/model/scripted/index.js";
import { type RunningParkway, startParkway } from "../../src/runtime/start-parkway.js";
import { type CertFiles, makeCerts } from "../helpers/make-certs.js";
import { runChat } from "../helpers/run-chat.js";

/**
 * `parkway chat` against a server with tenants and mTLS: the token comes from `--token` or
 * `PARKWAY_TOKEN`, the certificates from `--tls-ca`, `--tls-cert` and `--tls-key`; a missing token
 * or an unreadable file ends the chat with one line that says what to do.
 */

const TOKEN = "chat-secret-token";

describe("parkway chat with a token and mTLS", () => {
  let root: string;
  let certs: CertFiles;
  let model: ScriptedModelServer;
  let parkway: RunningParkway;

  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), "parkway-chat-secure-"));
    certs = await makeCerts(path.join(root, "certs"));
    model = await startScriptedModel({
      script: {
        turns: [{ match: { lastUser: "hello" }, repeat: true, text: "SECURE hello back." }],
      },
    });
    parkway = await startParkway({
      config: parseConfig({
        listen: "127.0.0.1:0",
        data: path.join(root, "data"),
        logLevel: "silent",
        model: { url: model.url, name: "scripted", maxRetries: 0 },
        agents: [{ id: "test", workingDirectories: [path.join(root, "work")] }],
        tenants: [
          {
            id: "acme",
            tokens: [{ name: "chat", sha256: createHash("sha256").update(TOKEN).digest("hex") }],
          },
        ],
        tls: { cert: certs.serverCert, key: certs.serverKey, clientCa: certs.ca },
      }),
      log: silentLogger,
    });
  });

  afterAll(async () => {
    await parkway?.close();
    await model?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  const tlsArgs = () => [
    "--tls-ca",
    certs.ca,
    "--tls-cert",
    certs.clientCert,
    "--tls-key",
    certs.clientKey,
  ];

  it("talks to the server with the token from PARKWAY_TOKEN and a client certificate", async () => {
    const run = await runChat(["--server", parkway.address, ...tlsArgs()], "hello\n", {
      PARKWAY_TOKEN: TOKEN,
    });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("SECURE hello back.");
  }, 60_000);

  it("takes the token from --token too", async () => {
    const run = await runChat(
      ["--server", parkway.address, "--token", TOKEN, ...tlsArgs()],
      "hello\n",
      { PARKWAY_TOKEN: "" },
    );
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("SECURE hello back.");
  }, 60_000);

  it("says a token is needed when none is given", async () => {
    const run = await runChat(["--server", parkway.address, ...tlsArgs()], "hello\n", {
      PARKWAY_TOKEN: "",
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `parkway: the server at ${parkway.address} wants a token: pass --token or set PARKWAY_TOKEN`,
    );
  }, 60_000);

  it("says the token was refused when a wrong one is given", async () => {
    const run = await runChat(["--server", parkway.address, ...tlsArgs()], "hello\n", {
      PARKWAY_TOKEN: "not-the-token",
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `parkway: the server at ${parkway.address} refused the token from --token or PARKWAY_TOKEN (unknown bearer token): give one of its tenants' tokens\n`,
    );
  }, 60_000);

  it("names a certificate file it cannot read, and a certificate without its key", async () => {
    const missing = path.join(root, "nope.pem");
    const unreadable = await runChat(
      ["--server", parkway.address, "--tls-ca", missing],
      "hello\n",
      { PARKWAY_TOKEN: TOKEN },
    );
    expect(unreadable.code).toBe(1);
    expect(unreadable.stderr).toBe(`parkway: --tls-ca: cannot read ${missing} (ENOENT)\n`);

    const half = await runChat(
      ["--server", parkway.address, "--tls-ca", certs.ca, "--tls-cert", certs.clientCert],
      "hello\n",
      { PARKWAY_TOKEN: TOKEN },
    );
    expect(half.code).toBe(1);
    expect(half.stderr).toBe(
      "parkway: --tls-cert and --tls-key go together (a client certificate and its key)\n",
    );
  }, 60_000);

  it("says what is wrong with TLS when the server was reached, naming the flag, without npm start", async () => {
    const env = { PARKWAY_TOKEN: TOKEN };
    const plaintext = await runChat(["--server", parkway.address], "hello\n", env);
    expect(plaintext.code).toBe(1);
    expect(plaintext.stderr).toBe(
      `parkway: the server at ${parkway.address} wants TLS and the chat spoke plaintext: pass --tls-ca FILE, the CA that signed its certificate, and --tls-cert FILE and --tls-key FILE for its mutual TLS\n`,
    );

    const noClientCert = await runChat(
      ["--server", parkway.address, "--tls-ca", certs.ca],
      "hello\n",
      env,
    );
    expect(noClientCert.code).toBe(1);
    expect(noClientCert.stderr).toMatch(
      new RegExp(
        `^parkway: the server at ${parkway.address} wants a client certificate \\(mutual TLS\\): pass --tls-cert FILE and --tls-key FILE`,
      ),
    );

    const notPem = await runChat(
      ["--server", parkway.address, "--tls-ca", certs.serverKey, ...tlsArgs().slice(2)],
      "hello\n",
      env,
    );
    expect(notPem.code).toBe(1);
    expect(notPem.stderr).toBe(`parkway: --tls-ca: ${certs.serverKey} is not a PEM certificate\n`);

    for (const run of [plaintext, noClientCert, notPem]) {
      expect(run.stderr).not.toContain("npm start");
    }
  }, 60_000);
});
