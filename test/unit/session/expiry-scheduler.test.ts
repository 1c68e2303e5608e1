import { describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/common/logger.js";
import { ExpiryScheduler } from "../../../src/session/expiry-scheduler.js";
import { ExpiryRecord, expiryKey } from "../../../src/session/records.js";
import { createMemoryStore } from "../../../src/store/index.js";

describe("the expiry sweep", () => {
  it("keeps a deadline whose reply is running and tries it again, then removes it once handled", async () => {
    const store = createMemoryStore();
    await store.open();
    const at = new Date(Date.now() - 1_000).toISOString();
    const key = expiryKey(at, "ses_1");
    await store.batch().put(ExpiryRecord, key, { sessionId: "ses_1", at }).write();
    const answers: ("busy" | "done")[] = ["busy", "done"];
    const calls: string[] = [];
    const scheduler = new ExpiryScheduler(store, silentLogger, (sessionId) => {
      calls.push(sessionId);
      return Promise.resolve(answers.shift() ?? "done");
    });
    await scheduler.start();
    await expect.poll(() => calls.length, { timeout: 10_000 }).toBe(1);
    // The reply was running: the deadline stays, since the run may park again with the call.
    expect(await store.get(ExpiryRecord, key)).toEqual({ sessionId: "ses_1", at });
    await expect.poll(() => calls.length, { timeout: 10_000 }).toBe(2);
    await expect.poll(() => store.get(ExpiryRecord, key), { timeout: 10_000 }).toBeUndefined();
    await scheduler.stop();
    await store.close();
  });
});
