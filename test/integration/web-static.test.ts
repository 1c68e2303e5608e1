import { request } from "node:http";
import { mkdir, mkdtemp, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Script } from "../../src/model/scripted/index.js";
import { type Harness, startHarness } from "../helpers/parkway-harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const script: Script = { turns: [] };
const WEB = { web: { listen: "127.0.0.1:0" } };

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A raw HTTP request: the path is sent as given (no client-side normalising of `..`). */
function raw(
  url: string,
  method: string,
  rawPath: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, method, path: rawPath, headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** A console folder inside a root that also holds a secret file beside it. */
async function consoleFolder(): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), "parkway-console-"));
  const dir = path.join(root, "console");
  await mkdir(path.join(dir, "assets"), { recursive: true });
  await writeFile(path.join(root, "secret.txt"), "TOP-SECRET");
  await writeFile(path.join(dir, "index.html"), "<!doctype html><title>console</title>");
  await writeFile(path.join(dir, "assets", "app.js"), "console.log('hi');");
  await writeFile(path.join(dir, "assets", "app.css"), "body{}");
  await writeFile(path.join(dir, "assets", "logo.svg"), "<svg/>");
  await writeFile(path.join(dir, "assets", "icon.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
  await writeFile(path.join(dir, "manifest.json"), "{}");
  await symlink(path.join(root, "secret.txt"), path.join(dir, "link.txt"));
  return dir;
}

describe("the web port's other paths", () => {
  it("serves the console's files with their types, and nothing outside its folder", async () => {
    h = await startHarness(script, {}, WEB, { consoleDir: await consoleFolder() });
    const url = h.parkway.webUrl!;
    const index = await raw(url, "GET", "/");
    expect(index.status).toBe(200);
    expect(index.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(index.headers["cache-control"]).toBe("no-cache");
    expect(index.body).toContain("<title>console</title>");
    const types: Record<string, string> = {
      "/assets/app.js": "text/javascript; charset=utf-8",
      "/assets/app.css": "text/css; charset=utf-8",
      "/assets/logo.svg": "image/svg+xml",
      "/assets/icon.png": "image/png",
      "/manifest.json": "application/json",
      "/index.html": "text/html; charset=utf-8",
    };
    for (const [file, type] of Object.entries(types)) {
      const got = await raw(url, "GET", file);
      expect({ file, status: got.status, type: got.headers["content-type"] }).toEqual({
        file,
        status: 200,
        type,
      });
    }
    expect((await raw(url, "GET", "/assets/app.js")).headers["cache-control"]).toBeUndefined();
    const head = await raw(url, "HEAD", "/");
    expect([head.status, head.body]).toEqual([200, ""]);
    expect((await raw(url, "POST", "/")).status).toBe(405);
    expect((await raw(url, "GET", "/nope.js")).status).toBe(404);
    for (const escape of [
      "/../secret.txt",
      "/%2e%2e/secret.txt",
      "/..%2fsecret.txt",
      "/assets/..%2f..%2fsecret.txt",
      "/assets/%2e%2e%5c..%5csecret.txt",
      "/link.txt",
      `/${"..%2f".repeat(8)}etc/passwd`,
    ]) {
      const got = await raw(url, "GET", escape);
      expect({ escape, status: got.status }).toEqual({ escape, status: 404 });
      expect(got.body).not.toContain("TOP-SECRET");
    }
  });

  it("answers 404 saying so when the console is not built", async () => {
    const missing = path.join(tmpdir(), "parkway-no-console-here");
    h = await startHarness(script, {}, WEB, { consoleDir: missing });
    const got = await raw(h.parkway.webUrl!, "GET", "/");
    expect(got.status).toBe(404);
    expect(got.body).toMatch(/web console is not built/);
  });

  it("answers CORS preflights for the configured origins only", async () => {
    const allowed = "http://console.example:8080";
    h = await startHarness(script, {}, { web: { ...WEB.web, corsOrigins: [allowed] } });
    const url = h.parkway.webUrl!;
    const method = "/parkway.v1.AgentService/ListAgents";
    const preflight = (origin: string) =>
      raw(url, "OPTIONS", method, {
        origin,
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type,connect-protocol-version,authorization",
      });
    const ok = await preflight(allowed);
    expect(ok.status).toBe(204);
    expect(ok.headers["access-control-allow-origin"]).toBe(allowed);
    expect(String(ok.headers["access-control-allow-methods"]).split(", ")).toContain("POST");
    const headers = String(ok.headers["access-control-allow-headers"]).split(", ");
    for (const name of [
      "content-type",
      "connect-protocol-version",
      "x-grpc-web",
      "authorization",
      "traceparent",
    ]) {
      expect(headers.map((x) => x.toLowerCase())).toContain(name);
    }
    const denied = await preflight("http://evil.example");
    expect(denied.status).toBe(403);
    expect(denied.headers["access-control-allow-origin"]).toBeUndefined();
    expect(denied.headers["access-control-allow-headers"]).toBeUndefined();

    const call = (origin: string) =>
      new Promise<Answer>((resolve, reject) => {
        const { hostname, port } = new URL(url);
        const req = request(
          {
            hostname,
            port,
            method: "POST",
            path: method,
            headers: { origin, "content-type": "application/json" },
          },
          (res) => {
            res.resume();
            res.on("end", () =>
              resolve({ status: res.statusCode ?? 0, headers: res.headers, body: "" }),
            );
          },
        );
        req.on("error", reject);
        req.end("{}");
      });
    const fromAllowed = await call(allowed);
    expect(fromAllowed.status).toBe(200);
    expect(fromAllowed.headers["access-control-allow-origin"]).toBe(allowed);
    expect(String(fromAllowed.headers["access-control-expose-headers"])).toContain("Grpc-Status");
    const fromOther = await call("http://evil.example");
    expect(fromOther.status).toBe(200);
    expect(fromOther.headers["access-control-allow-origin"]).toBeUndefined();
  });

  it("sends no CORS headers when no origin is configured", async () => {
    h = await startHarness(script, {}, WEB);
    const got = await raw(h.parkway.webUrl!, "OPTIONS", "/parkway.v1.AgentService/ListAgents", {
      origin: "http://console.example:8080",
      "access-control-request-method": "POST",
    });
    expect(got.headers["access-control-allow-origin"]).toBeUndefined();
    expect(got.headers["access-control-allow-methods"]).toBeUndefined();
  });
});
