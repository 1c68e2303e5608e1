/**
 * Two approvers in the web console (two pages of headless Chromium, as in console-browser.test.ts)
 * and a third party on gRPC, all on the same parked calls. When both pages answer one call at
 * once, exactly one answer applies and the other page keeps a note that its answer was not applied,
 * with the server's reason; when another client answers a call the pages show, each page notes
 * that it was answered elsewhere instead of dropping the card without a word.
 */
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuditKind, createParkwayClient, type ParkwayClient } from "../../src/client/index.js";
import {
  type Script,
  type ScriptedModelServer,
  startScriptedModel,
} from "../../src/model/scripted/index.js";
import { confirmInput } from "../helpers/confirm-input.js";
import { type SpawnedServer, spawnServer, tempDir } from "../helpers/spawn-server.js";

const CHROMIUM = process.env.PARKWAY_CHROMIUM ?? "/usr/bin/chromium";

const SCRIPT: Script = {
  defaults: { chunkSize: 16 },
  turns: [
    {
      match: { lastUser: "^deploy$" },
      repeat: true,
      toolCalls: [{ name: "Bash", input: { command: "touch release-marker.txt" } }],
    },
    { match: { toolName: "Bash" }, repeat: true, text: "Done." },
  ],
};

describe("the web console when a call is answered elsewhere", () => {
  let model: ScriptedModelServer;
  let server: SpawnedServer;
  let client: ParkwayClient;
  let browser: Browser;
  const pages: Page[] = [];
  const problems: string[] = [];

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `Chromium is missing at ${CHROMIUM}: install Debian's package (apt-get install chromium) or set PARKWAY_CHROMIUM to a Chromium executable`,
      );
    }
    const root = await tempDir("parkway-console-elsewhere-");
    const workdir = path.join(root, "work");
    await mkdir(workdir, { recursive: true });
    model = await startScriptedModel({ script: SCRIPT });
    const config = path.join(root, "parkway.json");
    await writeFile(
      config,
      JSON.stringify({
        model: { url: model.url, name: "scripted" },
        agents: [{ id: "assistant", workingDirectories: [workdir] }],
      }),
    );
    server = await spawnServer({
      dataDir: path.join(root, "data"),
      direct: true,
      args: ["--config", config, "--web-listen", "127.0.0.1:0"],
    });
    if (!server.webUrl) throw new Error(`no webUrl:\n${server.output.join("\n")}`);
    client = createParkwayClient(server.address);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: process.getuid?.() === 0 ? ["--no-sandbox"] : [],
    });
    for (const name of ["A", "B"]) {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      page.on("pageerror", (e) => problems.push(`${name}: page error: ${e.message}`));
      await page.goto(server.webUrl);
      await page.getByLabel("Tenant token").waitFor({ timeout: 10_000 });
      // No tenants: an empty token signs in.
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.locator("#connection", { hasText: /^Connected$/ }).waitFor({ timeout: 10_000 });
      pages.push(page);
    }
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    client?.close();
    await server?.stop();
    await model?.close();
  });

  /** Starts a reply that parks on one Bash call; resolves with the session and the call. */
  async function parkOne() {
    const session = await client.createSession({ agentId: "assistant" });
    const parked = await client.reply({
      sessionId: session.id,
      input: { $case: "userMessage", value: { text: "deploy", content: [] } },
    });
    return { sessionId: session.id, call: parked.pendingToolCalls[0]! };
  }

  const card = (page: Page, callId: string) =>
    page.locator(`article.call[data-call-id="${callId}"]`);
  const note = (page: Page, callId: string) =>
    page.locator(`.settled .note[data-call-id="${callId}"]`);

  it("tells the approver whose answer lost a race that it was not applied, and why", async () => {
    const { sessionId, call } = await parkOne();
    const [a, b] = pages as [Page, Page];
    await card(a, call.id).waitFor({ timeout: 5_000 });
    await card(b, call.id).waitFor({ timeout: 5_000 });

    // B denies with a reason; its request reaches the server only after A's approval applied.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await b.route("**/parkway.v1.AgentService/Send", async (route) => {
      await held;
      await route.continue();
    });
    await card(b, call.id).getByLabel("Reason").fill("not before the freeze ends");
    await card(b, call.id).getByRole("button", { name: "Deny" }).click();
    await card(a, call.id).getByRole("button", { name: "Approve", exact: true }).click();
    for (let i = 0; i < 100 && (await client.getSession(sessionId)).pendingToolCalls.length; i++) {
      await sleep(100);
    }
    await sleep(1_000); // B's list shows the call gone while its answer is on the way
    release();

    await card(a, call.id).waitFor({ state: "detached", timeout: 5_000 });
    await card(b, call.id).waitFor({ state: "detached", timeout: 5_000 });
    await note(b, call.id).waitFor({ timeout: 5_000 });
    await b.unroute("**/parkway.v1.AgentService/Send");
    // Several polls later B still says so, and A, whose answer applied, says nothing.
    await sleep(1_500);
    const text = (await note(b, call.id).innerText()).replace(/\s+/g, " ");
    expect(text).toContain(
      `Answered elsewhere: Bash in session ${sessionId} no longer waits for you`,
    );
    // The server's refusal: the call no longer waits (the reply it resumed may have ended).
    expect(text).toMatch(/Your answer was not applied: Denied failed: .+ \(failed precondition\)/);
    expect(await note(a, call.id).count()).toBe(0);
    // The approval applied: the model never read B's reason.
    expect(JSON.stringify(model.requests)).not.toContain("not before the freeze ends");
    await note(b, call.id)
      .getByRole("button", { name: /^Dismiss the note on Bash/ })
      .click();
    await note(b, call.id).waitFor({ state: "detached", timeout: 2_000 });
  }, 60_000);

  it("sends an answer whose response was lost again under its request id: applied once", async () => {
    const { sessionId, call } = await parkOne();
    const a = pages[0]!;
    await card(a, call.id).waitFor({ timeout: 5_000 });
    // The first attempt reaches the server and is applied; its response is lost on the way back.
    const ids: string[] = [];
    await a.route("**/parkway.v1.AgentService/Send", async (route) => {
      const body = JSON.parse(route.request().postData() ?? "{}") as { requestId?: string };
      ids.push(body.requestId ?? "");
      if (ids.length === 1) {
        await route.fetch();
        await route.abort("connectionreset");
      } else {
        await route.continue();
      }
    });
    await card(a, call.id).getByRole("button", { name: "Approve", exact: true }).click();
    await card(a, call.id).waitFor({ state: "detached", timeout: 10_000 });
    await a.unroute("**/parkway.v1.AgentService/Send");
    expect(ids).toHaveLength(2);
    expect(ids[1]).toBe(ids[0]);
    // Applied once, by this page: no note that it was answered elsewhere.
    await sleep(1_500);
    expect(await note(a, call.id).count()).toBe(0);
    const audit = await client.listAuditRecords({ sessionId });
    const confirmed = audit.records.filter(
      (r) => r.toolCallId === call.id && r.kind === AuditKind.AUDIT_KIND_CONFIRMED,
    );
    expect(confirmed).toHaveLength(1);
  }, 60_000);

  it("notes a call answered by another client, and moves the focus to the note", async () => {
    const { sessionId, call } = await parkOne();
    const [a, b] = pages as [Page, Page];
    await card(a, call.id).waitFor({ timeout: 5_000 });
    await card(b, call.id).waitFor({ timeout: 5_000 });
    // A is typing a reason when the call is approved from elsewhere.
    await card(a, call.id).getByLabel("Reason").fill("half a reason");
    await client.reply({ sessionId, input: confirmInput(call) });
    for (const page of [a, b]) {
      await note(page, call.id).waitFor({ timeout: 5_000 });
      await expect(note(page, call.id).innerText()).resolves.toContain(
        "Nothing was sent from here.",
      );
    }
    await expect(a.evaluate("document.activeElement?.getAttribute('aria-label')")).resolves.toMatch(
      /^Dismiss the note on Bash/,
    );
    expect(problems).toEqual([]);
  }, 60_000);
});
