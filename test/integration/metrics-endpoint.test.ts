import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/common/logger.js";
import {
  createMemoryStore,
  parseConfig,
  type RunningParkway,
  startParkway,
} from "../../src/index.js";

let running: RunningParkway | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

const start = (config: Record<string, unknown>) =>
  startParkway({
    config: parseConfig({ listen: "127.0.0.1:0", ...config }),
    store: createMemoryStore(),
    log: silentLogger,
  });

describe("the metrics endpoint", () => {
  it("is off unless configured", async () => {
    running = await start({});
    expect(running.metricsUrl).toBeUndefined();
  });

  it("serves GET /metrics in the Prometheus text format, and nothing else", async () => {
    running = await start({ metrics: { listen: "127.0.0.1:0" } });
    const url = running.metricsUrl!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const ok = await fetch(url);
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-type")).toContain("text/plain; version=0.0.4");
    const text = await ok.text();
    expect(text).toContain("# TYPE parkway_parked_replies gauge");
    // The configured agent has a series from the start, at zero.
    expect(text).toContain('parkway_parked_replies{agent="assistant"} 0');
    expect(text).toContain("# TYPE process_cpu_seconds_total counter");
    expect((await fetch(url.replace("/metrics", "/other"))).status).toBe(404);
    const post = await fetch(url, { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
  });

  it("binds beyond loopback only with tenants or allowRemote, as the gRPC port", async () => {
    const refused = await start({ metrics: { listen: "0.0.0.0:0" } }).catch((e: unknown) => e);
    expect(String(refused)).toContain("metrics.listen: 0.0.0.0:0 is not a loopback address");
    running = await start({ metrics: { listen: "0.0.0.0:0" }, allowRemote: true });
    expect(running.metricsUrl).toMatch(/^http:\/\/0\.0\.0\.0:\d+\/metrics$/);
  });

  it("names the bad key when the address is not HOST:PORT", () => {
    expect(() => parseConfig({ metrics: { listen: "9464" } })).toThrow(/metrics\.listen/);
  });
});
