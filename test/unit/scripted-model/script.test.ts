import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  DEMO_SCRIPT_PATH,
  ScriptError,
  type ScriptedModelServer,
  loadScript,
  parseScript,
  startScriptedModel,
} from "../../../src/model/scripted/index.js";
import { clientFor, collect, userSays } from "./openai-client.js";

let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function tempFile(name: string, text: string): Promise<string> {
  const file = path.join(await mkdtemp(path.join(tmpdir(), "parkway-script-")), name);
  await writeFile(file, text);
  return file;
}

describe("scripted model: script files", () => {
  it.each([
    [{ turns: [{ txt: "hi" }] }, "turns[0].txt: unknown key"],
    [{ turns: [], defaults: { chunksize: 3 } }, "defaults.chunksize: unknown key"],
    [
      { turns: [{ toolCalls: [{ nmae: "Read", input: {} }] }] },
      "turns[0].toolCalls[0].nmae: unknown key",
    ],
    [{ turns: [{ match: { user: "x" } }] }, "turns[0].match.user: unknown key"],
    [{ turns: [{ fail: { status: 500, tmes: 2 } }] }, "turns[0].fail.tmes: unknown key"],
    [
      { turns: [{ toolCalls: [{ name: "A", input: [1] }] }] },
      "turns[0].toolCalls[0].input: expected a JSON object",
    ],
    [
      { turns: [{ match: { lastUser: "(" } }] },
      "turns[0].match.lastUser: invalid regular expression",
    ],
    [{ turns: [{ fail: { status: 500, stall: true } }] }, "turns[0].fail: expected exactly one of"],
    [{ turns: [{ chunkSize: 0 }] }, "turns[0].chunkSize:"],
    [{}, "turns:"],
  ])("rejects %j naming the key path", (input, expected) => {
    expect(() => parseScript(input)).toThrow(ScriptError);
    expect(() => parseScript(input)).toThrow(expected);
  });

  it("names the file and the key path in one line", async () => {
    const file = await tempFile("bad.json", JSON.stringify({ turns: [{ text: "a", extra: 1 }] }));
    await expect(startScriptedModel({ script: file })).rejects.toThrow(
      `invalid script ${file}: turns[0].extra: unknown key`,
    );
    const broken = await tempFile("broken.json", "{ turns: ");
    const error: unknown = await loadScript(broken).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ScriptError);
    expect((error as ScriptError).message).toMatch(
      new RegExp(`^script ${broken} is not valid JSON: [^\\n]+$`),
    );
    await expect(loadScript("/nonexistent/script.json")).rejects.toThrow(
      "cannot read script /nonexistent/script.json",
    );
  });

  it("loads a script from a file", async () => {
    const file = await tempFile("ok.json", JSON.stringify({ turns: [{ text: "from a file" }] }));
    server = await startScriptedModel({ script: file });
    const chunks = await collect(
      await clientFor(server).chat.completions.create({
        model: "m",
        messages: userSays("hi"),
        stream: true,
      }),
    );
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("from a file");
  });

  it("ships a demo script whose turns all repeat: a question gets the introduction, anything else starts the tour", async () => {
    const demo = await loadScript(DEMO_SCRIPT_PATH);
    expect(demo.turns.every((t) => t.repeat === true && t.match !== undefined)).toBe(true);
    server = await startScriptedModel({ script: { ...demo, defaults: { delayMs: 0 } } });
    const client = clientFor(server);
    for (const text of ["hello?", "what can you do?"]) {
      const chunks = await collect(
        await client.chat.completions.create({
          model: "m",
          messages: userSays(text),
          stream: true,
        }),
      );
      expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toContain(
        "Parkway demo model",
      );
      expect(chunks.some((c) => c.choices[0]?.delta.tool_calls)).toBe(false);
      expect(chunks.at(-1)?.model).toBe("parkway-demo");
    }
    const tour = await collect(
      await client.chat.completions.create({ model: "m", messages: userSays("go"), stream: true }),
    );
    const args = tour
      .flatMap((c) => c.choices[0]?.delta.tool_calls ?? [])
      .map((t) => t.function?.arguments ?? "")
      .join("");
    expect(JSON.parse(args)).toEqual({ command: "touch hello-parkway.txt && echo created" });
  });
});

describe("the README's example script", () => {
  it("is a valid script", async () => {
    const readme = await readFile(new URL("../../../README.md", import.meta.url), "utf8");
    const example = /```json\n(\{\n {2}"turns"[\s\S]*?)```/.exec(readme)?.[1];
    expect(example, "README shows a script").toBeDefined();
    const script = parseScript(JSON.parse(example!), "README example");
    expect(script.turns).toHaveLength(3);
  });
});
