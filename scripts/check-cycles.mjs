#!/usr/bin/env node
// Fails when the modules under src/ import each other in a cycle, counting type-only imports
// (`import type`, `export type … from`), which ESLint's import-x/no-cycle leaves out. Relative
// imports only: a package cannot be part of a cycle. Usage: node scripts/check-cycles.mjs [DIR…]
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import process from "node:process";

const roots = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ["src"];
const files = [];
const walk = (dir) => {
  for (const entry of readdirSync(dir)) {
    const file = path.join(dir, entry);
    if (statSync(file).isDirectory()) walk(file);
    else if (file.endsWith(".ts") && !file.endsWith(".d.ts")) files.push(path.resolve(file));
  }
};
for (const root of roots) walk(root);
const known = new Set(files);

// `import … from "./x.js"`, `import type …`, `export … from`, `import "./x.js"`, across lines.
const IMPORT =
  /(?:^|[;\n])\s*(?:import|export)\s+(?:type\s+)?(?:[^"';]*?\s+from\s+)?["'](\.{1,2}\/[^"']+)["']/g;
const graph = new Map(
  files.map((file) => {
    const text = readFileSync(file, "utf8");
    const deps = [...text.matchAll(IMPORT)]
      .map((m) => path.resolve(path.dirname(file), m[1].replace(/\.js$/, ".ts")))
      .filter((dep) => known.has(dep));
    return [file, [...new Set(deps)]];
  }),
);

// Tarjan's strongly connected components: every component of more than one module is a cycle.
let counter = 0;
const index = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
const cycles = [];
const visit = (v) => {
  index.set(v, counter);
  low.set(v, counter);
  counter += 1;
  stack.push(v);
  onStack.add(v);
  for (const w of graph.get(v)) {
    if (!index.has(w)) {
      visit(w);
      low.set(v, Math.min(low.get(v), low.get(w)));
    } else if (onStack.has(w)) {
      low.set(v, Math.min(low.get(v), index.get(w)));
    }
  }
  if (low.get(v) !== index.get(v)) return;
  const component = [];
  let w;
  do {
    w = stack.pop();
    onStack.delete(w);
    component.push(w);
  } while (w !== v);
  if (component.length > 1 || graph.get(v).includes(v)) cycles.push(component);
};
for (const file of files) if (!index.has(file)) visit(file);

const rel = (file) => path.relative(process.cwd(), file);
if (cycles.length > 0) {
  for (const cycle of cycles) {
    process.stderr.write(`import cycle: ${cycle.map(rel).sort().join(" ↔ ")}\n`);
  }
  process.exit(1);
}
process.stdout.write(
  `check-cycles: ${files.length} modules, no import cycle (type-only imports counted)\n`,
);
