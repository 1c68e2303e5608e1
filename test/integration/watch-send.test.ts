import { createHash } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import {
  createParkwayClient,
  type ParkwayClient,
  ParkwayClientError,
  type SendInput,
} from "../../src/client/index.js";
import { FinishedReason, type Msg, Role } from "../../src/generated/parkway/v1/content.js";
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import type { Script } from "../../src/model/scripted/index.js";
import { confirmInput } from "../helpers/confirm-input.js";
import { type Harness, kind, startHarness } from "../helpers/parkway-harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const message = (text: string): SendInput => ({
  $case: "userMessage",
  value: { text, content: [] },
});

const result = (id: string, text: string): SendInput => ({
  $case: "externalExecutionResult",
  value: {
    replyId: "",
    executionResults: [
      {
        id,
        name: "",
        output: [{ block: { $case: "text", value: { id: "", text } } }],
        state: 1,
        metadata: undefined,
        askUser: undefined,
      },
    ],
  },
});

/** Deploy is an external tool that asks first: a message parks for a confirmation, then a result. */
const deployAgent = {
  externalTools: [
    {
      name: "Deploy",
      description: "Deploys.",
      inputSchema: { type: "object", properties: { target: { type: "string" } } },
    },
  ],
};

const deployScript: Script = {
  turns: [
    { match: { lastUser: "" }, repeat: true, toolCalls: [{ name: "Deploy", input: {} }] },
    { match: { toolName: "Deploy" }, repeat: true, text: "deployed" },
  ],
};

/** Each user message is answered with its own text, echoed. */
const echoScript: Script = {
  turns: [1, 2, 3].map((n) => ({ match: { lastUser: `m${n}` }, text: `echo m${n}` })),
};

/** Reads `events` until `stop` says so (the event included), within 10 s. */
async function readUntil(
  events: AsyncIterator<ServerEvent>,
  stop: (e: ServerEvent) => boolean,
): Promise<ServerEvent[]> {
  const out: ServerEvent[] = [];
  const deadline = Date.now() + 10_000;
  for (;;) {
    const timeout = new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`stopped after ${out.map(kind).join(",")}`)), 10_000),
    );
    const next = await Promise.race([events.next(), timeout]);
    if (next.done) throw new Error(`ended after ${out.map(kind).join(",")}`);
    out.push(next.value);
    if (stop(next.value) || Date.now() > deadline) return out;
  }
}

/** The events as the wire shows them, for comparing two streams (a re-announcement has its own id). */
const wire = (events: ServerEvent[]) =>
  events.map((e) => ({
    id: e.seq === 0 ? "" : e.id,
    seq: e.seq,
    replyId: e.replyId,
    replayed: e.replayed,
    event: e.event,
  }));

const settles = (e: ServerEvent) => kind(e) === "reply_end" || kind(e) === "reply_parked";
const reannounced = (e: ServerEvent) => e.seq === 0;

async function refusal(p: Promise<unknown>): Promise<ParkwayClientError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ParkwayClientError);
  const e = err as ParkwayClientError;
  return e;
}

/** What a client sees of a refusal: code, message and details. */
const status = (e: ParkwayClientError) => ({
  code: e.codeName,
  message: e.message,
  fieldViolations: e.fieldViolations,
  preconditionViolations: e.preconditionViolations,
});

const textOf = (m: Msg) =>
  m.content.map((b) => (b.block?.$case === "text" ? b.block.value.text : "")).join("");

