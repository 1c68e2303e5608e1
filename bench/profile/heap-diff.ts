/**
 * What grew between two V8 heap snapshots (`v8.writeHeapSnapshot`): retained-nothing self sizes
 * summed by constructor (objects), by name (closures), or by kind (strings, arrays, code), as
 * markdown. `npm run bench -- --profile` takes one before and one after the idle streams attach.
 *
 *   node --max-old-space-size=8192 --import tsx bench/profile/heap-diff.ts BEFORE AFTER [--per N]
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

/** Bytes and counts by group. */
type Sizes = Map<string, { bytes: number; count: number }>;

async function sizes(file: string): Promise<Sizes> {
  const snap = JSON.parse(await readFile(file, "utf8")) as Snapshot;
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const width = fields.length;
  const [typeAt, nameAt, sizeAt] = ["type", "name", "self_size"].map((f) => fields.indexOf(f));
  const out: Sizes = new Map();
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + typeAt!]!] ?? "?";
    const name = snap.strings[snap.nodes[i + nameAt!]!] ?? "?";
    const group =
      type === "object"
        ? name
        : type === "closure"
          ? `closure ${name || "(anonymous)"}`
          : type === "array" || type === "hidden"
            ? `(${type}) ${name}`
            : `(${type})`;
    const entry = out.get(group) ?? { bytes: 0, count: 0 };
    entry.bytes += snap.nodes[i + sizeAt!]!;
    entry.count += 1;
    out.set(group, entry);
  }
  return out;
}

/** Markdown: the groups that grew most, per `per` units (e.g. per attached stream). */
export async function heapDiff(before: string, after: string, per = 1, top = 30): Promise<string> {
  const a = await sizes(before);
  const b = await sizes(after);
  const grown = [...b.entries()]
    .map(([k, v]) => {
      const old = a.get(k) ?? { bytes: 0, count: 0 };
      return { k, bytes: v.bytes - old.bytes, count: v.count - old.count };
    })
    .sort((x, y) => y.bytes - x.bytes);
  const total = grown.reduce((s, g) => s + g.bytes, 0);
  return [
    `### Heap growth: ${path.basename(before)} → ${path.basename(after)}`,
    "",
    `${(total / 2 ** 20).toFixed(1)} MB of self size in all, ${(total / per).toFixed(0)} B per unit (${per} units).`,
    "",
    "| B per unit | objects per unit | group |",
    "|---:|---:|---|",
    ...grown
      .slice(0, top)
      .map(
        (g) =>
          `| ${(g.bytes / per).toFixed(0)} | ${(g.count / per).toFixed(1)} | ${g.k.replace(/\|/g, "\\|")} |`,
      ),
    "",
  ].join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { per: { type: "string", default: "1" }, top: { type: "string", default: "30" } },
  });
  const [before, after] = positionals;
  if (!before || !after) throw new Error("usage: heap-diff.ts BEFORE AFTER [--per N]");
  process.stdout.write(await heapDiff(before, after, Number(values.per), Number(values.top)));
}
