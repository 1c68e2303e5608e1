import { execFile } from "node:child_process";
import { readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { summarize } from "./summarize.js";

const HEAP_DIFF = fileURLToPath(new URL("./heap-diff.ts", import.meta.url));

/**
 * After `npm run bench -- --profile`: one markdown file with a summary of every main-thread CPU
 * profile under `dir` (one folder per benchmark) and the heap growth of the idle streams.
 */
export async function writeProfileReport(dir: string, out: string, idleStreams: number) {
  const parts = [
    "# Profiles of the Parkway server",
    "",
    "Written by `npm run bench -- --profile` (V8 CPU profiles of the Parkway child process, one",
    "folder per benchmark under bench/results/tmp/profiles). Self time by area, then by function;",
    "percentages are of the busy time after start-up.",
    "",
  ];
  for (const bench of (await readdir(dir, { withFileTypes: true })).filter((d) =>
    d.isDirectory(),
  )) {
    const folder = path.join(dir, bench.name);
    const files = await readdir(folder);
    // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile: thread 0 is the main thread.
    for (const f of files.filter((f) => f.endsWith(".cpuprofile") && f.split(".")[4] === "0")) {
      parts.push(await summarize(path.join(folder, f)));
    }
    if (files.includes("before.heapsnapshot") && files.includes("after.heapsnapshot")) {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [
          "--max-old-space-size=8192",
          "--import",
          "tsx",
          HEAP_DIFF,
          path.join(folder, "before.heapsnapshot"),
          path.join(folder, "after.heapsnapshot"),
          `--per=${idleStreams}`,
        ],
        { maxBuffer: 16 * 2 ** 20 },
      );
      parts.push(stdout);
    }
  }
  await writeFile(out, parts.join("\n"));
}
