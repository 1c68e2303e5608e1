import { existsSync } from "node:fs";
import path from "node:path";
import { type ServiceError, status } from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { fromServiceError, ParkwayClientError } from "../../src/client/index.js";
import type { ClientEvent, ServerEvent } from "../../src/generated/parkway/v1/events.js";
import { collect, type Harness, startHarness } from "../helpers/parkway-harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function rejection(p: Promise<unknown>): Promise<ParkwayClientError> {
  const err = await p.then(
    () => new Error("expected a rejection"),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ParkwayClientError);
  return err as ParkwayClientError;
}

describe("sessions", () => {
  it("creates, gets, lists (paged, filtered) and deletes sessions", async () => {
    h = await startHarness({ turns: [{ match: { lastUser: "" }, repeat: true, text: "ok" }] });
    const created = [];
    for (let i = 0; i < 5; i++) created.push(await h.client.createSession({ agentId: "test" }));
    expect(created[0]!.status).toBe(1);
    // Each session works in a directory of its own inside the agent's.
    expect(created[0]!.workingDirectories).toEqual([path.join(h.workdir, created[0]!.id)]);
    expect(existsSync(path.join(h.workdir, created[0]!.id))).toBe(true);

    const got = await h.client.getSession(created[2]!.id);
    expect(got.id).toBe(created[2]!.id);
    expect(got.agentId).toBe("test");
    expect(got.workingDirectories).toEqual(created[2]!.workingDirectories);

    const page1 = await h.client.listSessions({ pageSize: 2 });
    expect(page1.sessions.map((s) => s.id)).toEqual([created[4]!.id, created[3]!.id]);
    const page2 = await h.client.listSessions({ pageSize: 2, pageToken: page1.nextPageToken });
    expect(page2.sessions.map((s) => s.id)).toEqual([created[2]!.id, created[1]!.id]);
    const page3 = await h.client.listSessions({ pageSize: 2, pageToken: page2.nextPageToken });
    expect(page3.sessions.map((s) => s.id)).toEqual([created[0]!.id]);
    expect(page3.nextPageToken).toBe("");
    // A page token is opaque: only one ListSessions returned is taken, as ListMessages' and
    // ListAuditRecords' are.
    expect(page1.nextPageToken).not.toContain(created[3]!.id);
    const audit = Buffer.from(`a1:aud_${"0".repeat(22)}`).toString("base64url");
    for (const pageToken of ["garbage!!", "zzz", "ses_", created[3]!.id, audit, "x".repeat(300)]) {
      const bad = await rejection(h.client.listSessions({ pageSize: 2, pageToken }));
      expect(bad.code, pageToken).toBe(status.INVALID_ARGUMENT);
      expect(bad.fieldViolations, pageToken).toEqual([
        { field: "page_token", description: "is not a token returned by ListSessions" },
      ]);
    }

    const running = await h.client.listSessions({ status: 2 });
    expect(running.sessions).toEqual([]);
    const idle = await h.client.listSessions({ status: 1, agentId: "test" });
    expect(idle.sessions).toHaveLength(5);

    const chat = await h.client.attach(created[0]!.id);
    await collect(chat.message("hello"));
    chat.close();
    await h.client.deleteSession(created[0]!.id);
    const gone = await rejection(h.client.getSession(created[0]!.id));
    expect(gone.code).toBe(status.NOT_FOUND);
    expect((await h.client.listSessions()).sessions).toHaveLength(4);
    // Deleting a session leaves its files.
    expect(existsSync(created[0]!.workingDirectories[0]!)).toBe(true);
  });

  it("refuses an unknown agent, working directories the agent does not let sessions choose, and bad schemas, naming the field", async () => {
    h = await startHarness({ turns: [{ text: "ok" }] });
    const unknown = await rejection(h.client.createSession({ agentId: "nobody" }));
    expect(unknown.code).toBe(status.INVALID_ARGUMENT);
    expect(unknown.fieldViolations[0]?.field).toBe("agent_id");

    // The agent gives each session its own directory: a client cannot choose one.
    const chosen = await rejection(
      h.client.createSession({ agentId: "test", workingDirectories: [h.workdir] }),
    );
    expect(chosen.code).toBe(status.INVALID_ARGUMENT);
    expect(chosen.fieldViolations).toEqual([
      {
        field: "working_directories",
        description: expect.stringMatching(
          /gives each session its own directory .*shareWorkingDirectories set lets sessions choose/,
        ) as string,
      },
    ]);

    const schema = await rejection(
      h.client.createSession({
        agentId: "test",
        externalTools: [
          { name: "Deploy", description: "", inputSchema: "{not json", metadataSchema: "" },
        ],
      }),
    );
    expect(schema.fieldViolations[0]?.field).toBe("external_tools[0].input_schema");
    expect((await h.client.listSessions()).sessions).toHaveLength(0);
  });

  it("takes fields a caller without types leaves undefined as not given", async () => {
    h = await startHarness({ turns: [{ match: { lastUser: "" }, repeat: true, text: "ok" }] });
    const untyped = h.client as unknown as {
      createSession(request: object): Promise<unknown>;
      listSessions(request: object): Promise<{ sessions: { id: string }[] }>;
    };
    const refused = await rejection(untyped.createSession({ agentId: undefined }));
    expect(refused.codeName).toBe("INVALID_ARGUMENT");
    expect(refused.fieldViolations).toEqual([{ field: "agent_id", description: "is required" }]);
    const session = await h.client.createSession({ agentId: "test" });
    const listed = await untyped.listSessions({ agentId: undefined, pageToken: undefined });
    expect(listed.sessions.map((s) => s.id)).toEqual([session.id]);
  });

  it("lets sessions of an agent that shares its directories work in them or choose inside them", async () => {
    h = await startHarness({ turns: [{ text: "ok" }] }, { shareWorkingDirectories: true });
    const shared = await h.client.createSession({ agentId: "test" });
    expect(shared.workingDirectories).toEqual([h.workdir]);
    const sub = path.join(h.workdir, "sub");
    const chosen = await h.client.createSession({ agentId: "test", workingDirectories: [sub] });
    expect(chosen.workingDirectories).toEqual([sub]);
    const outside = await rejection(
      h.client.createSession({ agentId: "test", workingDirectories: ["/etc"] }),
    );
    expect(outside.code).toBe(status.INVALID_ARGUMENT);
    expect(outside.fieldViolations[0]?.field).toBe("working_directories[0]");
  });

  it("answers NOT_FOUND for an unknown session on every RPC", async () => {
    h = await startHarness({ turns: [{ text: "ok" }] });
    for (const call of [
      h.client.getSession("ses_missing"),
      h.client.deleteSession("ses_missing"),
      h.client.reply({
        sessionId: "ses_missing",
        input: { $case: "userMessage", value: { text: "x", content: [] } },
      }),
      h.client.attach("ses_missing"),
    ]) {
      const err = await rejection(call);
      expect(err.code).toBe(status.NOT_FOUND);
      expect(err.message).toContain("ses_missing");
    }
  });

  it("refuses a user message while a reply is running and changes nothing", async () => {
    h = await startHarness({ turns: [{ text: "slow answer", chunkSize: 1, delayMs: 30 }] });
    const session = await h.client.createSession({ agentId: "test" });
    const chat = await h.client.attach(session.id);
    await chat.send({ $case: "userMessage", value: { text: "first", content: [] } });
    const refused = await rejection(
      chat.send({ $case: "userMessage", value: { text: "second", content: [] } }),
    );
    expect(refused.code).toBe(status.FAILED_PRECONDITION);
    expect(refused.message).toMatch(/still running/);
    const events = await collect(chat.untilSettled());
    chat.close();
    expect(events[events.length - 1]?.event?.$case).toBe("replyEnd");
    expect(h.model.requests).toHaveLength(1);
    expect(JSON.stringify(h.model.requests[0]!.messages)).not.toContain("second");
  });

  it("requires attach as the first message of a Chat stream", async () => {
    h = await startHarness({ turns: [{ text: "ok" }] });
    const call = h.client.agentService.chat();
    const err = await new Promise<{ code: number; details: string }>((resolve) => {
      call.on("error", (e) => resolve(e as unknown as { code: number; details: string }));
      call.on("data", () => undefined);
      call.write({
        sessionId: "x",
        requestId: "r1",
        event: { $case: "userMessage", value: { text: "hi", content: [] } },
      });
    });
    expect(err.code).toBe(status.FAILED_PRECONDITION);
    expect(err.details).toMatch(/attach/);
  });

  it("requires attach.session_id, and an event's session_id beside it to name the same session", async () => {
    h = await startHarness({ turns: [{ text: "ok" }] });
    const session = await h.client.createSession({ agentId: "test" });
    /** The status a raw Chat stream ends with after `first`, and what it received before. */
    const firstMessage = (first: ClientEvent) =>
      new Promise<{ err: ParkwayClientError | undefined; received: ServerEvent[] }>((resolve) => {
        const call = h!.client.agentService.chat();
        const received: ServerEvent[] = [];
        call.on("data", (e: ServerEvent) => received.push(e));
        call.on("error", (e: ServiceError) => resolve({ err: fromServiceError(e), received }));
        call.on("end", () => resolve({ err: undefined, received }));
        call.write(first);
        call.end();
      });
    const attach = (eventSession: string, attachSession: string): ClientEvent => ({
      sessionId: eventSession,
      requestId: "a1",
      event: { $case: "attach", value: { sessionId: attachSession, afterSeq: 0 } },
    });

    // attach.session_id names the session; the event's own session_id does not stand in for it.
    for (const eventSession of ["", "undefined", session.id]) {
      const { err, received } = await firstMessage(attach(eventSession, ""));
      expect(err?.codeName, eventSession).toBe("INVALID_ARGUMENT");
      expect(err?.message).toBe("attach.session_id: is required");
      expect(err?.fieldViolations).toEqual([
        { field: "attach.session_id", description: "is required" },
      ]);
      expect(received).toEqual([]);
    }
    // Both set and different: which one is meant is not guessed.
    const other = await h.client.createSession({ agentId: "test" });
    for (const eventSession of [other.id, "ses_unknown"]) {
      const { err, received } = await firstMessage(attach(eventSession, session.id));
      expect(err?.codeName, eventSession).toBe("INVALID_ARGUMENT");
      expect(err?.fieldViolations.map((v) => v.field)).toEqual(["session_id"]);
      expect(err?.fieldViolations[0]?.description).toContain(
        `attach.session_id names ("${session.id}")`,
      );
      expect(received).toEqual([]);
    }
    // The same session, or none, on the event: attached (and acknowledged), the stream then ends.
    for (const eventSession of [session.id, ""]) {
      const { err, received } = await firstMessage(attach(eventSession, session.id));
      expect(err, eventSession).toBeUndefined();
      expect(received.map((e) => e.event?.$case)).toEqual(["inputAck"]);
    }
  });

  it("refuses attach and Watch with an after_seq beyond the log, naming each request's field", async () => {
    h = await startHarness({ turns: [{ text: "ok" }] });
    const session = await h.client.createSession({ agentId: "test" });
    const err = await rejection(h.client.attach(session.id, { afterSeq: 5 }));
    expect(err.code).toBe(status.INVALID_ARGUMENT);
    expect(err.fieldViolations[0]?.field).toBe("attach.after_seq");
    // Watch names its own request's field.
    const watched = await rejection(
      h.client.watch(session.id, { afterSeq: 999, reconnectForMs: 0 }).next(),
    );
    expect(watched.code).toBe(status.INVALID_ARGUMENT);
    expect(watched.fieldViolations).toEqual([
      { field: "after_seq", description: "is 999, beyond the session's last seq 0" },
    ]);
  });

  it("lists the configured agents with their tools", async () => {
    h = await startHarness({ turns: [{ text: "ok" }] }, { maxIters: 7, confirmTimeout: "2m" });
    const agents = await h.client.listAgents();
    expect(agents).toHaveLength(1);
    expect(agents[0]!.id).toBe("test");
    expect(agents[0]!.maxIters).toBe(7);
    expect(agents[0]!.confirmTimeout?.seconds).toBe(120);
    expect(agents[0]!.tools.map((t) => t.name).sort()).toEqual([
      "AskUser",
      "Bash",
      "Edit",
      "Glob",
      "Grep",
      "Read",
      "Write",
    ]);
    const read = agents[0]!.tools.find((t) => t.name === "Read")!;
    expect(JSON.parse(read.inputSchema)).toMatchObject({ type: "object", required: ["file_path"] });
  });
});

describe("max iterations", () => {
  it("ends with REPLY_END(exceed_max_iters) when the model keeps calling tools", async () => {
    h = await startHarness(
      {
        turns: [
          { match: { lastUser: "" }, toolCalls: [{ name: "Glob", input: { pattern: "*" } }] },
          {
            match: { toolName: "Glob" },
            repeat: true,
            toolCalls: [{ name: "Glob", input: { pattern: "*" } }],
          },
        ],
      },
      { maxIters: 3 },
    );
    const session = await h.client.createSession({ agentId: "test" });
    const chat = await h.client.attach(session.id);
    const events = await collect(chat.message("loop"));
    chat.close();
    const end = events[events.length - 1]!;
    expect(end.event?.$case === "replyEnd" && end.event.value.finishedReason).toBe(3);
    expect(h.model.requests).toHaveLength(3);
  });
});
