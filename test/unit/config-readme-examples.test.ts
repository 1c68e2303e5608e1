/**
 * Every configuration example in the README is a configuration the server accepts as written:
 * a JSON block whose keys are all configuration keys is parsed as a config file, one whose keys
 * are all an agent's keys as an agent of one. Blocks that are neither (scripts, a policy
 * request, a notification) are not configuration.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.js";
import { agentConfigSchema } from "../../src/config/agent-schema.js";
import { configSchema } from "../../src/config/schema.js";
import { REPO_ROOT } from "../helpers/spawn-server.js";

/** The README's ```json blocks, with the line of each opening fence. */
function jsonBlocks(markdown: string): { line: number; value: unknown }[] {
  const lines = markdown.split("\n");
  const blocks: { line: number; value: unknown }[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== "```json") continue;
    let end = i + 1;
    while (end < lines.length && lines[end]!.trim() !== "```") end++;
    blocks.push({ line: i + 1, value: JSON.parse(lines.slice(i + 1, end).join("\n")) as unknown });
    i = end;
  }
  return blocks;
}

const configKeys = new Set(Object.keys(configSchema.shape));
const agentKeys = new Set(Object.keys(agentConfigSchema.shape));
const keysOf = (value: unknown): string[] =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? Object.keys(value) : [];

describe("the README's configuration examples", () => {
  it("are accepted as written", async () => {
    const readme = await readFile(path.join(REPO_ROOT, "README.md"), "utf8");
    let configs = 0;
    let agents = 0;
    for (const { line, value } of jsonBlocks(readme)) {
      const keys = keysOf(value);
      if (keys.length === 0) continue;
      if (keys.every((key) => configKeys.has(key))) {
        configs++;
        expect(() => parseConfig(value as never), `README.md:${line}`).not.toThrow();
      } else if (keys.includes("id") && keys.every((key) => agentKeys.has(key))) {
        agents++;
        expect(() => parseConfig({ agents: [value as never] }), `README.md:${line}`).not.toThrow();
      }
    }
    // The configuration section's examples: the whole file, the policy service, notifications,
    // answer links; and the MCP agent.
    expect(configs).toBeGreaterThanOrEqual(4);
    expect(agents).toBeGreaterThanOrEqual(1);
  });
});
