/**
 * Every TypeScript snippet of the README runs as written against `parkway serve` with the built-in
 * demo model (what `npm start` serves with no model configured). The snippets are read from the
 * Markdown when the test runs. The only thing filled in is what a snippet leaves to the reader: the
 * server's address, written as `127.0.0.1:50051` (where `npm start` serves), becomes the address of
 * the test's server. A fenced block that is not meant to run carries `<!-- not run: why -->` on the
 * line before it; a block in a language the test neither runs nor knows to be something other than
 * a program fails the test, so none is passed over silently. The Python and Go clients' READMEs are
 * run the same way by their own test suites (clients/python/tests/test_readme.py,
 * clients/go/readme_test.go).
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createParkwayClient, FinishedReason, type ParkwayClient } from "../../src/client/index.js";
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import { REPO_ROOT } from "../helpers/spawn-server.js";

const run = promisify(execFile);

/** The address the snippets connect to: where `npm start` serves. */
const PLACEHOLDER_ADDRESS = "127.0.0.1:50051";

/** Fence languages that are not programs (commands, configuration, output): never run. */
const NOT_PROGRAMS = new Set(["sh", "json", "text"]);

/** A fenced code block of a Markdown file. */
interface Snippet {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  code: string;
  /** The reason given by a `<!-- not run: … -->` marker before the fence. */
  notRun?: string;
}

/** The fenced code blocks of a Markdown file, with the markers before them. */
function snippets(file: string, markdown: string): Snippet[] {
  const lines = markdown.split("\n");
  const found: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)/.exec(lines[i]!);
    if (!open) continue;
    const [, indent = "", fence = "", lang = ""] = open;
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !lines[j]!.trim().startsWith(fence)) {
      body.push(lines[j]!.startsWith(indent) ? lines[j]!.slice(indent.length) : lines[j]!);
      j++;
    }
    let k = i - 1;
    while (k >= 0 && lines[k]!.trim() === "") k--;
    const marker = k >= 0 ? /^\s*<!--\s*not run:\s*(.*?)\s*-->\s*$/.exec(lines[k]!) : null;
    found.push({ file, line: i + 1, lang, code: body.join("\n") + "\n", notRun: marker?.[1] });
    i = j;
  }
  return found;
}

/** What the demo model says last when its reply concludes after the write ran. */
async function demoConclusion(): Promise<string> {
  const script = JSON.parse(
    await readFile(path.join(REPO_ROOT, "src/model/scripted/demo-script.json"), "utf8"),
  ) as { turns: { match?: { toolName?: string; lastToolResult?: string }; text?: string }[] };
  const turn = script.turns.find((t) => t.match?.toolName === "Write" && !t.match.lastToolResult);
  if (!turn?.text) throw new Error("the demo script has no concluding turn after Write");
  return turn.text;
}

/** Starts `parkway serve` with no model configured in `cwd`; resolves with its address. */
async function serveDemo(cwd: string): Promise<{ address: string; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    [path.join(REPO_ROOT, "bin/parkway.js"), "serve", "--listen", "127.0.0.1:0", "--data", "data"],
    { cwd },
  );
  const output: string[] = [];
  child.stderr?.on("data", (d: Buffer) => output.push(d.toString()));
  const address = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).on("line", (line) => {
      output.push(line);
      try {
        const entry = JSON.parse(line) as { msg?: string; address?: string };
        if (entry.msg === "listening" && entry.address) resolve(entry.address);
      } catch {
        // not a log line
      }
    });
    child.on("exit", (code) => reject(new Error(`serve exited with ${code}:\n${output.join("")}`)));
  });
  expect(output.join("\n")).toContain("using the built-in demo model");
  return { address, child };
}

/** Every stored event of a session, replayed from the start. */
async function storedEvents(client: ParkwayClient, sessionId: string): Promise<ServerEvent[]> {
  const { lastSeq } = await client.getSession(sessionId);
  const chat = await client.attach(sessionId);
  const events: ServerEvent[] = [];
  try {
    while (events.at(-1)?.seq !== lastSeq) {
      const event = await chat.next(AbortSignal.timeout(10_000));
      if (!event) break;
      events.push(event);
    }
  } finally {
    chat.close();
  }
  return events;
}

