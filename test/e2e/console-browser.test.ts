/**
 * The web console in a real browser: headless Chromium from Debian's package (no browser download),
 * driven by playwright-core, against the compiled server serving its web port. A Python client
 * starts replies that park; the console shows each park within a second. In the browser, a tenant
 * signs in; a click approves a call with an "always allow" rule (the Python client sees its reply
 * complete, the rule appears in the rules view, and is revoked at the end); an AskUser is answered
 * (single choice with previews, multi-select, Other); a call is denied with a reason by keyboard
 * alone; an external tool is approved and its result submitted; an input is edited, then approved;
 * the transcript follows the session live. Each step's screenshot goes to
 * test-results/console-browser/. Any console error, page error, failed request or HTTP error
 * response of the page fails the test. The README's connect-web snippet runs against the same port.
 */
import { type ChildProcessWithoutNullStreams, execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Script,
  type ScriptedModelServer,
  startScriptedModel,
} from "../../src/model/scripted/index.js";
import { pythonClient } from "../helpers/python-client.js";
import { REPO_ROOT, type SpawnedServer, spawnServer, tempDir } from "../helpers/spawn-server.js";

/** Debian's Chromium; PARKWAY_CHROMIUM names another executable. */
const CHROMIUM = process.env.PARKWAY_CHROMIUM ?? "/usr/bin/chromium";
const SHOTS = path.join(REPO_ROOT, "test-results/console-browser");
const TOKEN = "console-test-token";
/** How soon a park must show in the console. */
const PARK_VISIBLE_MS = 1000;

const SCRIPT: Script = {
  defaults: { chunkSize: 16, delayMs: 5 },
  turns: [
    {
      match: { lastUser: "^deploy$" },
      repeat: true,
      text: "I will create the release marker.",
      toolCalls: [{ name: "Bash", input: { command: "touch release-marker.txt" } }],
    },
    {
      match: { lastUser: "^prepare$" },
      repeat: true,
      toolCalls: [{ name: "Bash", input: { command: "mkdir scratch" } }],
    },
    {
      match: { lastUser: "^clean up$" },
      repeat: true,
      toolCalls: [{ name: "Bash", input: { command: "mkdir build-output" } }],
    },
    {
      match: { toolName: "Bash", lastToolResult: "Not now" },
      repeat: true,
      text: "Understood: not now.",
    },
    { match: { toolName: "Bash" }, repeat: true, text: "The release marker is in place." },
    {
      match: { lastUser: "^choose$" },
      repeat: true,
      toolCalls: [
        {
          name: "AskUser",
          input: {
            questions: [
              {
                question: "Which layout should the page use?",
                header: "Layout",
                multi_select: false,
                options: [
                  {
                    label: "Cards",
                    description: "one card per item",
                    preview: "[ card ] [ card ]",
                  },
                  { label: "Table", description: "one row per item", preview: "| row |\n| row |" },
                ],
              },
              {
                question: "Which checks should run?",
                header: "Checks",
                multi_select: true,
                options: [
                  { label: "Lint", description: "style and mistakes" },
                  { label: "Types", description: "the type checker" },
                  { label: "Tests", description: "the test suite" },
                ],
              },
              {
                question: "Who reviews it?",
                header: "Reviewer",
                multi_select: false,
                options: [
                  { label: "Ana", description: "front end" },
                  { label: "Bo", description: "back end" },
                ],
              },
            ],
          },
        },
      ],
    },
    { match: { toolName: "AskUser" }, repeat: true, text: "Thanks, noted." },
    {
      match: { lastUser: "^look up$" },
      repeat: true,
      toolCalls: [{ name: "Lookup", input: { key: "answer" } }],
    },
    {
      match: { toolName: "Lookup", lastToolResult: "forty-two" },
      repeat: true,
      text: "The lookup says forty-two.",
    },
  ],
};

/** One line the Python client writes (see console_client.py). */
type PyRecord =
  | { parked: string; reply: string; calls: string[] }
  | { answers: { question: string; selected?: string[]; other?: string }[] }
  | { finished: string; text: string };

