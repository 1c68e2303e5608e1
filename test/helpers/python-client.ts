import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { REPO_ROOT } from "./spawn-server.js";

const run = promisify(execFile);

/**
 * The interpreter of the repository's venv (.venv) with the Python client's dependencies, made by
 * scripts/py-venv.sh when it is missing or lacks them, and the environment that makes it import
 * the client from clients/python/src (this checkout's code, not an installed copy).
 */
export async function pythonClient(): Promise<{ python: string; env: NodeJS.ProcessEnv }> {
  let python = path.join(REPO_ROOT, ".venv/bin/python");
  const ready =
    existsSync(python) &&
    (await run(python, ["-c", "import grpc, google.protobuf, grpc_status"]).then(
      () => true,
      () => false,
    ));
  if (!ready) {
    const { stdout } = await run("bash", [path.join(REPO_ROOT, "scripts/py-venv.sh")], {
      timeout: 300_000,
    });
    python = stdout.trim();
  }
  const src = path.join(REPO_ROOT, "clients/python/src");
  const inherited = process.env.PYTHONPATH;
  return {
    python,
    env: { ...process.env, PYTHONPATH: inherited ? `${src}${path.delimiter}${inherited}` : src },
  };
}
