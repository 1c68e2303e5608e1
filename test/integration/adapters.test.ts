import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { credentials, Metadata, type ServiceError, status } from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { invalidArgument, ParkwayError } from "../../src/common/errors.js";
import { BadRequest } from "../../src/generated/google/rpc/error_details.js";
import { Status } from "../../src/generated/google/rpc/status.js";
import { AgentServiceClient } from "../../src/generated/parkway/v1/agent_service.js";
import { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import { unimplementedAgentService } from "../../src/server/agent-service.js";
import { createServer, type ParkwayServer } from "../../src/server/index.js";
import { createLevelStore } from "../../src/store/index.js";
import { captureLog } from "../helpers/capture-log.js";

const firstEvent = (): ServerEvent => ServerEvent.fromPartial({ id: "e1", seq: 1, sessionId: "s" });

let server: ParkwayServer | undefined;
let client: InstanceType<typeof AgentServiceClient> | undefined;

afterEach(async () => {
  client?.close();
  await server?.shutdown({ graceMs: 1000 });
  server = undefined;
  client = undefined;
});

async function start(agentService: ReturnType<typeof unimplementedAgentService>) {
  const log = captureLog();
  const dir = await mkdtemp(path.join(tmpdir(), "parkway-adapters-"));
  server = createServer({ store: createLevelStore(dir), log, agentService });
  const port = await server.listen("127.0.0.1:0");
  client = new AgentServiceClient(`127.0.0.1:${port}`, credentials.createInsecure());
  return { log, client };
}

function listAgents(c: InstanceType<typeof AgentServiceClient>): Promise<ServiceError> {
  return new Promise((resolve, reject) =>
    c.listAgents({}, new Metadata(), (err) => (err ? resolve(err) : reject(new Error("no error")))),
  );
}

describe("unary adapter", () => {
  it("answers an unexpected error with a generic INTERNAL and logs the real error", async () => {
    const secret = "disk /secret/path exploded";
    const { log, client } = await start({
      ...unimplementedAgentService(),
      listAgents: () => Promise.reject(new Error(secret)),
    });
    const err = await listAgents(client);
    expect(err.code).toBe(status.INTERNAL);
    expect(err.details).not.toContain("secret");
    expect(err.details).toMatch(/internal error/);
    const logged = log.entries.find((e) => e.level === "error");
    expect(logged?.obj).toMatchObject({ method: "ListAgents" });
    expect(String((logged?.obj as { err?: Error }).err?.message)).toBe(secret);
  });

  it("maps a domain error to its status with google.rpc field violations", async () => {
    const { client } = await start({
      ...unimplementedAgentService(),
      listAgents: () =>
        Promise.reject(invalidArgument([{ field: "agent_id", description: "must not be empty" }])),
    });
    const err = await listAgents(client);
    expect(err.code).toBe(status.INVALID_ARGUMENT);
    expect(err.details).toBe("agent_id: must not be empty");
    const bin = err.metadata.get("grpc-status-details-bin")[0] as Buffer;
    const decoded = Status.decode(bin);
    expect(decoded.code).toBe(status.INVALID_ARGUMENT);
    expect(decoded.details[0]?.typeUrl).toBe("type.googleapis.com/google.rpc.BadRequest");
    const bad = BadRequest.decode(decoded.details[0]!.value);
    expect(bad.fieldViolations).toEqual([{ field: "agent_id", description: "must not be empty" }]);
  });
});

describe("bidi adapter", () => {
  it("ends an open stream with UNAVAILABLE when the server shuts down", async () => {
    let handlerFinished = false;
    const { client } = await start({
      ...unimplementedAgentService(),
      chat: async function* (requests, ctx) {
        try {
          yield [firstEvent()];
          await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
        } finally {
          handlerFinished = true;
        }
        void requests;
      },
    });
    const call = client.chat();
    const received: ServerEvent[] = [];
    const ended = new Promise<ServiceError>((resolve) => call.on("error", resolve));
    call.on("data", (e: ServerEvent) => received.push(e));
    await new Promise((resolve) => call.once("data", resolve));
    await server!.shutdown({ graceMs: 2000 });
    server = undefined;
    const err = await ended;
    expect(err.code).toBe(status.UNAVAILABLE);
    expect(received.map((e) => e.seq)).toEqual([1]);
    expect(handlerFinished).toBe(true);
  });

  it("aborts the handler's signal when the client cancels", async () => {
    let resolveAborted!: (reason: unknown) => void;
    const aborted = new Promise((resolve) => (resolveAborted = resolve));
    const { client } = await start({
      ...unimplementedAgentService(),
      chat: async function* (_requests, ctx) {
        yield [firstEvent()];
        await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
        resolveAborted(ctx.signal.reason);
      },
    });
    const call = client.chat();
    call.on("error", () => undefined);
    await new Promise((resolve) => call.once("data", resolve));
    call.cancel();
    expect(String(await aborted)).toContain("cancelled");
  });

  it("streams a thrown domain error as the call's status after the events before it", async () => {
    const { client } = await start({
      ...unimplementedAgentService(),
      chat: async function* () {
        yield [await Promise.resolve(firstEvent())];
        throw new ParkwayError("failed_precondition", "session is parked");
      },
    });
    const call = client.chat();
    const seen: number[] = [];
    call.on("data", (e: ServerEvent) => seen.push(e.seq));
    const err = await new Promise<ServiceError>((resolve) => call.on("error", resolve));
    expect(seen).toEqual([1]);
    expect(err.code).toBe(status.FAILED_PRECONDITION);
    expect(err.details).toBe("session is parked");
  });
});
