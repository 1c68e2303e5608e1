// `node --import` this file to log the modules a process loads to the file named by
// PARKWAY_MODULE_LOG: every ES module as it loads (hooks.mjs), and on SIGUSR2 every CommonJS module
// loaded so far, followed by a line "--".
import { appendFileSync } from "node:fs";
import { createRequire, register } from "node:module";
import process from "node:process";
import { URL } from "node:url";

register(new URL("./hooks.mjs", import.meta.url));

const file = process.env.PARKWAY_MODULE_LOG;
const cache = createRequire(import.meta.url).cache;
process.on("SIGUSR2", () => {
  if (!file) return;
  const lines = Object.keys(cache).map((f) => `file://${f}\n`);
  appendFileSync(file, `${lines.join("")}--\n`);
});
