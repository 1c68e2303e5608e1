import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Each test file's temporary files and processes are removed after it (test/setup/clean-up.ts).
    setupFiles: ["test/setup/clean-up.ts"],
    // Servers started through bin/parkway.js run dist/: it is rebuilt when a source changed.
    globalSetup: ["test/setup/build.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Most files wait on the servers and clients they start (sockets, child processes) more than
    // they compute: two at a time even on two cores (vitest's default there is one).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    allowOnly: false,
    // Every record is validated on write, also the kinds the server writes unchecked in production.
    env: { PARKWAY_CHECK_WRITES: "1" },
  },
});
