import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig, parseConfig, readTlsFiles } from "../../src/config/index.js";
import { type CertFiles, makeCerts } from "../helpers/make-certs.js";

describe("config", () => {
  it("defaults to loopback port 50051 and ./data", () => {
    const config = parseConfig({});
    expect(config.listen).toBe("127.0.0.1:50051");
    expect(config.data).toBe("./data");
  });

  it("takes shutdownGrace as a duration from 0 to 1h, 10s by default, and names it when invalid", async () => {
    expect(parseConfig({}).shutdownGrace).toBe(10_000);
    expect(parseConfig({ shutdownGrace: "0s" }).shutdownGrace).toBe(0);
    expect(parseConfig({ shutdownGrace: 250 }).shutdownGrace).toBe(250);
    expect((await loadConfig({}, { PARKWAY_SHUTDOWN_GRACE: "2m" })).shutdownGrace).toBe(120_000);
    for (const bad of ["soon", -1, "2h", 1.5]) {
      expect(() => parseConfig({ shutdownGrace: bad })).toThrow(/shutdownGrace: /);
    }
  });

  it("takes a PostgreSQL database from the file, PARKWAY_DATABASE_URL or --database-url; LevelDB without", async () => {
    expect(parseConfig({}).database).toEqual({ poolSize: 4, leaseTimeout: 5000 });
    const dir = await mkdtemp(path.join(tmpdir(), "parkway-config-"));
    const file = path.join(dir, "parkway.json");
    await writeFile(file, JSON.stringify({ database: { url: "postgres://file/db", poolSize: 8 } }));
    expect((await loadConfig({ config: file }, {})).database).toEqual({
      url: "postgres://file/db",
      poolSize: 8,
      leaseTimeout: 5000,
    });
    const env = { PARKWAY_DATABASE_URL: "postgresql://u:p@env:5433/db?sslmode=require" };
    expect((await loadConfig({ config: file }, env)).database.url).toBe(env.PARKWAY_DATABASE_URL);
    const flag = "postgres://flag/db";
    expect((await loadConfig({ config: file, databaseUrl: flag }, env)).database.url).toBe(flag);
  });

  it("warns that data is unused when database.url is set, naming where each came from", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "parkway-config-"));
    const file = path.join(dir, "parkway.json");
    await writeFile(file, JSON.stringify({ data: "./here" }));
    const url = "postgres://h/db";
    const cases: [Parameters<typeof loadConfig>[0], NodeJS.ProcessEnv, string, string][] = [
      [{ data: "./d", databaseUrl: url }, {}, "flag --data", "flag --database-url"],
      [
        { config: file },
        { PARKWAY_DATABASE_URL: url },
        `config file ${file}`,
        "environment variable PARKWAY_DATABASE_URL",
      ],
      [
        { databaseUrl: url },
        { PARKWAY_DATA: "/var/lib/parkway" },
        "environment variable PARKWAY_DATA",
        "flag --database-url",
      ],
    ];
    for (const [flags, env, data, from] of cases) {
      const warnings: string[] = [];
      const config = await loadConfig(flags, env, (message) => warnings.push(message));
      expect(config.database.url).toBe(url);
      expect(warnings).toEqual([
        `data (from ${data}) is unused: database.url (from ${from}) is set, so the store is PostgreSQL`,
      ]);
    }
    for (const flags of [{ data: "./d" }, { databaseUrl: url }]) {
      const warnings: string[] = [];
      await loadConfig(flags, {}, (message) => warnings.push(message));
      expect(warnings).toEqual([]);
    }
  });

  it("takes database.nodeId from the file or PARKWAY_NODE_ID, and names it when it is not a plain name", async () => {
    expect((await loadConfig({}, { PARKWAY_NODE_ID: "pod-7.parkway" })).database.nodeId).toBe(
      "pod-7.parkway",
    );
    const error = (await loadConfig({}, { PARKWAY_NODE_ID: "two words" }).catch(
      (e: unknown) => e,
    )) as Error;
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toMatch(/database\.nodeId/);
  });

  it("names database.url and where it came from when it is not a PostgreSQL URL, without echoing it", async () => {
    for (const bad of ["mysql://u:secret@host/db", "secret", "postgres://"]) {
      const error = (await loadConfig({ databaseUrl: bad }, {}).catch((e: unknown) => e)) as Error;
      expect(error).toBeInstanceOf(ConfigError);
      expect(error.message).toMatch(
        /^invalid config: database\.url \(from flag --database-url\): /,
      );
      expect(error.message).toContain("postgres://");
      expect(error.message).not.toContain("secret");
    }
    const fromEnv = (await loadConfig({}, { PARKWAY_DATABASE_URL: "http://x" }).catch(
      (e: unknown) => e,
    )) as Error;
    expect(fromEnv.message).toContain(
      "database.url (from environment variable PARKWAY_DATABASE_URL)",
    );
    expect(() => parseConfig({ database: { poolSize: 1 } })).toThrow(/database\.poolSize: /);
  });

  it("gives agents a Bash config with nothing passed through by default", () => {
    const config = parseConfig({
      agents: [{ id: "a" }, { id: "b", bash: { env: { CI: "1" }, passEnv: ["GOPATH"] } }],
    });
    expect(config.agents[0]?.bash).toEqual({ env: {}, passEnv: [], maxProcesses: 1024 });
    expect(config.agents[1]?.bash).toEqual({
      env: { CI: "1" },
      passEnv: ["GOPATH"],
      maxProcesses: 1024,
    });
  });

  it("gives each session of an agent its own working directories unless shareWorkingDirectories is set", () => {
    const config = parseConfig({
      agents: [{ id: "a" }, { id: "b", shareWorkingDirectories: true }],
    });
    expect(config.agents.map((a) => a.shareWorkingDirectories)).toEqual([false, true]);
  });

  it("refuses an agent's external tool named like a built-in tool or like another of them", () => {
    for (const name of ["Bash", "Read", "AskUser"]) {
      expect(() =>
        parseConfig({ agents: [{ id: "a", externalTools: [{ name: "ok" }, { name }] }] }),
      ).toThrow(`agents[0].externalTools[1].name: ${name} is the name of a built-in tool`);
    }
    expect(() =>
      parseConfig({ agents: [{ id: "a", externalTools: [{ name: "pick" }, { name: "pick" }] }] }),
    ).toThrow("agents[0].externalTools[1].name: duplicate external tool name pick");
    const config = parseConfig({ agents: [{ id: "a", externalTools: [{ name: "pick_file" }] }] });
    expect(config.agents[0]!.externalTools.map((t) => t.name)).toEqual(["pick_file"]);
  });

  it("pings every connection every 30 s with a 20 s timeout by default; durations as strings", () => {
    expect(parseConfig({}).keepalive).toEqual({ enabled: true, time: 30_000, timeout: 20_000 });
    expect(parseConfig({ keepalive: { time: "2m", timeout: 500 } }).keepalive).toEqual({
      enabled: true,
      time: 120_000,
      timeout: 500,
    });
    expect(parseConfig({ keepalive: { enabled: false } }).keepalive.enabled).toBe(false);
  });

  it.each([
    [{ keepalive: { time: "0s" } }, "keepalive.time: expected a duration from 100ms to 24h"],
    [{ keepalive: { time: "2d" } }, "keepalive.time: expected a duration"],
    [{ keepalive: { time: "25h" } }, "keepalive.time: expected a duration from 100ms to 24h"],
    [{ keepalive: { timeout: 50 } }, "keepalive.timeout: expected a duration from 100ms to 10m"],
    [{ keepalive: { timeout: -1 } }, "keepalive.timeout:"],
    [{ keepalive: { enabled: "yes" } }, "keepalive.enabled:"],
    [{ keepalive: { interval: "10s" } }, "keepalive.interval: unknown key"],
    [{ model: { timeout: "soon" } }, 'model.timeout: expected a duration such as "30s"'],
    [{ listen: "127.0.0.1:65536" }, "listen: invalid port 65536"],
    [{ listen: "localhost" }, "listen: expected HOST:PORT"],
    [{ listn: "127.0.0.1:1" }, "listn: unknown key"],
    [{ model: { nmae: "x" } }, "model.nmae: unknown key"],
    [{ logLevel: "loud" }, "logLevel:"],
    [{ tls: { cert: "c.pem" } }, "tls.key:"],
    [{ tls: { cert: "c.pem", key: "k.pem", ca: "x" } }, "tls.ca: unknown key"],
    [
      { tls: { cert: "c.pem", key: "k.pem", requireClientCert: true } },
      "tls.requireClientCert: needs clientCa",
    ],
    [
      { tls: { cert: "c.pem", key: "k.pem", clientCa: "ca.pem", requireClientCert: false } },
      "tls.clientCa: client certificates are verified only when required",
    ],
    [{ agents: [{ id: "a", bash: { passEnv: ["OK", "NOT-OK"] } }] }, "agents[0].bash.passEnv[1]:"],
    [{ agents: [{ id: "a", bash: { env: { "1X": "v" } } }] }, "agents[0].bash.env.1X:"],
    [{ agents: [{ id: "a", bash: { env: { X: 1 } } }] }, "agents[0].bash.env.X:"],
    [{ agents: [{ id: "a", bash: { maxProcesses: 0 } }] }, "agents[0].bash.maxProcesses:"],
    [{ agents: [{ id: "a", bash: { envs: {} } }] }, "agents[0].bash.envs: unknown key"],
    [{ limits: { streamBacklogEvents: 0 } }, "limits.streamBacklogEvents:"],
    [
      { agents: [{ id: "a", shareWorkingDirectories: "yes" }] },
      "agents[0].shareWorkingDirectories:",
    ],
    [{ agents: [{ id: "a", policy: {} }] }, "agents[0].policy.url:"],
    [
      { agents: [{ id: "a", policy: { url: "ftp://pdp/" } }] },
      "agents[0].policy.url: expected an http or https URL",
    ],
    [
      { agents: [{ id: "a", policy: { url: "http://pdp/", timeout: "5ms" } }] },
      "agents[0].policy.timeout: expected a duration from 10ms to 1m",
    ],
    [
      { agents: [{ id: "a", policy: { url: "http://pdp/", timeout: "2h" } }] },
      "agents[0].policy.timeout: expected a duration from 10ms to 1m",
    ],
    [
      { agents: [{ id: "a", policy: { url: "http://pdp/", onError: "allow" } }] },
      'agents[0].policy.onError: expected "ask" or "deny"',
    ],
    [
      { agents: [{ id: "a", policy: { url: "http://pdp/", calls: "some" } }] },
      'agents[0].policy.calls: expected "allowed" or "all"',
    ],
    [
      { agents: [{ id: "a", policy: { url: "http://pdp/", headers: { "Bad Name": "x" } } }] },
      "agents[0].policy.headers.Bad Name: not an HTTP header name",
    ],
    [
      { agents: [{ id: "a", policy: { url: "http://pdp/", headers: { Authorization: 1 } } }] },
      "agents[0].policy.headers.Authorization:",
    ],
    [
      { agents: [{ id: "a", policy: { url: "http://pdp/", onerror: "deny" } }] },
      "agents[0].policy.onerror: unknown key",
    ],
    [
      {
        tenants: [
          { id: "t", tokens: [{ name: "n", sha256: "a".repeat(64) }], policy: { url: "x" } },
        ],
      },
      "tenants[0].policy.url: expected an http or https URL",
    ],
    [
      { agents: [{ id: "a", notifications: [{ url: "ftp://x/", secret: "s".repeat(16) }] }] },
      "agents[0].notifications[0].url: expected an http:// or https:// URL",
    ],
    [
      { agents: [{ id: "a", notifications: [{ url: "http://x/", secret: "short" }] }] },
      "agents[0].notifications[0].secret: at least 16 characters",
    ],
    [
      {
        agents: [
          {
            id: "a",
            notifications: [{ url: "http://x/", secret: "s".repeat(16), events: ["reply.lost"] }],
          },
        ],
      },
      "agents[0].notifications[0].events[0]:",
    ],
    [
      {
        agents: [
          {
            id: "a",
            notifications: [
              { url: "http://x/", secret: "s".repeat(16) },
              { url: "http://x/", secret: "t".repeat(16) },
            ],
          },
        ],
      },
      "agents[0].notifications[1].url: duplicate url http://x/",
    ],
    [
      {
        tenants: [
          {
            id: "t",
            tokens: [{ name: "n", sha256: "a".repeat(64) }],
            notifications: [{ url: "http://x/", secret: "s".repeat(16), maxAttempts: 0 }],
          },
        ],
      },
      "tenants[0].notifications[0].maxAttempts:",
    ],
    [
      {
        agents: [
          {
            id: "a",
            notifications: [
              { url: "http://x/", secret: "s".repeat(16), answerLinks: { baseUrl: "http://p/" } },
            ],
          },
        ],
      },
      "agents[0].notifications[0].answerLinks: needs the web port (web.listen)",
    ],
  ])("rejects %j naming the key", (input, expected) => {
    expect(() => parseConfig(input as never)).toThrow(ConfigError);
    expect(() => parseConfig(input as never)).toThrow(expected);
  });

  it.each([
    [
      {
        agents: [
          {
            id: "a",
            notifications: [
              { url: "http://hookuser:HOOK-PASSWORD@x/hook", secret: "s".repeat(16) },
            ],
          },
        ],
      },
      "agents[0].notifications[0].url: a URL with a user name or password cannot be used",
    ],
    [
      {
        tenants: [
          {
            id: "t",
            tokens: [{ name: "n", sha256: "a".repeat(64) }],
            notifications: [{ url: "https://hookuser@x/hook", secret: "s".repeat(16) }],
          },
        ],
      },
      "tenants[0].notifications[0].url: a URL with a user name or password cannot be used",
    ],
    [
      { agents: [{ id: "a", policy: { url: "http://pdpuser:HOOK-PASSWORD@pdp/decide" } }] },
      "agents[0].policy.url: a URL with a user name or password cannot be used",
    ],
  ])(
    "refuses a receiver or policy URL with credentials, in one line without them: %j",
    (input, expected) => {
      let message = "";
      try {
        parseConfig(input);
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        message = (err as Error).message;
      }
      expect(message).toContain(expected);
      expect(message).not.toContain("HOOK-PASSWORD");
      expect(message.split("\n")).toHaveLength(1);
    },
  );

  it("takes an external policy decision point per agent and per tenant, with defaults", () => {
    const config = parseConfig({
      agents: [{ id: "a", policy: { url: "https://pdp.example.com/decide" } }],
      tenants: [
        {
          id: "t",
          tokens: [{ name: "n", sha256: "a".repeat(64) }],
          policy: {
            url: "http://127.0.0.1:8181/v1/decide",
            timeout: "500ms",
            onError: "deny",
            calls: "all",
            headers: { Authorization: "Bearer x" },
          },
        },
      ],
    });
    expect(config.agents[0]!.policy).toEqual({
      url: "https://pdp.example.com/decide",
      timeout: 2000,
      onError: "ask",
      calls: "allowed",
      headers: {},
    });
    expect(config.tenants[0]!.policy).toEqual({
      url: "http://127.0.0.1:8181/v1/decide",
      timeout: 500,
      onError: "deny",
      calls: "all",
      headers: { Authorization: "Bearer x" },
    });
    expect(parseConfig({ agents: [{ id: "b" }] }).agents[0]!.policy).toBeUndefined();
  });

  it("layers file < environment < flags", async () => {
    const config = await loadConfig(
      { listen: "127.0.0.1:7000" },
      { PARKWAY_LISTEN: "127.0.0.1:6000", PARKWAY_DATA: "/tmp/x", PARKWAY_MODEL: "m1" },
    );
    expect(config.listen).toBe("127.0.0.1:7000");
    expect(config.data).toBe("/tmp/x");
    expect(config.model.name).toBe("m1");
  });

  it("reads OPENAI_API_KEY when PARKWAY_MODEL_API_KEY is unset", async () => {
    const config = await loadConfig({}, { OPENAI_API_KEY: "sk-test" });
    expect(config.model.apiKey).toBe("sk-test");
  });

  it("names a config file that does not exist", async () => {
    await expect(loadConfig({ config: "/nonexistent/parkway.json" }, {})).rejects.toThrow(
      "cannot read config file /nonexistent/parkway.json",
    );
  });

  it("names where a bad value came from and the format it needs", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "parkway-config-"));
    const file = path.join(dir, "parkway.json");
    await writeFile(file, JSON.stringify({ model: { timeout: "5 parsecs" }, listen: "a:1" }));
    const error = (await loadConfig(
      { config: file, listen: "nowhere" },
      { PARKWAY_SHUTDOWN_GRACE: "soon", PARKWAY_MODEL_URL: "ftp://models" },
    ).catch((err: unknown) => err)) as Error;
    expect(error).toBeInstanceOf(ConfigError);
    const problems = error.message.replace(/^invalid config: /, "").split("; ");
    expect(problems).toEqual(
      expect.arrayContaining([
        'listen (from flag --listen): expected HOST:PORT, got "nowhere"',
        expect.stringMatching(
          /^shutdownGrace \(from environment variable PARKWAY_SHUTDOWN_GRACE\): expected a duration .*"30s"/,
        ),
        "model.url (from environment variable PARKWAY_MODEL_URL): expected an http or https URL such as http://127.0.0.1:8080/v1",
        expect.stringMatching(
          new RegExp(
            `^model\\.timeout \\(from config file ${file}\\): expected a duration such as "30s"`,
          ),
        ),
      ]),
    );
    expect(problems).toHaveLength(4);
    expect(error.message).not.toContain("\n");
  });

  it("turns the web port on from the file, PARKWAY_WEB_LISTEN or --web-listen; off by default", async () => {
    expect(parseConfig({}).web).toEqual({ corsOrigins: [] });
    const fromEnv = await loadConfig({}, { PARKWAY_WEB_LISTEN: "127.0.0.1:8080" });
    expect(fromEnv.web.listen).toBe("127.0.0.1:8080");
    const fromFlag = await loadConfig(
      { webListen: "[::1]:0" },
      { PARKWAY_WEB_LISTEN: "127.0.0.1:8080" },
    );
    expect(fromFlag.web.listen).toBe("[::1]:0");
    const origins = ["https://console.example.com", "http://localhost:5173", "*"];
    expect(parseConfig({ web: { corsOrigins: origins } }).web.corsOrigins).toEqual(origins);
  });

  it("names web.listen and web.corsOrigins when they are not an address and an origin", async () => {
    const error = (await loadConfig({ webListen: "8080" }, {}).catch((e: unknown) => e)) as Error;
    expect(error.message).toBe(
      'invalid config: web.listen (from flag --web-listen): expected HOST:PORT, got "8080"',
    );
    expect(() =>
      parseConfig({ web: { corsOrigins: ["https://console.example.com/app"] } }),
    ).toThrow(/^invalid config: web\.corsOrigins\[0\]: an origin such as/);
  });

  it("takes tls files from the environment and flags, flags winning", async () => {
    const config = await loadConfig(
      { tlsKey: "/flag/key.pem", tlsClientCa: "/flag/ca.pem" },
      { PARKWAY_TLS_CERT: "/env/cert.pem", PARKWAY_TLS_KEY: "/env/key.pem" },
    );
    expect(config.tls).toEqual({
      cert: "/env/cert.pem",
      key: "/flag/key.pem",
      clientCa: "/flag/ca.pem",
      requireClientCert: true,
    });
    expect(parseConfig({ tls: { cert: "c", key: "k" } }).tls?.requireClientCert).toBe(false);
    expect(parseConfig({}).tls).toBeUndefined();
  });
});

