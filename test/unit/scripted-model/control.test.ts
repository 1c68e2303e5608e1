import { afterEach, describe, expect, it } from "vitest";
import { type ScriptedModelServer, startScriptedModel } from "../../../src/model/scripted/index.js";

let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("the scripted model's control endpoints", () => {
  it("resets to a posted script and lists the requests it received", async () => {
    server = await startScriptedModel({ script: { turns: [{ text: "old" }] } });
    const base = server.url.replace(/\/v1$/, "");
    const reset = await fetch(`${base}/_scripted/reset`, {
      method: "POST",
      body: JSON.stringify({ turns: [{ text: "new turn" }] }),
    });
    expect(reset.status).toBe(200);
    const completion = await fetch(`${server.url}/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hello there" }] }),
    });
    const body = (await completion.json()) as { choices: { message: { content: string } }[] };
    expect(body.choices[0]?.message.content).toBe("new turn");
    const requests = (await (await fetch(`${base}/_scripted/requests`)).json()) as {
      messages: { content: string }[];
    }[];
    expect(requests).toHaveLength(1);
    expect(requests[0]?.messages[0]?.content).toBe("hello there");
  });

  it("refuses an invalid script with 400 naming the key", async () => {
    server = await startScriptedModel({ script: { turns: [] } });
    const base = server.url.replace(/\/v1$/, "");
    const res = await fetch(`${base}/_scripted/reset`, {
      method: "POST",
      body: JSON.stringify({ turns: [{ txt: "typo" }] }),
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify(await res.json())).toContain("txt");
  });
});

describe("{{last_user}} in a turn", () => {
  it("is replaced by the last user message, escaped inside tool inputs", async () => {
    server = await startScriptedModel({
      script: {
        turns: [
          {
            repeat: true,
            match: { lastUser: "" },
            toolCalls: [{ name: "Bash", input: { command: 'echo "{{last_user}}"' } }],
          },
        ],
      },
    });
    const res = await fetch(`${server.url}/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: 'say "hi"' }] }),
    });
    const body = (await res.json()) as {
      choices: { message: { tool_calls: { function: { arguments: string } }[] } }[];
    };
    const args = JSON.parse(body.choices[0]!.message.tool_calls[0]!.function.arguments) as {
      command: string;
    };
    expect(args.command).toBe('echo "say "hi""');
  });
});
