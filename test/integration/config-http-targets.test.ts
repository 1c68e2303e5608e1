import { writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runServe, tempDir } from "../helpers/spawn-server.js";

/** Runs `parkway serve` with `config` as its config file. */
async function serveWith(config: Record<string, unknown>) {
  const root = await tempDir("parkway-http-targets-");
  const file = path.join(root, "config.json");
  await writeFile(file, JSON.stringify(config));
  return runServe(["--config", file, "--listen", "127.0.0.1:0", "--data", path.join(root, "data")]);
}

describe("configured HTTP header values", () => {
  // fetch refuses these when it sends the request: every call would fail, quoting the value.
  it.each([
    ["a line break", "Bearer tok\nen"],
    ["a NUL", "Bearer tok\u0000en"],
    ["a character past U+00FF", "Bearer tökén✓"],
  ])(
    "a policy header value with %s stops the server, naming the header and not the value",
    async (_what, value) => {
      const run = await serveWith({
        agents: [
          {
            id: "ops",
            policy: { url: "http://127.0.0.1:9/decide", headers: { Authorization: value } },
          },
        ],
      });
      expect(run.code).toBe(1);
      const lines = run.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^parkway: invalid config: agents\[0\]\.policy\.headers\.Authorization \(from config file .*\): not an HTTP header value/,
      );
      expect(run.stderr).not.toContain("tok");
    },
  );

  it("an MCP server's header value with a line break stops the server, naming the header", async () => {
    const run = await serveWith({
      agents: [
        {
          id: "ops",
          mcpServers: {
            search: { url: "http://127.0.0.1:9/mcp", headers: { Authorization: "Bearer a\r\nb" } },
          },
        },
      ],
    });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toMatch(
      /^parkway: invalid config: agents\[0\]\.mcpServers\.search\.headers\.Authorization \(from config file .*\): not an HTTP header value/,
    );
  });

  it("a tenant's policy header value is checked too", async () => {
    const run = await serveWith({
      tenants: [
        {
          id: "acme",
          tokens: [{ name: "ci", sha256: "a".repeat(64) }],
          policy: { url: "http://127.0.0.1:9/decide", headers: { "X-Key": "k\r" } },
        },
      ],
    });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toMatch(
      /^parkway: invalid config: tenants\[0\]\.policy\.headers\.X-Key \(from config file .*\): not an HTTP header value/,
    );
  });

  it("a receiver whose firstRetry is longer than its maxRetryDelay stops the server, naming both", async () => {
    const run = await serveWith({
      agents: [
        {
          id: "ops",
          notifications: [
            {
              url: "http://127.0.0.1:9/hook",
              secret: "0123456789abcdef",
              firstRetry: "1h",
              maxRetryDelay: "1s",
            },
          ],
        },
      ],
    });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toMatch(
      /^parkway: invalid config: agents\[0\]\.notifications\[0\]\.firstRetry \(from config file .*\): 3600000 ms is longer than maxRetryDelay \(1000 ms, 10 minutes unless set\), which caps every wait$/,
    );
  });
});
