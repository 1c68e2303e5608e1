import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createParkwayClient, type ParkwayClient } from "../../src/client/index.js";
import { silentLogger } from "../../src/common/logger.js";
import { parseConfig } from "../../src/config/index.js";
import { SessionStatus } from "../../src/generated/parkway/v1/agent_service.js";
import { RuleScope } from "../../src/generated/parkway/v1/permission.js";
import {
  type Script,
  startScriptedModel,
  type ScriptedModelServer,
} from "../../src/model/scripted/index.js";
import { type RunningParkway, startParkway } from "../../src/runtime/start-parkway.js";
import { runChat } from "../helpers/run-chat.js";

/**
 * `parkway chat` with piped input and output: one line answers each prompt, the transcript is plain
 * text without a single escape code (even when the environment asks for colour), and a reply left
 * parked when the input ends is asked again by the next chat that attaches to the session.
 */

const SCRIPT: Script = {
  defaults: { chunkSize: 16 },
  turns: [
    {
      match: { lastUser: "approve please" },
      thinking: "The user wants a file.",
      text: "Running a command.",
      toolCalls: [{ name: "Bash", input: { command: "touch approved.txt && echo approved-ok" } }],
    },
    { match: { toolName: "Bash", lastToolResult: "approved-ok" }, text: "STEP approved done." },
    {
      match: { lastUser: "ask me" },
      toolCalls: [
        {
          name: "AskUser",
          input: {
            questions: [
              {
                question: "Which checks should run?",
                header: "Checks",
                multi_select: true,
                options: [
                  { label: "Lint", description: "style and bugs" },
                  { label: "Tests", description: "unit and integration" },
                ],
              },
            ],
          },
        },
      ],
    },
    { match: { toolName: "AskUser" }, text: "STEP asked done." },
    { match: { lastUser: "look it up" }, toolCalls: [{ name: "Lookup", input: { q: "parkway" } }] },
    { match: { toolName: "Lookup" }, text: "STEP lookup done." },
    {
      match: { lastUser: "park here" },
      toolCalls: [{ name: "Bash", input: { command: "touch parked.txt && echo parked-ok" } }],
    },
    { match: { toolName: "Bash", lastToolResult: "parked-ok" }, text: "STEP parked done." },
    {
      match: { lastUser: "keep a rule" },
      toolCalls: [{ name: "Bash", input: { command: "touch kept.txt && echo kept-ok" } }],
    },
    { match: { toolName: "Bash", lastToolResult: "kept-ok" }, text: "STEP kept done." },
  ],
};

