import { Counter, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { BoundCounter, BoundHistogram } from "../../../src/telemetry/bound-metrics.js";

/** The sample lines of `name` in a scrape, without HELP and TYPE. */
function samples(text: string, name: string): string[] {
  return text.split("\n").filter((line) => line.startsWith(name));
}

describe("bound metric series", () => {
  it("prints a histogram's buckets cumulatively, with +Inf, sum and count, per series", async () => {
    const registry = new Registry();
    const h = new BoundHistogram("t_seconds", "help", ["op"], [0.1, 1], registry);
    const write = h.series("write");
    write.observe(0.05);
    write.observe(0.5);
    write.observe(5);
    h.series("get").observe(0.1);
    const text = await registry.metrics();
    expect(text).toContain("# TYPE t_seconds histogram");
    expect(samples(text, "t_seconds")).toEqual([
      't_seconds_bucket{op="write",le="0.1"} 1',
      't_seconds_bucket{op="write",le="1"} 2',
      't_seconds_bucket{op="write",le="+Inf"} 3',
      't_seconds_sum{op="write"} 5.55',
      't_seconds_count{op="write"} 3',
      't_seconds_bucket{op="get",le="0.1"} 1',
      't_seconds_bucket{op="get",le="1"} 1',
      't_seconds_bucket{op="get",le="+Inf"} 1',
      't_seconds_sum{op="get"} 0.1',
      't_seconds_count{op="get"} 1',
    ]);
  });

  it("keeps one series per label values, escapes them, and prints beside prom-client's own", async () => {
    const registry = new Registry();
    new Counter({ name: "plain_total", help: "h", registers: [registry] }).inc(2);
    const c = new BoundCounter("c_total", "help", ["agent", "code"], registry);
    c.series('a"b', "OK").inc();
    c.series('a"b', "OK").inc(2);
    c.series("x", "OK").inc();
    const text = await registry.metrics();
    expect(samples(text, "c_total")).toEqual([
      'c_total{agent="a\\"b",code="OK"} 3',
      'c_total{agent="x",code="OK"} 1',
    ]);
    expect(samples(text, "plain_total")).toEqual(["plain_total 2"]);
    registry.resetMetrics();
    expect(samples(await registry.metrics(), "c_total")).toEqual([]);
  });

  it("refuses a second metric of the same name in one registry", () => {
    const registry = new Registry();
    new BoundCounter("dup_total", "help", [], registry);
    expect(() => new BoundCounter("dup_total", "help", [], registry)).toThrow(/dup_total/);
  });
});
