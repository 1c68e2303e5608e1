import type { Metric, Registry } from "prom-client";

/** A series' labels, as the registry prints them. */
type Labels = Record<string, string>;

/** One value of a metric, as prom-client's registry reads it from `get()`. */
interface Exported {
  labels: Labels;
  value: number;
  metricName?: string;
}

/**
 * A counter or histogram whose series are looked up once and then updated with no label handling:
 * an update is an addition (and, for a histogram, a bucket found by a short loop). prom-client
 * validates and hashes the labels on every `inc` and `observe`, a few microseconds each, which
 * counted on a reply's path; its registry still prints these, next to its own metrics, through
 * the `get()` that every metric of it has.
 */
abstract class BoundFamily<S extends { labels: Labels }> {
  private readonly all = new Map<string, S>();
  abstract readonly type: "counter" | "histogram";
  readonly aggregator = "sum";

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly string[],
    registry: Registry,
  ) {
    registry.registerMetric(this as unknown as Metric);
  }

  /** The series with these label values, in the order of the label names; made on first use. */
  series(...values: string[]): S {
    const key = values.length === 1 ? values[0]! : values.join("\u0000");
    let series = this.all.get(key);
    if (!series) {
      const labels: Labels = {};
      this.labelNames.forEach((name, i) => (labels[name] = values[i] ?? ""));
      series = this.create(labels);
      this.all.set(key, series);
    }
    return series;
  }

  protected abstract create(labels: Labels): S;
  protected abstract export(series: S, into: Exported[]): void;

  /** What the registry prints (prom-client's `Metric.get`). */
  get(): Promise<{
    name: string;
    help: string;
    type: string;
    aggregator: string;
    values: Exported[];
  }> {
    const values: Exported[] = [];
    for (const series of this.all.values()) this.export(series, values);
    const { name, help, type, aggregator } = this;
    return Promise.resolve({ name, help, type, aggregator, values });
  }

  /** Forgets every series (prom-client's `Registry.resetMetrics`). */
  reset(): void {
    this.all.clear();
  }
}

/** One counter series. */
export class CounterSeries {
  value = 0;
  constructor(readonly labels: Labels) {}
  inc(by = 1): void {
    this.value += by;
  }
}

/** A counter (`_total` in its name) with bound series. */
export class BoundCounter extends BoundFamily<CounterSeries> {
  readonly type = "counter";

  protected create(labels: Labels): CounterSeries {
    return new CounterSeries(labels);
  }

  protected export(series: CounterSeries, into: Exported[]): void {
    into.push({ labels: series.labels, value: series.value });
  }
}

/** One histogram series: a count per bucket (not cumulative), the sum and the count. */
export class HistogramSeries {
  private readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Labels,
    readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length);
  }

  observe(value: number): void {
    const { bounds } = this;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]!) {
        this.counts[i]! += 1;
        break;
      }
    }
    this.sum += value;
    this.count += 1;
  }

  /** The cumulative count at or below each bound. */
  cumulative(): number[] {
    let total = 0;
    return Array.from(this.counts, (n) => (total += n));
  }
}

/** A histogram (unit in its name) with bound series and fixed buckets. */
export class BoundHistogram extends BoundFamily<HistogramSeries> {
  readonly type = "histogram";

  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    private readonly buckets: readonly number[],
    registry: Registry,
  ) {
    super(name, help, labelNames, registry);
  }

  protected create(labels: Labels): HistogramSeries {
    return new HistogramSeries(labels, this.buckets);
  }

  protected export(series: HistogramSeries, into: Exported[]): void {
    const bucket = `${this.name}_bucket`;
    series.cumulative().forEach((value, i) => {
      into.push({
        labels: { ...series.labels, le: String(this.buckets[i]) },
        value,
        metricName: bucket,
      });
    });
    into.push({
      labels: { ...series.labels, le: "+Inf" },
      value: series.count,
      metricName: bucket,
    });
    into.push({ labels: series.labels, value: series.sum, metricName: `${this.name}_sum` });
    into.push({ labels: series.labels, value: series.count, metricName: `${this.name}_count` });
  }
}
