import { describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/common/logger.js";
import { AnswerTokenRecord } from "../../../src/session/notifications/answer-links.js";
import { AnswerTokenSweeper } from "../../../src/session/notifications/token-sweeper.js";
import { createMemoryStore } from "../../../src/store/index.js";

describe("the answer-link token sweep", () => {
  it("removes the tokens past their expiry, at start, and keeps the others", async () => {
    const store = createMemoryStore();
    await store.open();
    const token = (expiresAt: string) => ({
      tenant: "t",
      sessionId: "ses_1",
      replyId: "reply_1",
      callId: "call_1",
      expiresAt,
      origin: "https://receiver.example/hook",
    });
    const past = new Date(Date.now() - 60_000).toISOString();
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const batch = store.batch();
    // More than one write's worth of expired tokens (a call answered in the app, not by its link).
    for (let i = 0; i < 600; i++)
      batch.put(AnswerTokenRecord, `expired${String(i).padStart(4, "0")}`, token(past));
    batch.put(AnswerTokenRecord, "live", token(future));
    await batch.write();

    const sweeper = new AnswerTokenSweeper(store, silentLogger);
    sweeper.start();
    await expect
      .poll(async () => (await store.get(AnswerTokenRecord, "expired0599")) === undefined)
      .toBe(true);
    const left: string[] = [];
    for await (const [key] of store.entries(AnswerTokenRecord)) left.push(key);
    expect(left).toEqual(["live"]);
    // The next sweep finds nothing more to remove.
    expect(await sweeper.sweep()).toBe(0);
    await sweeper.stop();
    await store.close();
  });
});
