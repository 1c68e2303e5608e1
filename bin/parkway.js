#!/usr/bin/env node
// The `parkway` command: runs the compiled server and tools in dist/ (`npm run build` makes them).
import process from "node:process";

try {
  await import("../dist/cli/main.js");
} catch (error) {
  const missing = new globalThis.URL("../dist/cli/main.js", import.meta.url).href;
  if (error?.code === "ERR_MODULE_NOT_FOUND" && error.url === missing) {
    process.stderr.write(
      "parkway: dist/ is missing; run `npm run build` in the package directory\n",
    );
    process.exit(1);
  }
  throw error;
}
