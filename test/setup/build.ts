import { execFileSync } from "node:child_process";

/**
 * The servers the tests start run `bin/parkway.js`, which runs the compiled code in dist/: build it
 * first when a source changed since the last build.
 */
export default function buildOnce(): void {
  execFileSync("bash", ["scripts/build.sh", "--if-stale"], { stdio: "inherit" });
}
