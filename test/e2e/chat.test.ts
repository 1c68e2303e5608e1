import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createInterface } from "node:readline";
import { mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createParkwayClient, type ParkwayClient } from "../../src/client/index.js";
import { parseConfig } from "../../src/config/index.js";
import { silentLogger } from "../../src/common/logger.js";
import { SessionStatus } from "../../src/generated/parkway/v1/agent_service.js";
import {
  PermissionBehavior,
  PermissionMode,
  RuleScope,
  RuleSource,
} from "../../src/generated/parkway/v1/permission.js";
import {
  type Script,
  startScriptedModel,
  type ScriptedModelServer,
} from "../../src/model/scripted/index.js";
import { type RunningParkway, startParkway } from "../../src/runtime/start-parkway.js";
import { HAS_TMUX, Tmux } from "../helpers/tmux.js";

/**
 * `parkway chat` end to end: the real command in a tmux pseudo-terminal, typed at like a person,
 * against a real server with a scripted model; every step is checked on the screen and in the
 * server's state (sessions, rules, files in the working directory, what the model received).
 */

const REPO = fileURLToPath(new URL("../..", import.meta.url));
/** A colour or style escape sequence. */
const SGR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`);
if (!HAS_TMUX) {
  console.warn("test/e2e/chat.test.ts: skipped, tmux is not installed (apt-get install tmux)");
}

const ASK_USER = {
  questions: [
    {
      question: "Which colour should the report use?",
      header: "Colour",
      options: [
        { label: "Red", description: "warm and loud" },
        { label: "Blue", description: "calm", preview: "~~ a calm blue report ~~" },
      ],
    },
  ],
};

/** A command far wider than the terminal, of words that must never be cut. */
const LONG_WORDS = Array.from({ length: 40 }, (_, i) => `word${i}-${"x".repeat(i % 7)}`).join(" ");

/** One conversation per keyword; follow-up turns are picked by the tool result they answer. */
const SCRIPT: Script = {
  defaults: { chunkSize: 12 },
  turns: [
    {
      match: { lastUser: "approve please" },
      text: "Running a command.",
      toolCalls: [{ name: "Bash", input: { command: "touch approved.txt && echo approved-ok" } }],
    },
    { match: { toolName: "Bash", lastToolResult: "approved-ok" }, text: "STEP approved done." },
    {
      match: { lastUser: "always please" },
      toolCalls: [{ name: "Write", input: { file_path: "always.txt", content: "kept\n" } }],
    },
    { match: { toolName: "Write", lastToolResult: "always\\.txt" }, text: "STEP always done." },
    {
      match: { lastUser: "write again" },
      toolCalls: [{ name: "Write", input: { file_path: "again.txt", content: "again\n" } }],
    },
    { match: { toolName: "Write", lastToolResult: "again\\.txt" }, text: "STEP again done." },
    {
      match: { lastUser: "two at once" },
      text: "Two calls at once.",
      toolCalls: [
        { name: "Deploy", input: { target: "production" } },
        { name: "Notify", input: { text: "original" } },
      ],
    },
    { match: { toolName: "Notify" }, text: "STEP both done." },
    { match: { lastUser: "ask me" }, toolCalls: [{ name: "AskUser", input: ASK_USER }] },
    { match: { toolName: "AskUser" }, text: "STEP asked done." },
    { match: { lastUser: "look it up" }, toolCalls: [{ name: "Lookup", input: { q: "parkway" } }] },
    { match: { toolName: "Lookup" }, text: "STEP lookup done." },
    {
      match: { lastUser: "talk slowly" },
      text: `STEP slow begins ${"and goes on ".repeat(40)}until the end.`,
      chunkSize: 4,
      delayMs: 100,
    },
    {
      match: { lastUser: "survive a restart" },
      toolCalls: [{ name: "Bash", input: { command: "touch restarted.txt && echo restarted-ok" } }],
    },
    { match: { toolName: "Bash", lastToolResult: "restarted-ok" }, text: "STEP restart done." },
    {
      match: { lastUser: "park elsewhere" },
      toolCalls: [{ name: "Bash", input: { command: "touch elsewhere.txt && echo elsewhere-ok" } }],
    },
    { match: { toolName: "Bash", lastToolResult: "elsewhere-ok" }, text: "STEP elsewhere done." },
    {
      match: { lastUser: "stop at the prompt" },
      toolCalls: [{ name: "Bash", input: { command: "touch never.txt && echo never-ok" } }],
    },
    {
      match: { lastUser: "long command" },
      toolCalls: [
        {
          name: "Bash",
          input: { command: `touch long.txt && echo ${LONG_WORDS} && echo long-ok` },
        },
      ],
    },
    { match: { toolName: "Bash", lastToolResult: "long-ok" }, text: "STEP long done." },
  ],
};

describe.skipIf(!HAS_TMUX)("parkway chat in a terminal", () => {
  let root: string;
  let workdir: string;
  let dataDir: string;
  let model: ScriptedModelServer;
  let parkway: RunningParkway;
  let client: ParkwayClient;
  let listen: string;
  const tmux = new Tmux();

  const config = () =>
    parseConfig({
      listen,
      data: dataDir,
      logLevel: "silent",
      model: { url: model.url, name: "scripted", maxRetries: 0 },
      agents: [
        {
          id: "test",
          workingDirectories: [workdir],
          externalTools: [
            {
              name: "Lookup",
              description: "Looks a word up in the client's index.",
              inputSchema: { type: "object", properties: { q: { type: "string" } } },
            },
            {
              name: "Deploy",
              description: "Deploys the build.",
              inputSchema: { type: "object", properties: { target: { type: "string" } } },
            },
            {
              name: "Notify",
              description: "Tells the team.",
              inputSchema: {
                type: "object",
                properties: { text: { type: "string" } },
                required: ["text"],
              },
            },
          ],
          permissions: { allow: ["Lookup"] },
        },
      ],
    });

  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), "parkway-chat-e2e-"));
    workdir = path.join(root, "work");
    dataDir = path.join(root, "data");
    model = await startScriptedModel({ script: SCRIPT });
    listen = "127.0.0.1:0";
    parkway = await startParkway({ config: config(), log: silentLogger });
    listen = parkway.address;
    client = createParkwayClient(parkway.address);
    await writeFile(
      path.join(root, "handlers.mjs"),
      [
        "export default {",
        "  Lookup: async (input) => ({ output: `found ${input.q}`, metadata: { hits: 1 } }),",
        "  Deploy: async (input) => `deployed to ${input.target}`,",
        "  Notify: async (input) => `sent: ${input.text}`,",
        "};",
        "",
      ].join("\n"),
    );
  });

  afterAll(async () => {
    tmux.kill();
    client?.close();
    await parkway?.close();
    await model?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  /** The session the chat created. */
  async function chatSession() {
    const { sessions } = await client.listSessions({ agentId: "test" });
    expect(sessions).toHaveLength(1);
    return sessions[0]!;
  }

  /** The text of the tool messages in the model's last request. */
  function lastToolMessages(): string {
    const request = model.requests.at(-1)!;
    return JSON.stringify(request.messages.filter((m) => m.role === "tool"));
  }

  it("approves, approves always, denies with a reason, edits, answers, runs handlers, interrupts, survives a restart and attaches", async () => {
    tmux.start(
      `node bin/parkway.js chat --server ${parkway.address} --agent test --external ${path.join(root, "handlers.mjs")}`,
    );
    await tmux.waitFor("parkway chat · agent test", 1, 60_000);
    const session = await chatSession();
    // The session works in a directory of its own inside the agent's; the chat shows where.
    const own = session.workingDirectories[0]!;
    expect(own).toBe(path.join(workdir, session.id));
    await tmux.waitFor(`working directory: ${own}`);

    // Approve.
    tmux.type("approve please");
    tmux.press("Enter");
    let screen = await tmux.waitFor("1-4 pick");
    expect(screen).toContain("Bash needs your approval");
    expect(screen).toContain("command: touch approved.txt && echo approved-ok");
    // The letters the README names pick the choices, and the list shows them.
    expect(screen).toContain("1. Yes [y]");
    expect(screen).toContain("y/a/n/e or 1-4 pick");
    expect(screen).toMatch(/why: .*default mode asks \(check\s+mode\.default\)/);
    expect(screen).toContain("2. Yes, and always allow Bash(touch approved.txt:*)");
    expect((await client.getSession(session.id)).status).toBe(
      SessionStatus.SESSION_STATUS_AWAITING_PERMISSION,
    );
    // Ctrl-O shows the call in full above the prompt, which stays open.
    tmux.press("C-o");
    screen = await tmux.waitFor("(no result yet)");
    expect(screen).toMatch(/⏺ Bash call_\w+\n {2}command: touch approved\.txt/);
    expect(screen).toContain("1-4 pick");
    tmux.press("y");
    screen = await tmux.waitFor("STEP approved done.");
    expect(screen).toContain("⎿ ✓ approved-ok");
    expect(existsSync(path.join(own, "approved.txt"))).toBe(true);

    // Approve always, for every session of the agent.
    tmux.type("always please");
    tmux.press("Enter");
    await tmux.waitFor("Write needs your approval");
    tmux.press("a");
    screen = await tmux.waitFor("Where should Write(");
    expect(screen).toContain("2. every session of agent test");
    tmux.press("2");
    await tmux.waitFor("STEP always done.");
    expect(await readFile(path.join(own, "always.txt"), "utf8")).toBe("kept\n");
    const accepted = async () =>
      (await client.listRules({ sessionId: session.id })).filter(
        (r) => r.source !== RuleSource.RULE_SOURCE_CONFIG,
      );
    expect(await accepted()).toEqual([
      expect.objectContaining({
        toolName: "Write",
        behavior: PermissionBehavior.PERMISSION_BEHAVIOR_ALLOW,
        scope: RuleScope.RULE_SCOPE_AGENT,
        source: RuleSource.RULE_SOURCE_CONFIRMATION,
        agentId: "test",
      }),
    ]);

    // The rule holds: the next write does not ask.
    tmux.type("write again");
    tmux.press("Enter");
    await tmux.waitFor("STEP again done.");
    expect(tmux.count("Write needs your approval")).toBe(1);
    expect(existsSync(path.join(own, "again.txt"))).toBe(true);

    // /rules lists it, /rules revoke removes it.
    tmux.type("/rules");
    tmux.press("Enter");
    screen = await tmux.waitFor("/rules revoke N removes one");
    expect(screen).toMatch(/1\. allow Lookup\s+agent · config/);
    expect(screen).toMatch(/2\. allow\s+Write\(\S*\/\*\*\)\s+agent ·\s+confirmation by anonymous/);
    tmux.type("/rules revoke 2");
    tmux.press("Enter");
    await tmux.waitFor("revoked Write(");
    expect(await accepted()).toEqual([]);

    // Two calls shown together; deny the first with a reason, edit the second (then its handler runs).
    tmux.type("two at once");
    tmux.press("Enter");
    screen = await tmux.waitFor("1-4 pick");
    expect(screen).toContain("The agent waits for 2 answers:");
    expect(screen).toContain('1. Deploy {"target":"production"} · approval');
    expect(screen).toContain('2. Notify {"text":"original"} · approval');
    expect(screen).toContain("Deploy needs your approval (1 of 2)");
    tmux.press("n");
    await tmux.waitFor("reason for the agent (optional):");
    tmux.type("not on a Friday");
    tmux.press("Enter");
    await tmux.waitFor("Notify needs your approval (2 of 2)");
    tmux.press("e");
    await tmux.waitFor('input JSON: {"text":"original"}');
    tmux.press("C-u");
    tmux.type('{"text":"edited by a person"}');
    tmux.press("Enter");
    screen = await tmux.waitFor("STEP both done.");
    expect(screen).toContain("⎿ ⊘ denied: The user denied this tool call: not on a Friday");
    expect(screen).toContain("⎿ ✓ sent: edited by a person");
    expect(lastToolMessages()).toContain("The user denied this tool call: not on a Friday");
    expect(lastToolMessages()).toContain("sent: edited by a person");
    expect(lastToolMessages()).not.toContain("deployed");

    // AskUser: a chip, descriptions, a preview, and an answer in the user's own words.
    tmux.type("ask me");
    tmux.press("Enter");
    screen = await tmux.waitFor("1-3 pick");
    expect(screen).toContain("Which colour should the report use?");
    expect(screen).toContain("1. Red — warm and loud");
    expect(screen).toContain("3. Other — type your own answer");
    tmux.press("Down");
    await tmux.waitFor("~~ a calm blue report ~~");
    // Escape puts the question off: the reply stays parked, Enter brings the question back.
    tmux.press("Escape");
    await tmux.waitFor("the reply stays parked: press enter to answer");
    tmux.type("/sessions");
    tmux.press("Enter");
    screen = await tmux.waitFor("/attach ID switches to one");
    expect(screen).toContain(`❯ ${session.id}  test  awaiting external result  1 pending`);
    tmux.press("Enter");
    await tmux.waitFor("1-3 pick");
    tmux.press("3");
    await tmux.waitFor("your answer:");
    tmux.type("purple");
    tmux.press("Enter");
    screen = await tmux.waitFor("STEP asked done.");
    expect(screen).toContain('⎿ ✓ Which colour should the report use? "purple"');
    expect(lastToolMessages()).toContain("other: purple");

    // An external tool answered by the --external handler module.
    tmux.type("look it up");
    tmux.press("Enter");
    screen = await tmux.waitFor("STEP lookup done.");
    expect(screen).toContain("Lookup runs in");
    expect(screen).toContain("⎿ ✓ found parkway");
    expect(lastToolMessages()).toContain("found parkway");
    // Ctrl-O expands the last tool call.
    await tmux.waitForPrompt();
    tmux.press("C-o");
    screen = await tmux.waitFor("  q: parkway");
    expect(screen).toMatch(/⏺ Lookup call_\w+\n {2}q: parkway\n {2}⎿ ✓\n {4}found parkway/);

    // Ctrl-C interrupts the streaming reply.
    tmux.type("talk slowly");
    tmux.press("Enter");
    await tmux.waitFor("STEP slow begins");
    tmux.press("C-c");
    screen = await tmux.waitFor("⏹ interrupted\n");
    expect(screen).not.toContain("until the end.");
    await expect
      .poll(async () => (await client.getSession(session.id)).status)
      .toBe(SessionStatus.SESSION_STATUS_IDLE);
    await sleep(3100); // past the double-press window: the next ctrl-c is a first one again

    // A server restart while a prompt waits: the chat reconnects and the prompt still answers.
    tmux.type("survive a restart");
    tmux.press("Enter");
    await tmux.waitFor("touch restarted.txt && echo restarted-ok", 2);
    await parkway.close();
    await tmux.waitFor("lost the connection; reconnecting…");
    parkway = await startParkway({ config: config(), log: silentLogger });
    client.close();
    client = createParkwayClient(parkway.address);
    await tmux.waitFor("reconnected; resuming after event");
    tmux.press("y");
    screen = await tmux.waitFor("STEP restart done.");
    expect(screen).toContain("⎿ ✓ restarted-ok");
    expect(existsSync(path.join(own, "restarted.txt"))).toBe(true);

    // A call wider than the terminal wraps at word boundaries, in the prompt and under Ctrl-O.
    tmux.type("long command");
    tmux.press("Enter");
    await tmux.waitFor("y/a/n/e or 1-4 pick");
    tmux.press("C-o");
    await tmux.waitFor("(no result yet)", 2);
    tmux.press("y");
    screen = await tmux.waitFor("STEP long done.");
    const wide = screen.split("\n").filter((l) => Array.from(l).length > 110);
    expect(wide).toEqual([]);
    for (const word of LONG_WORDS.split(" "))
      expect(screen).toMatch(new RegExp(`(^|\\s)${word}(\\s|$)`, "m"));

    // Ctrl-C at a prompt interrupts the parked reply; the prompt is not shown again.
    tmux.type("stop at the prompt");
    tmux.press("Enter");
    await tmux.waitFor("command: touch never.txt");
    await tmux.waitFor("y/a/n/e or 1-4 pick");
    tmux.press("C-c");
    await tmux.waitFor("⏹ interrupted\n", 2);
    await tmux.waitForPrompt();
    expect(tmux.count("command: touch never.txt")).toBe(1);
    expect(existsSync(path.join(own, "never.txt"))).toBe(false);
    await sleep(3100);

    // Slash commands: the mode, the sessions with their pending calls.
    tmux.type("/mode accept_edits");
    tmux.press("Enter");
    await tmux.waitFor("permission mode: accept_edits");
    expect((await client.getSession(session.id)).permissionMode).toBe(
      PermissionMode.PERMISSION_MODE_ACCEPT_EDITS,
    );
    // A reply parked by another client: /sessions counts its pending call, /attach asks for it.
    const other = await client.createSession({ agentId: "test" });
    const parked = await client.reply({
      sessionId: other.id,
      input: { $case: "userMessage", value: { text: "park elsewhere", content: [] } },
    });
    expect(parked.pendingToolCalls).toHaveLength(1);
    tmux.type("/sessions");
    tmux.press("Enter");
    screen = await tmux.waitFor("/attach ID switches to one", 2);
    expect(screen).toContain(`  ${other.id}  test  awaiting permission  1 pending`);
    expect(screen).toContain(`❯ ${session.id}  test  idle  0 pending`);
    tmux.type(`/attach ${other.id}`);
    tmux.press("Enter");
    screen = await tmux.waitFor("1-4 pick");
    expect(screen).toContain(`session ${other.id} · awaiting permission, 1 pending`);
    expect(screen).toContain("command: touch elsewhere.txt && echo elsewhere-ok");
    tmux.press("y");
    await tmux.waitFor("STEP elsewhere done.");
    expect((await client.getSession(other.id)).status).toBe(SessionStatus.SESSION_STATUS_IDLE);

    // Ctrl-C twice quits; the session stays on the server, and the hint works in a clone.
    tmux.press("C-c");
    await tmux.waitFor("press ctrl-c again to quit");
    tmux.press("C-c");
    screen = await tmux.waitFor("[exited 0]");
    expect(screen).toContain(`resume with npx parkway chat --session ${other.id}`);
    expect((await client.getSession(session.id)).status).toBe(SessionStatus.SESSION_STATUS_IDLE);
  }, 180_000);
});

/**
 * Starts `parkway serve` as `npm start` does (no model configured: the built-in demo model), in
 * `cwd`, on a free loopback port; resolves once it logs "listening".
 */
async function serveDemo(cwd: string): Promise<{ address: string; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    [path.join(REPO, "bin/parkway.js"), "serve", "--listen", "127.0.0.1:0", "--data", "data"],
    { cwd },
  );
  const output: string[] = [];
  child.stderr?.on("data", (d: Buffer) => output.push(d.toString()));
  const address = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`serve did not start:\n${output.join("")}`)),
      60_000,
    );
    createInterface({ input: child.stdout }).on("line", (line) => {
      output.push(line);
      const entry = JSON.parse(line) as { msg?: string; address?: string };
      if (entry.msg === "listening" && entry.address) {
        clearTimeout(timer);
        resolve(entry.address);
      }
    });
    child.on("exit", (code) => reject(new Error(`serve exited with ${code}:\n${output.join("")}`)));
  });
  return { address, child };
}

describe.skipIf(!HAS_TMUX)("the README's first run", () => {
  let cwd: string;
  let server: { address: string; child: ChildProcess } | undefined;
  let client: ParkwayClient | undefined;
  const tmux = new Tmux();

  beforeAll(async () => {
    cwd = await mkdtemp(path.join(tmpdir(), "parkway-first-run-"));
    server = await serveDemo(cwd);
    client = createParkwayClient(server.address);
  });

  afterAll(async () => {
    tmux.kill();
    client?.close();
    if (server && server.child.exitCode === null) {
      const exited = new Promise((resolve) => server!.child.once("exit", resolve));
      server.child.kill("SIGTERM");
      await exited;
    }
    if (cwd) await rm(cwd, { recursive: true, force: true });
  });

  it("walks through an approval, a question and an approval that keeps a rule", async () => {
    tmux.start(`node bin/parkway.js chat --server ${server!.address}`);
    await tmux.waitFor("parkway chat · agent assistant", 1, 60_000);
    const { sessions } = await client!.listSessions();
    const session = sessions[0]!;
    // The session's own directory, ./workspace/<session id>, shown at the top of the chat.
    const workspace = path.join(await realpath(path.join(cwd, "workspace")), session.id);
    expect(session.workingDirectories).toEqual([workspace]);
    await tmux.waitFor(`working directory: ${workspace}`);

    // 1. Any message that is not a question starts the demo: a command that asks first.
    tmux.type("go");
    tmux.press("Enter");
    let screen = await tmux.waitFor("1-4 pick");
    expect(screen).toContain("Bash needs your approval");
    expect(screen).toContain("command: touch hello-parkway.txt && echo created");
    expect(screen).toMatch(/default mode asks \(check\s+mode\.default\)/);
    tmux.press("y");

    // 2. A question, with a preview of each answer.
    screen = await tmux.waitFor("1-3 pick");
    expect(screen).toContain("⎿ ✓ created");
    expect(screen).toContain("What should the note in hello-parkway.md say?");
    expect(screen).toContain("1. Hello, Parkway! — a friendly greeting");
    expect(screen).toContain("3. Other — type your own answer");
    tmux.press("1");

    // 3. A write that asks; keep an "always" rule for this session.
    screen = await tmux.waitFor("Write needs your approval");
    expect(screen).toContain("file_path: hello-parkway.md");
    screen = await tmux.waitFor("y/a/n/e or 1-4 pick");
    expect(screen).toMatch(/2\. Yes, and always allow\s+Write\(/);
    tmux.press("a");
    screen = await tmux.waitFor("Where should Write(");
    expect(screen).toContain("1. this session");
    tmux.press("Enter");

    // 4. The demo concludes; the files are in ./workspace/<session id> and the rule is stored.
    await tmux.waitFor("That was every gate");
    screen = await tmux.waitForPrompt();
    expect(screen.replace(/\s+/g, " ")).toContain(
      "Done: hello-parkway.md is in this session's working directory (by default its own, ./workspace/<session id>, shown at the top of the chat).",
    );
    expect(existsSync(path.join(workspace, "hello-parkway.txt"))).toBe(true);
    expect(await readFile(path.join(workspace, "hello-parkway.md"), "utf8")).toBe(
      "# hello-parkway.md\n\nHello, Parkway!\n",
    );
    const rules = await client!.listRules({ sessionId: session.id });
    expect(rules).toEqual([
      expect.objectContaining({
        toolName: "Write",
        ruleContent: `${workspace}/**`,
        scope: RuleScope.RULE_SCOPE_SESSION,
        source: RuleSource.RULE_SOURCE_CONFIRMATION,
      }),
    ]);
    tmux.type("/rules");
    tmux.press("Enter");
    await tmux.waitFor("1. allow Write(");

    // Again: the command asks, the write does not.
    tmux.type("once more");
    tmux.press("Enter");
    await tmux.waitFor("Bash needs your approval", 2);
    tmux.press("y");
    await tmux.waitFor("1-3 pick");
    tmux.press("2");
    await tmux.waitFor("That was every gate", 2);
    await tmux.waitForPrompt();
    expect(tmux.count("Write needs your approval")).toBe(1);
    expect(await readFile(path.join(workspace, "hello-parkway.md"), "utf8")).toContain(
      "Parked, then resumed",
    );

    // A question gets the plain introduction.
    tmux.type("what is this?");
    tmux.press("Enter");
    await tmux.waitFor("Parkway demo model, a scripted stand-in that answers every question");
    await tmux.waitForPrompt();
    expect((await client!.getSession(session.id)).status).toBe(SessionStatus.SESSION_STATUS_IDLE);
    expect(tmux.screen(true)).toMatch(SGR); // a terminal gets colour
  }, 120_000);

  it("has no colour with NO_COLOR", async () => {
    const plain = new Tmux();
    try {
      plain.start(`NO_COLOR=1 node bin/parkway.js chat --server ${server!.address}`);
      await plain.waitFor("parkway chat · agent assistant", 1, 60_000);
      plain.type("go");
      plain.press("Enter");
      await plain.waitFor("1-4 pick");
      expect(plain.screen(true)).not.toMatch(SGR);
      plain.press("C-c");
      await plain.waitFor("⏹ interrupted");
    } finally {
      plain.kill();
    }
  }, 60_000);
});
