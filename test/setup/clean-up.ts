import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll } from "vitest";
import { ignoreIpServerNameWarning } from "../../src/cli/ip-server-name-warning.js";
import { markedProcesses } from "../helpers/marked-processes.js";

/**
 * Runs before each test file: what the file starts and makes is removed after it, also when it
 * fails. Temporary files go to a directory of the file's own (TMPDIR, which child processes
 * inherit); processes are marked with PARKWAY_TEST_FILE in their environment. After the file, a
 * marked process still running is killed and fails the file, and the directory is removed.
 */
// Tests connect over TLS to 127.0.0.1, as the command does (see the function for why it is harmless).
ignoreIpServerNameWarning();

const marker = randomUUID();
const outerTmp = process.env.TMPDIR;
const dir = mkdtempSync(path.join(tmpdir(), "pw-"));
process.env.TMPDIR = dir;
process.env.PARKWAY_TEST_FILE = marker;

afterAll(async () => {
  // A process may take a moment to go after its stop was awaited (npm's children, a detached group).
  let left = markedProcesses("PARKWAY_TEST_FILE", marker);
  for (let i = 0; i < 30 && left.length > 0; i++) {
    await sleep(100);
    left = markedProcesses("PARKWAY_TEST_FILE", marker);
  }
  const leaked = left.map((p) => `${p.pid} ${p.command}`);
  for (let i = 0; i < 50 && left.length > 0; i++) {
    for (const { pid } of left) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    await sleep(100);
    left = markedProcesses("PARKWAY_TEST_FILE", marker);
  }
  if (outerTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = outerTmp;
  delete process.env.PARKWAY_TEST_FILE;
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  } catch (err) {
    console.warn(`could not remove ${dir}: ${(err as Error).message}`);
  }
  if (leaked.length > 0) {
    throw new Error(`the test file left processes running (killed now): ${leaked.join("; ")}`);
  }
});