describe("parkway chat with piped input and output", () => {
  let root: string;
  let workdir: string;
  let model: ScriptedModelServer;
  let parkway: RunningParkway;
  let client: ParkwayClient;

  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), "parkway-chat-piped-"));
    workdir = path.join(root, "work");
    model = await startScriptedModel({ script: SCRIPT });
    parkway = await startParkway({
      config: parseConfig({
        listen: "127.0.0.1:0",
        data: path.join(root, "data"),
        logLevel: "silent",
        model: { url: model.url, name: "scripted", maxRetries: 0 },
        agents: [
          {
            id: "test",
            workingDirectories: [workdir],
            externalTools: [{ name: "Lookup", inputSchema: { type: "object" } }],
            permissions: { allow: ["Lookup"] },
          },
        ],
      }),
      log: silentLogger,
    });
    client = createParkwayClient(parkway.address);
  });

  afterAll(async () => {
    client?.close();
    await parkway?.close();
    await model?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("answers prompts line by line, writes no escape codes, and leaves a parked reply to resume", async () => {
    const first = await runChat(
      ["--server", parkway.address, "--agent", "test"],
      ["approve please", "y", "ask me", "1,2", "look it up", "manual answer", "park here", ""].join(
        "\n",
      ),
      { FORCE_COLOR: "1", CI: "true" },
    );
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    const out = first.stdout;
    expect(out).not.toContain("\u001b");
    expect(out).toContain("❯ approve please\n");
    expect(out).toContain("✻ The user wants a file.\n");
    expect(out).toContain(
      [
        "⏸ Bash needs your approval",
        "  command: touch approved.txt && echo approved-ok",
        "  why: command may change things: touch approved.txt && echo approved-ok; default mode asks (check mode.default)",
        "  1. Yes [y]",
        "  2. Yes, and always allow Bash(touch approved.txt:*) [a]",
        "  3. No, and tell the agent why [n]",
        "  4. Edit the input, then approve [e]",
        "  choose 1-4: y",
        "  ⎿ ✓ approved-ok",
        "STEP approved done.",
      ].join("\n"),
    );
    expect(out).toContain(
      [
        "? [Checks]",
        "  Which checks should run? (choose any)",
        "  1. Lint — style and bugs",
        "  2. Tests — unit and integration",
        "  3. Other — type your own answer",
        "  choose one or more of 1-3 (e.g. 1,3): 1,2",
        "  ⎿ ✓ Which checks should run? Lint, Tests",
      ].join("\n"),
    );
    expect(out).toContain("result (start with ! to report an error): manual answer\n");
    expect(out).toContain("STEP lookup done.");
    expect(JSON.stringify(model.requests.at(-2)?.messages.at(-1))).toContain("manual answer");

    // The input ended while the last reply waited: it stays parked on the server.
    const sessionId = /session (ses_\w+)/.exec(out)?.[1] ?? "";
    expect(out).toContain(`session ${sessionId}: 1 call(s) still wait there`);
    const parked = await client.getSession(sessionId);
    // The session's files are in its own directory, which the chat names.
    const own = path.join(workdir, sessionId);
    expect(parked.workingDirectories).toEqual([own]);
    expect(out).toContain(`working directory: ${own}\n`);
    expect(existsSync(path.join(own, "approved.txt"))).toBe(true);
    expect(parked.status).toBe(SessionStatus.SESSION_STATUS_AWAITING_PERMISSION);
    expect(parked.pendingToolCalls.map((c) => c.name)).toEqual(["Bash"]);

    // A new chat on the session shows the pending prompt again and resumes the reply.
    const second = await runChat(["--server", parkway.address, "--session", sessionId], "y\n");
    expect(second.code).toBe(0);
    expect(second.stdout).not.toContain("\u001b");
    expect(second.stdout).toContain("awaiting permission, 1 pending");
    expect(second.stdout).toContain("  command: touch parked.txt && echo parked-ok");
    expect(second.stdout).toContain("  choose 1-4: y\n  ⎿ ✓ parked-ok\nSTEP parked done.");
    expect(existsSync(path.join(own, "parked.txt"))).toBe(true);
    expect((await client.getSession(sessionId)).status).toBe(SessionStatus.SESSION_STATUS_IDLE);
    expect(second.stdout).toContain(`resume with npx parkway chat --session ${sessionId}`);

    // "Yes, and always allow", then an empty line: the rule is kept in the default scope.
    const third = await runChat(
      ["--server", parkway.address, "--session", sessionId],
      ["keep a rule", "a", "", ""].join("\n"),
    );
    expect(third.code).toBe(0);
    expect(third.stdout).toContain("  choose 1-3, enter for 1: \n  ⎿ ✓ kept-ok\nSTEP kept done.");
    const rules = await client.listRules({ sessionId });
    expect(rules.filter((r) => r.toolName === "Bash").map((r) => [r.ruleContent, r.scope])).toEqual(
      [["touch kept.txt:*", RuleScope.RULE_SCOPE_SESSION]],
    );
  }, 120_000);

  it("says when an --external handler names a tool the server runs itself", async () => {
    const module = path.join(root, "handlers.mjs");
    await writeFile(
      module,
      "export default { Bash: async () => 'never', Lookup: async () => 'found' };\n",
    );
    const run = await runChat(
      ["--server", parkway.address, "--agent", "test", "--external", module],
      "",
    );
    expect(run.code).toBe(0);
    expect(run.stderr).toBe(
      `parkway: --external: the handler Bash in ${module} is not used: agent test runs Bash on the server\n`,
    );
  });
});
