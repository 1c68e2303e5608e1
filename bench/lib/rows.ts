import type { Summary } from "./stats.js";

/** How a figure is shown. */
export type Unit = "us" | "per_s" | "mb" | "kb";

/** One measured figure: a latency distribution (p50 is its value) or a single number. */
export interface Figure {
  /** What was measured, e.g. "bare grpc-js bidi echo". */
  label: string;
  /** The headline number: p50 for latencies. */
  value: number;
  p50?: number;
  p99?: number;
  n?: number;
}

/** One line of the results table. */
export interface Row {
  /** Stable key, e.g. "input.reply_start". */
  id: string;
  /** What the row measures. */
  name: string;
  unit: Unit;
  parkway: Figure;
  baseline: Figure;
  /** parkway.value / baseline.value. */
  ratio: number;
  /** The target (docs/design.md §7) this row checks, when it has one. */
  target?: { text: string; met: boolean };
  /** How it was measured: sizes, repetitions, caveats. */
  note: string;
}

/** A latency figure from samples in µs. */
export function latency(label: string, s: Summary): Figure {
  return { label, value: s.p50, p50: s.p50, p99: s.p99, n: s.n };
}

/** A single-number figure. */
export function single(label: string, value: number, n?: number): Figure {
  return n === undefined ? { label, value } : { label, value, n };
}

/** A row whose target is "Parkway ≤ maxRatio × baseline" (or ≥ minRatio for throughput). */
export function row(
  fields: Omit<Row, "ratio" | "target">,
  target?: { maxRatio?: number; minRatio?: number; text: string } | { text: string; met: boolean },
): Row {
  const ratio = fields.parkway.value / fields.baseline.value;
  const out: Row = { ...fields, ratio };
  if (!target) return out;
  if ("met" in target) return { ...out, target };
  const met =
    Number.isFinite(ratio) &&
    (target.maxRatio === undefined || ratio <= target.maxRatio) &&
    (target.minRatio === undefined || ratio >= target.minRatio);
  return { ...out, target: { text: target.text, met } };
}

/** True when every number a row reports is finite (what the smoke mode checks). */
export function hasNumbers(r: Row): boolean {
  const figures = [r.parkway, r.baseline];
  return (
    Number.isFinite(r.ratio) &&
    figures.every(
      (f) =>
        Number.isFinite(f.value) &&
        (f.p50 === undefined || Number.isFinite(f.p50)) &&
        (f.p99 === undefined || Number.isFinite(f.p99)),
    )
  );
}

/** A number in the row's unit, for the table. */
export function formatValue(value: number, unit: Unit): string {
  if (!Number.isFinite(value)) return "—";
  switch (unit) {
    case "us":
      return value >= 10_000 ? `${(value / 1000).toFixed(1)} ms` : `${Math.round(value)} µs`;
    case "per_s":
      return `${Math.round(value).toLocaleString("en-US")}/s`;
    case "mb":
      return `${value.toFixed(1)} MB`;
    case "kb":
      return `${value.toFixed(1)} KB`;
  }
}

/** "p50 120 µs · p99 300 µs", or the single value, with the label. */
export function formatFigure(f: Figure, unit: Unit): string {
  const numbers =
    f.p50 !== undefined && f.p99 !== undefined
      ? `p50 ${formatValue(f.p50, unit)} · p99 ${formatValue(f.p99, unit)}`
      : formatValue(f.value, unit);
  return `${numbers}<br><sub>${f.label}${f.n ? `, n=${f.n}` : ""}</sub>`;
}
