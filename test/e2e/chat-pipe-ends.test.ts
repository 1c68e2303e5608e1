import { spawn } from "node:child_process";
import { once } from "node:events";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../helpers/free-port.js";
import { REPO_ROOT, type SpawnedServer, spawnServer, tempDir } from "../helpers/spawn-server.js";

let server: SpawnedServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

/** Starts `parkway chat ARGS` with its input and output piped, as a shell pipeline would. */
function startChat(args: string[]) {
  const child = spawn(process.execPath, ["bin/parkway.js", "chat", ...args], { cwd: REPO_ROOT });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = once(child, "exit").then(([code]) => code as number | null);
  /** Resolves once the output holds `text` `times` times. */
  const output = async (text: string, times = 1) => {
    while (stdout.split(text).length - 1 < times) {
      if (child.exitCode !== null) throw new Error(`chat exited:\n${stdout}\n${stderr}`);
      await new Promise((resolve) => child.stdout.once("data", resolve));
    }
  };
  return { child, exited, output, stdout: () => stdout, stderr: () => stderr };
}

describe("parkway chat when its pipes end", () => {
  it("ends quietly with exit code 0 when the reader of its output goes away (| head -1)", async () => {
    server = await spawnServer({ dataDir: await tempDir() });
    const chat = startChat(["--server", server.address]);
    chat.child.stdin.end("what?\n");
    // `head -1`: read the first line, then close the pipe while the chat still writes.
    await chat.output("\n");
    chat.child.stdout.destroy();
    expect(await chat.exited).toBe(0);
    expect(chat.stderr()).toBe("");
  });

  it("ends at the end of its input after it reconnected to a restarted server", async () => {
    const dataDir = await tempDir();
    server = await spawnServer({ dataDir });
    const address = server.address;
    const chat = startChat(["--server", address]);
    chat.child.stdin.write("/rules\n");
    await chat.output("no rules in effect");
    await server.stop();
    server = await spawnServer({ dataDir, args: ["--listen", address] });
    await chat.output("reconnected; resuming after event");
    chat.child.stdin.write("/rules\n");
    await chat.output("no rules in effect", 2);
    chat.child.stdin.end();
    expect(await chat.exited).toBe(0);
    expect(chat.stdout()).toMatch(/resume with npx parkway chat --session ses_\w+\n$/);
  }, 60_000);

  it("says how to start a server when none listens at the address, and exits 1", async () => {
    const address = `127.0.0.1:${await freePort()}`;
    const chat = startChat(["--server", address]);
    chat.child.stdin.end("hello\n");
    expect(await chat.exited).toBe(1);
    expect(chat.stderr()).toBe(
      `parkway: cannot reach a Parkway server at ${address}: start one with \`npx parkway serve\` (\`npm start\` in a checkout), or pass --server HOST:PORT\n`,
    );
  });
});