describe("Watch and Send", () => {
  it("Watch replays, re-announces and tails exactly as a Chat attach; Send applies inputs", async () => {
    h = await startHarness(deployScript, deployAgent);
    const client = h.client;
    const { id } = await client.createSession({ agentId: "test" });
    const stop = new AbortController();
    try {
      const watch = client.watch(id, { signal: stop.signal });
      const sent = await client.send(id, message("deploy"), "m-1");
      expect(sent.requestId).toBe("m-1");
      expect(sent.replyId).not.toBe("");
      const first = await readUntil(watch, settles);
      expect(first.map(kind)).toContain("require_user_confirm");
      expect(first.every((e) => e.replyId === sent.replyId || e.replyId === "")).toBe(true);

      // The same session attached anew, from the start, from the middle, and past its REQUIRE_*
      // event (which a stream then gets announced again): the same events.
      const parkedAt = first.at(-1)!.seq;
      for (const afterSeq of [0, 3, parkedAt]) {
        const until = afterSeq === parkedAt ? reannounced : settles;
        const watched = client.watch(id, { afterSeq, signal: stop.signal });
        const chat = await client.attach(id, { afterSeq });
        const viaWatch = await readUntil(watched, until);
        const viaChat = await readUntil(chat[Symbol.asyncIterator](), until);
        chat.close();
        await watched.return(undefined);
        expect(viaWatch.map(kind)).toContain("require_user_confirm");
        expect(wire(viaWatch)).toEqual(wire(viaChat));
        if (afterSeq < parkedAt) expect(viaWatch[0]!.seq).toBe(afterSeq + 1);
        else expect(viaWatch.map((e) => [e.seq, e.replayed])).toEqual([[0, true]]);
      }

      // The parked reply's message so far is the newest message.
      const listed = await client.listMessages(id);
      expect(listed.messages.map((m) => [m.id, m.role, m.finishedReason])).toEqual([
        [sent.replyId, Role.ROLE_ASSISTANT, FinishedReason.FINISHED_REASON_UNSPECIFIED],
        [expect.any(String), Role.ROLE_USER, FinishedReason.FINISHED_REASON_UNSPECIFIED],
      ]);

      // Live events: a Watch and a Chat stream see the same ones.
      const call = first.find((e) => e.event?.$case === "requireUserConfirm")!;
      const callId =
        call.event?.$case === "requireUserConfirm" ? call.event.value.toolCalls[0]!.id : "";
      const liveWatch = client.watch(id, { afterSeq: first.at(-1)!.seq, signal: stop.signal });
      const liveChat = await client.attach(id, { afterSeq: first.at(-1)!.seq });
      // Past the re-announcement of both.
      await readUntil(liveWatch, reannounced);
      await readUntil(liveChat[Symbol.asyncIterator](), reannounced);
      const confirmed = await client.send(id, confirmInput(callId), "c-1");
      expect(confirmed).toEqual({ requestId: "c-1", replyId: sent.replyId });
      const parkedWatch = await readUntil(liveWatch, settles);
      const parkedChat = await readUntil(liveChat[Symbol.asyncIterator](), settles);
      expect(wire(parkedWatch)).toEqual(wire(parkedChat));
      expect(parkedWatch.map(kind)).toContain("require_external_execution");
      await client.send(id, result(callId, "ok"), "r-1");
      const endWatch = await readUntil(liveWatch, settles);
      const endChat = await readUntil(liveChat[Symbol.asyncIterator](), settles);
      liveChat.close();
      expect(wire(endWatch)).toEqual(wire(endChat));
      expect(endWatch.map(kind).at(-1)).toBe("reply_end");
      const done = await client.listMessages(id);
      expect(done.messages.map(textOf)[0]).toContain("deployed");
      expect(done.messages[0]!.finishedReason).toBe(FinishedReason.FINISHED_REASON_COMPLETED);
    } finally {
      stop.abort();
    }
  });

  it("Send applies once per request_id and refuses as a Chat ack does", async () => {
    h = await startHarness(deployScript, deployAgent);
    const client = h.client;
    const { id } = await client.createSession({ agentId: "test" });
    const first = await client.send(id, message("deploy"), "same");
    await waitParked(client, id);
    const before = await client.getSession(id);
    // A retry: the same acknowledgement, nothing applied again.
    expect(await client.send(id, message("deploy"), "same")).toEqual(first);
    expect((await client.getSession(id)).lastSeq).toBe(before.lastSeq);
    // A different input under the id: INVALID_ARGUMENT naming request_id.
    const reused = await refusal(client.send(id, message("something else"), "same"));
    expect(reused.codeName).toBe("INVALID_ARGUMENT");
    expect(reused.fieldViolations.map((v) => v.field)).toContain("request_id");

    // Each refusal fails Send with the status the Chat ack of the same input carries.
    const chat = await client.attach(id, { afterSeq: before.lastSeq });
    try {
      const inputs: SendInput[] = [
        message("while parked"),
        confirmInput("no-such-call"),
        { $case: "userInterrupt", value: { replyId: "not-this-reply" } },
        { $case: "userMessage", value: { text: " ", content: [] } },
      ];
      for (const input of inputs) {
        const viaSend = await refusal(client.send(id, input));
        const viaChat = await refusal(chat.send(input));
        expect(status(viaSend)).toEqual(status(viaChat));
      }
      expect(status(reused)).toEqual(status(await refusal(chat.send(message("x"), "same"))));
      expect((await client.getSession(id)).lastSeq).toBe(before.lastSeq);
      // Send needs a session and an input.
      const noSession = await refusal(client.send("", message("x")));
      expect(noSession.fieldViolations.map((v) => v.field)).toEqual(["session_id"]);
      const noInput = await refusal(client.send(id, undefined as unknown as SendInput));
      expect(noInput.fieldViolations.map((v) => v.field)).toEqual(["input"]);
    } finally {
      chat.close();
    }
  });

  it("ListMessages pages newest first, compacted replies included", async () => {
    h = await startHarness(echoScript, {}, { retention: { keepFinishedReplies: 0 } });
    const client = h.client;
    const { id } = await client.createSession({ agentId: "test" });
    const replies: string[] = [];
    for (const text of ["m1", "m2", "m3"]) {
      const res = await client.reply({ sessionId: id, input: message(text) });
      replies.push(res.message!.id);
    }
    // The replies' events are compacted: a Watch from the start is refused as a Chat attach is.
    const { lastSeq } = await client.getSession(id);
    const viaWatch = await refusal(client.watch(id, { reconnectForMs: 0 }).next());
    const viaChat = await refusal(client.attach(id, { reconnectForMs: 0 }));
    expect(viaWatch.message).toMatch(/compacted/);
    expect(status(viaWatch)).toEqual(status(viaChat));
    const stop = AbortSignal.timeout(500);
    const replayed: ServerEvent[] = [];
    for await (const e of client.watch(id, { afterSeq: lastSeq, signal: stop })) replayed.push(e);
    expect(replayed).toEqual([]);

    const pages: string[][] = [];
    let pageToken = "";
    do {
      const page = await client.listMessages(id, { pageSize: 2, pageToken });
      pages.push(page.messages.map(textOf));
      pageToken = page.nextPageToken;
    } while (pageToken !== "" && pages.length < 10);
    expect(pages).toEqual([
      ["echo m3", "m3"],
      ["echo m2", "m2"],
      ["echo m1", "m1"],
    ]);
    const all = await client.listMessages(id);
    expect(all.nextPageToken).toBe("");
    expect(all.messages.filter((m) => m.role === Role.ROLE_ASSISTANT).map((m) => m.id)).toEqual(
      [...replies].reverse(),
    );
    const bad = await refusal(client.listMessages(id, { pageToken: "x" }));
    expect(bad.fieldViolations.map((v) => v.field)).toEqual(["page_token"]);
    const big = await refusal(client.listMessages(id, { pageSize: 1001 }));
    expect(big.fieldViolations.map((v) => v.field)).toEqual(["page_size"]);
  });

  it("ends a Watch with UNAVAILABLE on shutdown; client.watch watches again after its last seq", async () => {
    h = await startHarness(echoScript);
    const client = h.client;
    const { id } = await client.createSession({ agentId: "test" });
    await client.reply({ sessionId: id, input: message("m1") });
    const stop = new AbortController();
    try {
      const once = client.watch(id, { reconnectForMs: 0, signal: stop.signal });
      const again = client.watch(id, { signal: stop.signal });
      const first = await readUntil(once, settles);
      expect(await readUntil(again, settles)).toEqual(first);
      const ended = refusal(once.next());
      await h.restart();
      expect((await ended).codeName).toBe("UNAVAILABLE");
      await client.send(id, message("m2"));
      const after = await readUntil(again, settles);
      expect(after[0]!.seq).toBe(first.at(-1)!.seq + 1);
      expect(after.map(kind).at(-1)).toBe("reply_end");
    } finally {
      stop.abort();
    }
  });

  it("answers NOT_FOUND for another tenant's session", async () => {
    const sha = (token: string) => createHash("sha256").update(token).digest("hex");
    h = await startHarness(
      echoScript,
      {},
      {
        tenants: [
          { id: "acme", tokens: [{ name: "acme", sha256: sha("acme-secret") }] },
          { id: "globex", tokens: [{ name: "globex", sha256: sha("globex-secret") }] },
        ],
      },
    );
    const acme = createParkwayClient(h.parkway.address, { token: "acme-secret" });
    const globex = createParkwayClient(h.parkway.address, { token: "globex-secret" });
    try {
      const { id } = await acme.createSession({ agentId: "test" });
      await acme.reply({ sessionId: id, input: message("m1") });
      expect((await acme.listMessages(id)).messages).toHaveLength(2);
      for (const call of [
        () => globex.listMessages(id),
        () => globex.send(id, message("m2")),
        () => globex.watch(id, { reconnectForMs: 0 }).next(),
      ]) {
        expect((await refusal(call())).codeName).toBe("NOT_FOUND");
      }
      expect((await refusal(acme.watch("no-such-session").next())).codeName).toBe("NOT_FOUND");
    } finally {
      acme.close();
      globex.close();
    }
  });
});

/** Waits until the session's reply parked. */
async function waitParked(client: ParkwayClient, id: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const s = await client.getSession(id);
    if (s.pendingToolCalls.length > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error("the reply did not park");
}