describe("readTlsFiles", () => {
  let certs: CertFiles;
  beforeAll(async () => {
    certs = await makeCerts(await mkdtemp(path.join(tmpdir(), "parkway-certs-")));
  });

  it("reads a server certificate, its key and a client CA", async () => {
    const tls = parseConfig({
      tls: { cert: certs.serverCert, key: certs.serverKey, clientCa: certs.ca },
    }).tls!;
    const material = await readTlsFiles(tls);
    expect(material.cert.toString()).toContain("BEGIN CERTIFICATE");
    expect(material.key.toString()).toContain("BEGIN PRIVATE KEY");
    expect(material.clientCa?.toString()).toContain("BEGIN CERTIFICATE");
  });

  it.each<[string, () => Record<string, string>, () => string]>([
    [
      "an unreadable certificate",
      () => ({ cert: path.dirname(certs.ca), key: certs.serverKey }),
      () => `tls.cert: cannot read ${path.dirname(certs.ca)} (EISDIR)`,
    ],
    [
      "a missing key",
      () => ({ cert: certs.serverCert, key: "/nonexistent/key.pem" }),
      () => "tls.key: cannot read /nonexistent/key.pem (ENOENT)",
    ],
    [
      "a key in place of the certificate",
      () => ({ cert: certs.serverKey, key: certs.serverKey }),
      () => `tls.cert: ${certs.serverKey} holds no PEM certificate`,
    ],
    [
      "a certificate in place of the key",
      () => ({ cert: certs.serverCert, key: certs.serverCert }),
      () => `tls.key: ${certs.serverCert} holds no unencrypted PEM private key`,
    ],
    [
      "a key of another certificate",
      () => ({ cert: certs.serverCert, key: certs.clientKey }),
      () => `tls.key: ${certs.clientKey} does not match the certificate in ${certs.serverCert}`,
    ],
    [
      "a client CA that is no certificate",
      () => ({ cert: certs.serverCert, key: certs.serverKey, clientCa: certs.serverKey }),
      () => `tls.clientCa: ${certs.serverKey} holds no PEM certificate`,
    ],
  ])("rejects %s, naming the field and the file", async (_name, tls, message) => {
    const config = parseConfig({ tls: tls() }).tls!;
    const read = readTlsFiles(config);
    await expect(read).rejects.toThrow(ConfigError);
    await expect(read).rejects.toThrow(`invalid config: ${message()}`);
  });

  it("rejects a certificate file whose PEM is corrupt", async () => {
    const file = path.join(path.dirname(certs.ca), "corrupt.pem");
    await writeFile(file, "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
    const read = readTlsFiles(parseConfig({ tls: { cert: file, key: certs.serverKey } }).tls!);
    await expect(read).rejects.toThrow(`tls.cert: ${file} holds no valid PEM certificate`);
  });
});