const readme = path.join(REPO_ROOT, "README.md");
const all = snippets("README.md", await readFile(readme, "utf8"));
const runnable = all.filter((s) => (s.lang === "ts" || s.lang === "typescript") && !s.notRun);

describe("the README's TypeScript snippets", () => {
  let cwd: string;
  let server: { address: string; child: ChildProcess } | undefined;
  let client: ParkwayClient | undefined;

  beforeAll(async () => {
    cwd = await mkdtemp(path.join(tmpdir(), "parkway-readme-"));
    server = await serveDemo(cwd);
    client = createParkwayClient(server.address);
  });

  afterAll(async () => {
    client?.close();
    if (server && server.child.exitCode === null) {
      const exited = new Promise((resolve) => server!.child.once("exit", resolve));
      server.child.kill("SIGTERM");
      await exited;
    }
    if (cwd) await rm(cwd, { recursive: true, force: true });
  });

  it("marks every block it does not run, and runs the others", () => {
    for (const s of all) {
      const where = `${s.file}:${s.line} (\`\`\`${s.lang})`;
      const known = s.lang === "ts" || s.lang === "typescript" || NOT_PROGRAMS.has(s.lang);
      expect(known || s.notRun !== undefined, `${where}: a language this test does not run`).toBe(
        true,
      );
    }
    // The client snippet of "How it works" is among those run.
    expect(runnable.some((s) => s.code.includes("createParkwayClient"))).toBe(true);
  });

  it.each(runnable.map((s) => [`${s.file}:${s.line}`, s] as const))(
    "%s runs the demo's reply to REPLY_END",
    async (_, snippet) => {
      expect(snippet.code, "the snippet names the server's address").toContain(PLACEHOLDER_ADDRESS);
      const dir = await mkdtemp(path.join(cwd, "snippet-"));
      // A project that depends on this package (`parkway`) and has tsx, as a reader's would.
      await mkdir(path.join(dir, "node_modules"));
      await symlink(REPO_ROOT, path.join(dir, "node_modules", "parkway"), "dir");
      await symlink(
        path.join(REPO_ROOT, "node_modules", "tsx"),
        path.join(dir, "node_modules", "tsx"),
        "dir",
      );
      await writeFile(path.join(dir, "package.json"), JSON.stringify({ type: "module" }));
      const file = path.join(dir, "snippet.ts");
      await writeFile(file, snippet.code.replaceAll(PLACEHOLDER_ADDRESS, server!.address));

      const before = new Set((await client!.listSessions()).sessions.map((s) => s.id));
      const { stdout } = await run(process.execPath, ["--import", "tsx", file], {
        cwd: dir,
        timeout: 45_000,
      });

      // The snippet's session: its reply parked three times (the command, the question, the
      // write), each was answered, and it ended completed; both files were made.
      const created = (await client!.listSessions()).sessions.filter((s) => !before.has(s.id));
      expect(created).toHaveLength(1);
      const session = created[0]!;
      const events = await storedEvents(client!, session.id);
      const parked = events.filter((e) => e.event?.$case === "replyParked");
      expect(parked).toHaveLength(3);
      const last = events.at(-1)?.event;
      expect(last?.$case).toBe("replyEnd");
      if (last?.$case === "replyEnd")
        expect(last.value.finishedReason).toBe(FinishedReason.FINISHED_REASON_COMPLETED);
      const workdir = session.workingDirectories[0]!;
      expect(existsSync(path.join(workdir, "hello-parkway.txt"))).toBe(true);
      expect(existsSync(path.join(workdir, "hello-parkway.md"))).toBe(true);
      // What it printed ends with the demo's concluding text.
      expect(stdout.trimEnd().endsWith(await demoConclusion())).toBe(true);
    },
    60_000,
  );
});
