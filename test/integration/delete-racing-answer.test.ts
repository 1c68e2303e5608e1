/**
 * DeleteSession racing an answer: one of the two goes first, whole. An answer applied before the
 * deletion is written before it (and its run is interrupted by it); one that comes after is refused
 * with NOT_FOUND and runs nothing. Either way the session is gone, also after a restart, and never
 * comes back as a damaged session. Real server and client; the scripted model.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ParkwayClientError } from "../../src/client/index.js";
import { confirmation } from "../../src/client/inputs.js";
import { type Harness, startHarness } from "../helpers/parkway-harness.js";

let h: Harness;

beforeAll(async () => {
  h = await startHarness({
    turns: [
      {
        match: { lastUser: "^go" },
        repeat: true,
        toolCalls: [{ name: "Bash", input: { command: "touch x.txt" } }],
      },
      { match: { toolName: "Bash" }, repeat: true, text: "done" },
    ],
  });
});

afterAll(async () => {
  await h.close();
});

const codeOf = (err: unknown) => (err instanceof ParkwayClientError ? err.codeName : String(err));

describe("DeleteSession racing an answer", () => {
  it("one goes first, whole: the session is gone and a refused answer ran nothing", async () => {
    const ids: string[] = [];
    const outcomes: string[] = [];
    for (let round = 0; round < 12; round++) {
      const session = await h.client.createSession({ agentId: "test" });
      ids.push(session.id);
      const wd = session.workingDirectories[0]!;
      const parked = await h.client.reply({
        sessionId: session.id,
        input: { $case: "userMessage", value: { text: "go", content: [] } },
      });
      const call = parked.pendingToolCalls[0]!;
      const [answer, deletion] = await Promise.allSettled([
        h.client.send(session.id, {
          $case: "userConfirmResult",
          value: { replyId: "", confirmResults: [confirmation(call)] },
        }),
        h.client.deleteSession(session.id),
      ]);
      expect(deletion.status, String((deletion as PromiseRejectedResult).reason)).toBe("fulfilled");
      const answered = answer.status === "fulfilled" ? "OK" : codeOf(answer.reason);
      outcomes.push(answered);
      expect(["OK", "NOT_FOUND"]).toContain(answered);
      if (answered === "NOT_FOUND") {
        // Give a run that should not exist the time to touch its file.
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(existsSync(path.join(wd, "x.txt")), "a refused answer ran its command").toBe(false);
      }
      const read = await h.client.getSession(session.id).then(
        () => "OK",
        (err: unknown) => codeOf(err),
      );
      expect(read).toBe("NOT_FOUND");
    }
    await h.restart();
    const listed = new Set((await h.client.listSessions({})).sessions.map((s) => s.id));
    for (const id of ids) {
      expect(listed.has(id)).toBe(false);
      const read = await h.client.getSession(id).then(
        () => "OK",
        (err: unknown) => codeOf(err),
      );
      expect(read, `session ${id} after a restart`).toBe("NOT_FOUND");
    }
    expect(outcomes.length).toBe(12);
  });
});
