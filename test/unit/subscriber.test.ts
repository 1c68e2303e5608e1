import { describe, expect, it } from "vitest";
import { isParkwayError } from "../../src/common/errors.js";
import { Subscriber } from "../../src/session/subscriber.js";
import type { StreamItem } from "../../src/session/stored-event.js";

const ack = (n: number): StreamItem => ({ kind: "ack", ack: { requestId: `r${n}` } });

describe("Subscriber", () => {
  it("past its bound, drops its queue and fails with RESOURCE_EXHAUSTED naming the limit", async () => {
    const sub = new Subscriber(3);
    const failures: Error[] = [];
    sub.whenFailed((err) => failures.push(err));
    expect([1, 2, 3].map((n) => sub.push(ack(n)))).toEqual([true, true, true]);
    expect(sub.push(ack(4))).toBe(false);
    expect(sub.closed).toBe(true);
    expect(failures).toHaveLength(1);
    const err = failures[0];
    expect(isParkwayError(err) && err.code).toBe("resource_exhausted");
    expect(err?.message).toBe(
      "limit streamBacklogEvents (3) reached: the stream fell more than 3 events behind (is the client still reading?); reattach with after_seq",
    );
    // Nothing queued is kept: the reader gets the error straight away.
    const items = sub.items(new AbortController().signal);
    await expect(items.next()).rejects.toBe(err);
    // A listener registered late hears of the failure at once.
    const late: Error[] = [];
    sub.whenFailed((e) => late.push(e));
    expect(late).toEqual([err]);
  });

  it("does not call the failure listener on a plain close", () => {
    const sub = new Subscriber(3);
    const failures: Error[] = [];
    sub.whenFailed((err) => failures.push(err));
    sub.close();
    expect(failures).toEqual([]);
  });

  it("gives a waiting reader, in one batch, what was pushed until it reads", async () => {
    const sub = new Subscriber();
    const items = sub.items(new AbortController().signal);
    const first = items.next();
    sub.push(ack(1)); // wakes the reader
    sub.push(ack(2));
    sub.push(ack(3));
    expect((await first).value).toEqual([ack(1), ack(2), ack(3)]);
    const second = items.next();
    sub.push(ack(4));
    const woken = await second;
    sub.push(ack(5)); // before the woken reader read its batch: comes with it
    expect(woken.value).toEqual([ack(4), ack(5)]);
    sub.push(ack(6));
    expect((await items.next()).value).toEqual([ack(6)]);
    sub.close();
    expect(await items.next()).toEqual({ value: undefined, done: true });
  });
});
