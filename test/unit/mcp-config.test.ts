import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.js";

const withServers = (mcpServers: unknown) =>
  parseConfig({ agents: [{ id: "a", mcpServers }] } as never).agents[0]!.mcpServers;

describe("agents[].mcpServers", () => {
  it("takes stdio servers (command, args, env) and Streamable HTTP servers (url, headers)", () => {
    expect(withServers(undefined)).toEqual({});
    expect(
      withServers({
        fs: { command: "node", args: ["server.js", "."], env: { LOG: "1" } },
        "web-1": { url: "http://127.0.0.1:3001/mcp", headers: { Authorization: "Bearer t" } },
        plain: { command: "srv" },
      }),
    ).toEqual({
      fs: { transport: "stdio", command: "node", args: ["server.js", "."], env: { LOG: "1" } },
      "web-1": {
        transport: "http",
        url: "http://127.0.0.1:3001/mcp",
        headers: { Authorization: "Bearer t" },
      },
      plain: { transport: "stdio", command: "srv", args: [], env: {} },
    });
  });

  it.each([
    [{ "bad name": { command: "x" } }, 'mcpServers.bad name: "bad name" is not a server name'],
    [{ a__b: { command: "x" } }, 'mcpServers.a__b: "a__b" contains __'],
    [{ a_: { command: "x" } }, 'mcpServers.a_: "a_" contains __ or ends with _'],
    [{ fs: {} }, "mcpServers.fs.command: is required: give command"],
    [{ fs: { command: "x", url: "http://h/" } }, "mcpServers.fs.url: give either command"],
    [{ fs: { url: "ftp://h/" } }, "mcpServers.fs.url: an http or https URL"],
    [{ fs: { url: "not a url" } }, "mcpServers.fs.url: an http or https URL"],
    [{ fs: { url: "http://h/", env: { A: "1" } } }, "mcpServers.fs.env: only for a stdio server"],
    [{ fs: { command: "x", headers: {} } }, "mcpServers.fs.headers: only for a Streamable HTTP"],
    [{ fs: { command: "x", cwd: "/" } }, "mcpServers.fs.cwd: unknown key"],
    [{ fs: { command: "" } }, "mcpServers.fs.command:"],
    [{ fs: { command: "x", args: "a b" } }, "mcpServers.fs.args:"],
    [
      { fs: { command: "x", env: { "1A": "1" } } },
      'mcpServers.fs.env.1A: "1A" is not an environment',
    ],
    [{ fs: { url: "http://h/", headers: { "a b": "1" } } }, "mcpServers.fs.headers.a b:"],
  ])("%j is refused naming the field", (servers, message) => {
    expect(() => withServers(servers)).toThrow(`invalid config: agents[0].${message}`);
  });
});
