import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { mockModel } from "../../../src/cli/mock-model.js";
import { collect, userSays } from "./openai-client.js";

const MODULE = fileURLToPath(new URL("../../../src/cli/mock-model.ts", import.meta.url));
const BIN = fileURLToPath(new URL("../../../bin/parkway.js", import.meta.url));

async function scriptFile(script: unknown): Promise<string> {
  const file = path.join(await mkdtemp(path.join(tmpdir(), "parkway-mock-")), "script.json");
  await writeFile(file, JSON.stringify(script));
  return file;
}

describe("parkway mock-model", () => {
  it("logs the URL, serves the script, and exits 0 on SIGTERM", async () => {
    const file = await scriptFile({ turns: [{ text: "mocked reply" }] });
    const program = `const { mockModel } = await import(${JSON.stringify(MODULE)});
process.exitCode = await mockModel({ script: ${JSON.stringify(file)}, listen: "127.0.0.1:0" });`;
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "-e", program],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    const exited = once(child, "exit");
    try {
      const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
      const first = await lines.next();
      const listening = JSON.parse(String(first.value)) as { msg: string; url: string };
      expect(listening.msg).toBe("listening");
      expect(listening.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);

      const client = new OpenAI({ baseURL: listening.url, apiKey: "test", maxRetries: 0 });
      const chunks = await collect(
        await client.chat.completions.create({
          model: "m",
          messages: userSays("hi"),
          stream: true,
        }),
      );
      expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("mocked reply");
    } finally {
      child.kill("SIGTERM");
    }
    const [code] = (await exited) as [number | null, NodeJS.Signals | null];
    expect(code).toBe(0);
  });

  it("keeps only the latest --keep-requests request bodies, so a long load test stays bounded", async () => {
    const file = await scriptFile({ turns: [{ text: "ok", repeat: true }] });
    const child = spawn(
      process.execPath,
      [BIN, "mock-model", "--script", file, "--listen", "127.0.0.1:0", "--keep-requests", "5"],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    const exited = once(child, "exit");
    try {
      const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
      const { url } = JSON.parse(String((await lines.next()).value)) as { url: string };
      const client = new OpenAI({ baseURL: url, apiKey: "test", maxRetries: 0 });
      for (let i = 1; i <= 12; i++) {
        await client.chat.completions.create({ model: "m", messages: userSays(`message ${i}`) });
      }
      const kept = (await (
        await fetch(`${url.replace(/\/v1$/, "")}/_scripted/requests`)
      ).json()) as {
        messages: { content: string }[];
      }[];
      expect(kept.map((r) => r.messages.at(-1)?.content)).toEqual(
        [8, 9, 10, 11, 12].map((i) => `message ${i}`),
      );
    } finally {
      child.kill("SIGTERM");
    }
    await exited;
  });

  it("refuses a --keep-requests that is not a positive whole number, naming the flag", async () => {
    const file = await scriptFile({ turns: [{ text: "ok" }] });
    const child = spawn(
      process.execPath,
      [BIN, "mock-model", "--script", file, "--keep-requests", "0"],
      {
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const [code] = (await once(child, "exit")) as [number | null];
    expect(code).toBe(2);
    expect(stderr).toContain("--keep-requests must be a whole number");
  });

  it("throws one line naming the key path of a script that fails its schema", async () => {
    const file = await scriptFile({
      turns: [{ text: "a", toolCalls: [{ name: "A", inputs: {} }] }],
    });
    const error: unknown = await mockModel({ script: file }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(Error);
    const { message } = error as Error;
    expect(message).toContain("turns[0].toolCalls[0].inputs: unknown key");
    expect(message).toContain("turns[0].toolCalls[0].input:");
    expect(message).not.toContain("\n");
  });
});
