import { afterEach, describe, expect, it } from "vitest";
import { createParkwayClient } from "../../src/client/index.js";
import { SessionStatus } from "../../src/generated/parkway/v1/agent_service.js";
import { runChat } from "../helpers/run-chat.js";
import { type SpawnedServer, spawnServer, tempDir } from "../helpers/spawn-server.js";

let server: SpawnedServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

/**
 * The README's demo, piped, across a server restart. The demo model numbers its calls afresh in
 * each process, so after the restart it reuses the id of a call that already finished; the answers
 * given after the restart must still apply, and the chat must run the reply to its end and exit.
 */
describe("parkway chat on the demo across a server restart", () => {
  it("answers after the restart, runs the reply to its end and exits", async () => {
    const dataDir = await tempDir();
    server = await spawnServer({ dataDir });
    const first = await runChat(["--server", server.address], "go\ny\n");
    expect(first.code).toBe(0);
    const sessionId = /session (ses_\w+)/.exec(first.stdout)?.[1] ?? "";
    expect(first.stdout).toContain(`session ${sessionId}: 1 call(s) still wait there`);
    expect(first.stdout).toContain("What should the note in hello-parkway.md say?");

    await server.stop();
    server = await spawnServer({ dataDir });
    // The question, then the write (whose model id repeats the finished command's).
    const second = await runChat(["--server", server.address, "--session", sessionId], "1\ny\n");
    expect(second.stdout).not.toContain("refused");
    expect(second.code).toBe(0);
    expect(second.stdout).toContain("Write needs your approval");
    expect(second.stdout).toContain(
      "Done: hello-parkway.md is in this session's working directory",
    );

    const client = createParkwayClient(server.address);
    try {
      const view = await client.getSession(sessionId);
      expect(view.status).toBe(SessionStatus.SESSION_STATUS_IDLE);
      expect(view.pendingToolCalls).toEqual([]);
    } finally {
      client.close();
    }
  }, 120_000);
});