/** The Python client's output lines, read as they come. */
function pythonLines(child: ChildProcessWithoutNullStreams) {
  const lines: PyRecord[] = [];
  const waiters: (() => void)[] = [];
  const stderr: string[] = [];
  createInterface({ input: child.stdout }).on("line", (line) => {
    lines.push(JSON.parse(line) as PyRecord);
    for (const wake of waiters.splice(0)) wake();
  });
  createInterface({ input: child.stderr }).on("line", (line) => stderr.push(line));
  child.on("exit", () => {
    for (const wake of waiters.splice(0)) wake();
  });
  let read = 0;
  return {
    /** The next line, waiting up to `ms` for it. */
    async next(ms = 20_000): Promise<PyRecord> {
      const deadline = Date.now() + ms;
      while (read >= lines.length) {
        if (child.exitCode !== null) {
          throw new Error(`the Python client exited (${child.exitCode}):\n${stderr.join("\n")}`);
        }
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no line from the Python client within ${ms} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return lines[read++]!;
    },
  };
}

describe("the web console in a real browser", () => {
  let model: ScriptedModelServer;
  let server: SpawnedServer;
  let browser: Browser;
  let page: Page;
  let python: ChildProcessWithoutNullStreams | undefined;
  let workdir: string;
  const problems: string[] = [];
  let step = 0;

  async function shot(name: string) {
    step += 1;
    await page.screenshot({
      path: path.join(SHOTS, `${String(step).padStart(2, "0")}-${name}.png`),
      fullPage: true,
    });
  }

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `Chromium is missing at ${CHROMIUM}: install Debian's package (apt-get install chromium) or set PARKWAY_CHROMIUM to a Chromium executable`,
      );
    }
    await rm(SHOTS, { recursive: true, force: true });
    await mkdir(SHOTS, { recursive: true });
    const root = await tempDir("parkway-console-");
    workdir = path.join(root, "work");
    await mkdir(workdir, { recursive: true });
    model = await startScriptedModel({ script: SCRIPT });
    const config = path.join(root, "parkway.json");
    await writeFile(
      config,
      JSON.stringify({
        model: { url: model.url, name: "scripted", maxRetries: 2 },
        agents: [{ id: "assistant", workingDirectories: [workdir] }],
        tenants: [
          {
            id: "acme",
            tokens: [{ name: "console", sha256: createHash("sha256").update(TOKEN).digest("hex") }],
          },
        ],
      }),
    );
    server = await spawnServer({
      dataDir: path.join(root, "data"),
      direct: true,
      args: ["--config", config, "--web-listen", "127.0.0.1:0"],
    });
    if (!server.webUrl)
      throw new Error(`the server logged no webUrl:\n${server.output.join("\n")}`);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      // Chromium's sandbox cannot start as root (CI containers).
      args: process.getuid?.() === 0 ? ["--no-sandbox"] : [],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on("console", (m) => {
      if (m.type() === "error") problems.push(`console error: ${m.text()}`);
    });
    page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
    page.on("requestfailed", (r) => {
      const error = r.failure()?.errorText;
      // Opening another transcript cancels the previous one's Watch stream: the page's own abort.
      if (error === "net::ERR_ABORTED" && r.url().endsWith("/parkway.v1.AgentService/Watch")) {
        return;
      }
      problems.push(`request failed: ${r.method()} ${r.url()}: ${error}`);
    });
    page.on("response", (r) => {
      if (r.status() >= 400)
        problems.push(`HTTP ${r.status()}: ${r.request().method()} ${r.url()}`);
    });
  }, 120_000);

  afterAll(async () => {
    if (python && python.exitCode === null) python.kill("SIGKILL");
    await browser?.close();
    await server?.stop();
    await model?.close();
  });

  it("runs the README's connect-web snippet against the web port", async () => {
    const readme = await readFile(path.join(REPO_ROOT, "README.md"), "utf8");
    const block = /test\/e2e\/console-browser\.test\.ts runs it -->\s*```ts\n([\s\S]*?)```/.exec(
      readme,
    );
    expect(block, "the README's connect-web snippet").not.toBeNull();
    const placeholder = 'baseUrl: "http://127.0.0.1:8081"';
    expect(block![1]).toContain(placeholder);
    // What the snippet leaves to the reader: the web port's URL and, on this server, the token.
    const code = block![1]!.replace(placeholder, `baseUrl: "${server.webUrl}", token: "${TOKEN}"`);
    const dir = await tempDir("parkway-web-snippet-");
    await mkdir(path.join(dir, "node_modules"));
    await symlink(REPO_ROOT, path.join(dir, "node_modules", "parkway"), "dir");
    await symlink(
      path.join(REPO_ROOT, "node_modules", "tsx"),
      path.join(dir, "node_modules", "tsx"),
      "dir",
    );
    await writeFile(path.join(dir, "package.json"), JSON.stringify({ type: "module" }));
    await writeFile(path.join(dir, "snippet.ts"), code);
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "snippet.ts"],
      { cwd: dir, timeout: 45_000 },
    );
    // The second text comes only after the approved Bash call ran.
    expect(stdout.trim()).toBe("I will create the release marker.The release marker is in place.");
  }, 60_000);

  it("signs in, approves with always allow, shows the rule, answers AskUser, denies by keyboard, submits an external result, edits an input, revokes the rule", async () => {
    await page.goto(server.webUrl!);
    const token = page.getByLabel("Tenant token");
    await token.waitFor({ state: "visible", timeout: 10_000 });
    await shot("sign-in");
    await token.fill(TOKEN);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("Connected").waitFor({ timeout: 10_000 });

    const { python: interpreter, env } = await pythonClient();
    python = spawn(
      interpreter,
      [
        path.join(REPO_ROOT, "test/e2e/console_client.py"),
        server.address,
        TOKEN,
        "deploy",
        "choose",
        "clean up",
        "look up",
        "prepare",
      ],
      { env },
    );
    const out = pythonLines(python);

    // A reply parks on a confirmation: the console shows it within a second.
    const parked = await out.next();
    expect(parked).toMatchObject({ calls: ["Bash"] });
    const sessionId = (parked as { parked: string }).parked;
    const started = Date.now();
    const card = page.locator(`[data-session-id="${sessionId}"] article.call.confirm`);
    await card.waitFor({ state: "visible", timeout: PARK_VISIBLE_MS });
    const visibleAfter = Date.now() - started;
    expect(visibleAfter).toBeLessThanOrEqual(PARK_VISIBLE_MS);
    await expect(card.locator("h3").innerText()).resolves.toContain("Bash");
    await expect(card.locator(".why").innerText()).resolves.toMatch(/Why it asks/);
    // Each of its buttons is described by the call's heading, for a screen reader.
    const heading = await card.locator("h3").getAttribute("id");
    await expect(
      card.getByRole("button", { name: "Deny", exact: true }).getAttribute("aria-describedby"),
    ).resolves.toBe(heading);
    // Where the command runs: the session's own working directory.
    await expect(card.locator(".runs-in").innerText()).resolves.toMatch(
      new RegExp(`^Runs in /.*/${sessionId}$`),
    );
    await expect(card.locator("pre").first().innerText()).resolves.toContain(
      "touch release-marker.txt",
    );
    // The session's transcript, live beside the pending call.
    await page
      .locator(`[data-session-id="${sessionId}"] > header`)
      .getByRole("button", { name: "Transcript" })
      .click();
    const transcript = page.locator("section.transcript");
    await transcript.getByText("Live").waitFor({ timeout: 5_000 });
    await expect(transcript.innerText()).resolves.toMatch(
      /deploy[\s\S]*I will create the release marker\.[\s\S]*Bash/,
    );
    await shot("parked-confirm");

    // Always allow, scoped to the agent, with the suggested rule.
    const rule = (await card.locator("fieldset.always label code").first().innerText()).trim();
    expect(rule).toMatch(/^Bash/);
    await card.getByLabel("Scope").selectOption({ label: "Every session of agent assistant" });
    await card.getByRole("button", { name: "Always allow" }).click();

    // The Python client sees the reply complete.
    await expect(out.next()).resolves.toEqual({
      finished: "FINISHED_REASON_COMPLETED",
      text: "I will create the release marker.The release marker is in place.",
    });
    await card.waitFor({ state: "detached", timeout: 5_000 });
    // Watch brought the rest of the reply into the open transcript.
    await transcript.getByText("The release marker is in place.").waitFor({ timeout: 5_000 });
    await expect(transcript.innerText()).resolves.toMatch(/Finished: completed/);
    await shot("approved");

    // The rule appears in the rules view, in the agent's scope.
    await page.getByRole("button", { name: "Rules" }).click();
    const row = page
      .locator("section.rule-group", { hasText: "Every session of agent assistant" })
      .locator("tr", { hasText: rule });
    await row.waitFor({ state: "visible", timeout: 5_000 });
    await expect(row.innerText()).resolves.toMatch(/allow\s+agent\s+confirmation/);
    await expect(row.getByRole("button", { name: `Revoke ${rule}` }).isVisible()).resolves.toBe(
      true,
    );
    await shot("rules");

    // The next reply asks the user: answered in the browser.
    await page.getByRole("button", { name: /^Waiting/ }).click();
    const asked = await out.next();
    expect(asked).toMatchObject({ parked: sessionId, calls: ["AskUser"] });
    const askedAt = Date.now();
    const ask = page.locator(`[data-session-id="${sessionId}"] article.call.external`);
    await ask.waitFor({ state: "visible", timeout: PARK_VISIBLE_MS });
    expect(Date.now() - askedAt).toBeLessThanOrEqual(PARK_VISIBLE_MS);

    // The open transcript shows the new reply, after the message that started it.
    await transcript
      .locator(".msg.user + .msg.assistant", { hasText: "AskUser" })
      .waitFor({ timeout: 5_000 });
    await expect(transcript.locator(".msg.user").last().innerText()).resolves.toContain("choose");

    const layout = ask.getByRole("group", { name: /Which layout/ });
    await expect(layout.locator("pre.preview").innerText()).resolves.toBe("[ card ] [ card ]");
    await layout.getByLabel(/^Table/).check();
    await expect(layout.locator("pre.preview").innerText()).resolves.toBe("| row |\n| row |");
    const checks = ask.getByRole("group", { name: /Which checks/ });
    await checks.getByLabel(/^Lint/).check();
    await checks.getByLabel(/^Tests/).check();
    await ask
      .getByRole("group", { name: /Who reviews/ })
      .getByLabel("Other answer: Who reviews it?")
      .fill("Cleo");
    await shot("ask-user");
    await ask.getByRole("button", { name: "Send answers" }).click();

    const answers = await out.next();
    expect(answers).toEqual({
      answers: [
        { question: "Which layout should the page use?", selected: ["Table"] },
        { question: "Which checks should run?", selected: ["Lint", "Tests"] },
        { question: "Who reviews it?", other: "Cleo" },
      ],
    });
    await expect(out.next()).resolves.toEqual({
      finished: "FINISHED_REASON_COMPLETED",
      text: "Thanks, noted.",
    });
    await ask.waitFor({ state: "detached", timeout: 5_000 });
    await shot("answered");

    // The audit trail has the confirmation with its rule and the answer.
    await page.getByRole("button", { name: "Audit" }).click();
    const audit = page.locator("table.audit tbody tr", { hasText: sessionId });
    await audit
      .filter({ hasText: "answered" })
      .filter({ hasText: "selected Table, Lint, Tests" })
      .waitFor({ timeout: 5_000 });
    await expect(audit.filter({ hasText: "confirmed" }).innerText()).resolves.toContain(
      `accepted ${rule}`,
    );
    await shot("audit");

    // Keyboard alone: the next park is denied with a reason.
    await page.getByRole("button", { name: /^Waiting/ }).click();
    const third = await out.next();
    expect(third).toMatchObject({ parked: sessionId, calls: ["Bash"] });
    const confirmCard = page.locator(`[data-session-id="${sessionId}"] article.call.confirm`);
    await confirmCard.waitFor({ state: "visible", timeout: PARK_VISIBLE_MS });
    const denied = page.locator(
      `article.call[data-call-id="${await confirmCard.getAttribute("data-call-id")}"]`,
    );
    await denied.getByRole("button", { name: "Approve", exact: true }).focus();
    const reasonId = await denied.getByLabel("Reason").getAttribute("id");
    let reached = false;
    for (let i = 0; i < 10 && !reached; i++) {
      await page.keyboard.press("Tab");
      reached = await page.evaluate(`document.activeElement?.id === ${JSON.stringify(reasonId)}`);
    }
    expect(reached, "Tab reaches the reason field").toBe(true);
    await page.keyboard.type("Not now");
    await page.keyboard.press("Tab");
    await expect(page.evaluate("document.activeElement?.textContent")).resolves.toBe("Deny");
    await shot("deny-by-keyboard");
    await page.keyboard.press("Enter");
    await expect(out.next()).resolves.toEqual({
      finished: "FINISHED_REASON_COMPLETED",
      text: "Understood: not now.",
    });
    await denied.waitFor({ state: "detached", timeout: 5_000 });

    // An external tool: approved (the mode asks for it), then its result typed in the console.
    await expect(out.next()).resolves.toMatchObject({ parked: sessionId, calls: ["Lookup"] });
    const lookup = page.locator(`[data-session-id="${sessionId}"] article.call.confirm`);
    await lookup.waitFor({ state: "visible", timeout: PARK_VISIBLE_MS });
    await lookup.getByRole("button", { name: "Approve", exact: true }).click();
    await expect(out.next()).resolves.toMatchObject({ parked: sessionId, calls: ["Lookup"] });
    const external = page.locator(`[data-session-id="${sessionId}"] article.call.external`);
    await external.waitFor({ state: "visible", timeout: PARK_VISIBLE_MS });
    await expect(external.locator("pre").first().innerText()).resolves.toContain('"key": "answer"');
    await external.getByLabel("Result (what the model reads)").fill("forty-two");
    await shot("external-result");
    await external.getByRole("button", { name: "Submit result" }).click();
    await expect(out.next()).resolves.toEqual({
      finished: "FINISHED_REASON_COMPLETED",
      text: "The lookup says forty-two.",
    });
    await external.waitFor({ state: "detached", timeout: 5_000 });

    // The input edited, then approved: what runs is the edited command.
    await expect(out.next()).resolves.toMatchObject({ parked: sessionId, calls: ["Bash"] });
    const edit = page.locator(`[data-session-id="${sessionId}"] article.call.confirm`);
    await edit.waitFor({ state: "visible", timeout: PARK_VISIBLE_MS });
    await edit.getByText("Edit the input, then approve").click();
    await edit.getByLabel("Input (JSON)").fill('{ "command": "mkdir scratch-edited" }');
    await edit.getByRole("button", { name: "Approve edited input" }).click();
    await expect(out.next()).resolves.toMatchObject({ finished: "FINISHED_REASON_COMPLETED" });
    expect(existsSync(path.join(workdir, sessionId, "scratch-edited"))).toBe(true);
    expect(existsSync(path.join(workdir, sessionId, "scratch"))).toBe(false);

    // The session's transcript: the user's messages, the replies' text and tool calls.
    await page.getByRole("button", { name: /^Waiting/ }).click();
    await page.locator("details.others summary").click();
    await page
      .locator(".other-sessions li", { hasText: sessionId })
      .getByRole("button", { name: "Transcript" })
      .click();
    await transcript.getByText("Thanks, noted.").waitFor({ timeout: 5_000 });
    await transcript.locator(".msg.user", { hasText: "choose" }).waitFor({ timeout: 5_000 });
    await expect(transcript.innerText()).resolves.toMatch(
      /deploy[\s\S]*Bash[\s\S]*The release marker is in place\.[\s\S]*choose[\s\S]*AskUser/,
    );
    await shot("transcript");

    // Revoking the rule removes it from the rules in force.
    await page.getByRole("button", { name: "Rules" }).click();
    await row.getByRole("button", { name: `Revoke ${rule}` }).click();
    await row.waitFor({ state: "detached", timeout: 5_000 });
    await page.getByText(`Revoked ${rule}.`).waitFor({ state: "attached", timeout: 5_000 });

    // Narrow screen: nothing scrolls sideways.
    await page.setViewportSize({ width: 380, height: 800 });
    await expect(
      page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"),
    ).resolves.toBe(true);
    await shot("narrow");

    if (python.exitCode === null) await new Promise((resolve) => python!.once("exit", resolve));
    expect(python.exitCode).toBe(0);
    expect(problems).toEqual([]);
  }, 120_000);
});
