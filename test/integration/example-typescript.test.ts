import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { RuleScope } from "../../src/generated/parkway/v1/permission.js";
import { type Harness, startHarness } from "../helpers/parkway-harness.js";
import { REPO_ROOT } from "../helpers/spawn-server.js";

const run = promisify(execFile);
let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("examples/typescript/approve.ts", () => {
  it("approves, answers AskUser, prints each text block on its own line and the final answer", async () => {
    h = await startHarness({
      turns: [
        {
          match: { lastUser: "set up" },
          text: "Looking around first.",
          toolCalls: [{ name: "Glob", input: { pattern: "*" } }],
        },
        {
          match: { toolName: "Glob" },
          text: "Nothing here yet.",
          toolCalls: [
            { id: "b1", name: "Bash", input: { command: "touch approved.txt && echo ok" } },
          ],
        },
        {
          match: { toolName: "Bash" },
          toolCalls: [
            {
              id: "a1",
              name: "AskUser",
              input: {
                questions: [
                  {
                    question: "Which database?",
                    header: "Database",
                    options: [
                      { label: "Postgres", description: "hosted" },
                      { label: "SQLite", description: "file" },
                    ],
                  },
                ],
              },
            },
          ],
        },
        { match: { toolName: "AskUser" }, text: "All set with Postgres." },
      ],
    });
    const { stdout } = await run(
      process.execPath,
      [
        "--import",
        "tsx",
        "examples/typescript/approve.ts",
        h.parkway.address,
        "test",
        "set up",
        "--always",
      ],
      { cwd: REPO_ROOT, timeout: 60_000 },
    );
    // Two text blocks in a row (the Glob call runs without asking) stay apart.
    expect(stdout).toContain("Looking around first.\nNothing here yet.\n[approve] Bash");
    expect(stdout).toContain('[ask] {"Which database?":"Postgres"}');
    expect(stdout).toContain("All set with Postgres.\n[final] All set with Postgres. (completed)");
    const sessions = await h.client.listSessions();
    const session = sessions.sessions[0]!;
    expect(existsSync(path.join(session.workingDirectories[0]!, "approved.txt"))).toBe(true);
    const rules = await h.client.listRules({
      sessionId: session.id,
      scope: RuleScope.RULE_SCOPE_SESSION,
    });
    expect(rules.map((r) => r.ruleContent)).toEqual(["touch approved.txt:*"]);
  });
});
