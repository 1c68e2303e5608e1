import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One request the policy service received. */
export interface PolicyRequestSeen {
  headers: IncomingMessage["headers"];
  body: {
    tool: string;
    input: Record<string, unknown>;
    callId: string;
    session: { id: string; tenant: string; agent: string; mode: string };
    engine: { behavior: string; check: string; reason: string };
  } & Record<string, unknown>;
}

/** What the service answers to a request: a JSON answer, or "hang" (never answers). */
export type PolicyRule = (body: PolicyRequestSeen["body"]) => object | "hang";

/** A real HTTP policy decision point on 127.0.0.1 that answers by `rule`. */
export interface PolicyService {
  url: string;
  requests: PolicyRequestSeen[];
  /** Requests that were left unanswered and whose connection the client closed, by session id. */
  abandoned: string[];
  /**
   * Answers wait until this many requests have arrived in all (default 0: answer at once), which
   * proves that they were sent together.
   */
  gather: number;
  close(): Promise<void>;
}

export async function startPolicyService(rule: PolicyRule): Promise<PolicyService> {
  const requests: PolicyRequestSeen[] = [];
  const abandoned: string[] = [];
  const hanging = new Set<ServerResponse>();
  const waiting: (() => void)[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as PolicyRequestSeen["body"];
      requests.push({ headers: req.headers, body });
      const answer = rule(body);
      if (answer === "hang") {
        hanging.add(res);
        res.on("close", () => {
          hanging.delete(res);
          if (!res.writableEnded) abandoned.push(body.session.id);
        });
      } else {
        waiting.push(() =>
          res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer)),
        );
      }
      if (requests.length >= service.gather) for (const send of waiting.splice(0)) send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const service: PolicyService = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/decide`,
    requests,
    abandoned,
    gather: 0,
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return service;
}
