import { describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/common/logger.js";
import { McpConnection } from "../../../src/tools/mcp/mcp-connection.js";
import { mcpTool, mcpToolProblem } from "../../../src/tools/mcp/mcp-tool.js";

const connection = new McpConnection({
  name: "fs",
  config: { transport: "stdio", command: "/nonexistent", args: [], env: {} },
  cwd: "/",
  env: {},
  log: silentLogger,
});

const schema = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $id: "urn:same",
  type: "object" as const,
  properties: { path: { type: "string" } },
  required: ["path"],
};

describe("an MCP tool as a Parkway tool", () => {
  it("is named mcp__<server>__<tool> and publishes the server's schema as it is", () => {
    const tool = mcpTool(connection, {
      name: "read_file",
      description: "Reads",
      inputSchema: schema,
    });
    expect(tool.name).toBe("mcp__fs__read_file");
    expect(tool.description).toBe("Reads");
    expect(tool.jsonSchema).toEqual(schema);
    expect(tool.external).toBeUndefined();
  });

  it("checks the input against the schema, naming the field (the same $id twice is fine)", () => {
    for (const name of ["a", "b"]) {
      const tool = mcpTool(connection, { name, inputSchema: schema });
      expect(tool.inputSchema.safeParse({ path: "x" }).success).toBe(true);
      const bad = tool.inputSchema.safeParse({ path: 1 });
      expect(bad.success).toBe(false);
      expect(bad.error?.issues[0]?.message).toBe(".path must be string");
      expect(tool.inputSchema.safeParse({}).error?.issues[0]?.message).toBe(
        ".path must have required property 'path'",
      );
    }
  });

  it.each([
    [{ readOnlyHint: true }, true],
    [{ readOnlyHint: true, destructiveHint: false }, true],
    [{ readOnlyHint: true, destructiveHint: true }, false],
    [{ readOnlyHint: false }, false],
    [{ destructiveHint: false }, false],
    [undefined, false],
  ])("annotations %j → read-only and concurrency-safe: %s", (annotations, expected) => {
    const tool = mcpTool(connection, {
      name: "t",
      inputSchema: { type: "object" },
      ...(annotations ? { annotations } : {}),
    });
    expect(tool.isReadOnly({})).toBe(expected);
    expect(tool.isConcurrencySafe({})).toBe(expected);
  });

  it("leaves out a tool whose name a model endpoint would refuse", () => {
    expect(mcpToolProblem("fs", { name: "read.file", inputSchema: { type: "object" } })).toMatch(
      /^its name mcp__fs__read\.file is not 1 to 64 letters/,
    );
    expect(mcpToolProblem("fs", { name: "x".repeat(60), inputSchema: { type: "object" } })).toMatch(
      /^its name/,
    );
    expect(mcpToolProblem("fs", { name: "ok", inputSchema: { type: "object" } })).toBeUndefined();
  });

  it("gives an error result naming the server when it cannot be reached", async () => {
    const tool = mcpTool(connection, { name: "read_file", inputSchema: schema });
    const result = await tool.run(
      { path: "x" },
      {
        signal: new AbortController().signal,
        workingDirectories: ["/"],
        emitText: () => {},
        maxOutputBytes: 10_000,
      },
    );
    expect(result.state).toBe("error");
    expect(result.output).toMatch(/^MCP server fs is not available: .*ENOENT/);
    await connection.close();
  });
});
