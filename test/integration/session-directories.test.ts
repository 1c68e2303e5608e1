import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createParkwayClient, type ParkwayClient } from "../../src/client/index.js";
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import { ToolResultState } from "../../src/generated/parkway/v1/content.js";
import {
  collect,
  type Harness,
  startedCalls,
  startHarness,
  toolResult,
} from "../helpers/parkway-harness.js";

let h: Harness | undefined;
const clients: ParkwayClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await h?.close();
  h = undefined;
});

const sha = (token: string) => createHash("sha256").update(token).digest("hex");

async function say(client: ParkwayClient, sessionId: string, text: string): Promise<ServerEvent[]> {
  const chat = await client.attach(sessionId);
  try {
    return await collect(chat.message(text, AbortSignal.timeout(15_000)));
  } finally {
    chat.close();
  }
}

describe("each session's own working directory", () => {
  it("keeps a file one tenant's session writes from another tenant's session", async () => {
    // Bypass mode: the permission engine lets every call through, so what keeps the sessions apart
    // is their working directories alone.
    h = await startHarness(
      { turns: [] },
      { permissionMode: "bypass" },
      {
        tenants: [
          { id: "acme", tokens: [{ name: "acme-ci", sha256: sha("acme-secret") }] },
          { id: "globex", tokens: [{ name: "globex-ops", sha256: sha("globex-secret") }] },
        ],
      },
    );
    const acme = createParkwayClient(h.parkway.address, { token: "acme-secret" });
    const globex = createParkwayClient(h.parkway.address, { token: "globex-secret" });
    clients.push(acme, globex);

    const a = await acme.createSession({ agentId: "test" });
    const b = await globex.createSession({ agentId: "test" });
    const [dirA] = a.workingDirectories;
    const [dirB] = b.workingDirectories;
    expect(a.workingDirectories).toEqual([path.join(h.workdir, a.id)]);
    expect(b.workingDirectories).toEqual([path.join(h.workdir, b.id)]);
    expect(dirA).not.toBe(dirB);
    for (const dir of [dirA!, dirB!]) {
      expect(path.dirname(dir)).toBe(h.workdir);
      expect((await stat(dir)).mode & 0o777).toBe(0o700);
    }
    // GetSession reports the same directories.
    expect((await acme.getSession(a.id)).workingDirectories).toEqual([dirA]);
    expect((await globex.getSession(b.id)).workingDirectories).toEqual([dirB]);

    const theirs = path.join(dirA!, "note.txt");
    await h.model.reset({
      turns: [
        {
          match: { lastUser: "write the note" },
          toolCalls: [
            { id: "w1", name: "Write", input: { file_path: "note.txt", content: "acme only\n" } },
          ],
        },
        { match: { toolName: "Write" }, text: "Written." },
        {
          match: { lastUser: "read the note" },
          toolCalls: [
            { id: "r-abs", name: "Read", input: { file_path: theirs } },
            { id: "r-rel", name: "Read", input: { file_path: "note.txt" } },
          ],
        },
        { match: { toolName: "Read" }, text: "Read." },
      ],
    });

    // Tenant A's session writes note.txt, which lands in its own directory.
    const wrote = await say(acme, a.id, "write the note");
    expect(toolResult(wrote, startedCalls(wrote)[0]!).state).toBe(
      ToolResultState.TOOL_RESULT_STATE_SUCCESS,
    );
    expect(await readFile(theirs, "utf8")).toBe("acme only\n");
    expect(existsSync(path.join(h.workdir, "note.txt"))).toBe(false);

    // Tenant B's session can reach it neither by its absolute path nor by its name.
    const read = await say(globex, b.id, "read the note");
    const [absId, relId] = startedCalls(read);
    const abs = toolResult(read, absId!);
    expect(abs.state).toBe(ToolResultState.TOOL_RESULT_STATE_ERROR);
    expect(abs.text).toContain(`${theirs} is outside the working directories: ${dirB}`);
    const rel = toolResult(read, relId!);
    expect(rel.state).toBe(ToolResultState.TOOL_RESULT_STATE_ERROR);
    expect(rel.text).toContain("File does not exist");
    expect(rel.text).toContain(path.join(dirB!, "note.txt"));
    const seen = JSON.stringify(read) + JSON.stringify(h.model.requests.at(-1)?.messages);
    expect(seen).not.toContain("acme only");

    // Deleting a session leaves its files.
    await acme.deleteSession(a.id);
    expect(await readFile(theirs, "utf8")).toBe("acme only\n");
  });
});
