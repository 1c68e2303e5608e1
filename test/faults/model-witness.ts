import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";

/** One model call as the model saw it. */
export interface WitnessedCall {
  /** The model name the calling node was configured with. */
  model: string;
  /** The text of the request's last user message. */
  lastUser: string;
  /** When the request arrived and when its response ended (ms since the epoch). */
  from: number;
  to: number;
}

/** A recording proxy in front of a model. */
export interface ModelWitness {
  /** The base URL to give the nodes instead of the model's. */
  readonly url: string;
  readonly calls: readonly WitnessedCall[];
  close(): Promise<void>;
}

/**
 * An HTTP proxy in front of the model at `target` (a base URL) that notes every chat completion
 * request: which node life made it (its model name), for which message, from its arrival to the end
 * of its response. It is the model's own record, so it sees the calls of a node whose writes its
 * database refused (a node that lost a lease), which the event log never holds.
 */
export async function startModelWitness(target: string): Promise<ModelWitness> {
  const upstream = new URL(target);
  const calls: WitnessedCall[] = [];
  const server = createServer((req, res) => {
    const from = Date.now();
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const call = describe(body, from);
      const forward = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: upstream.host },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forward.on("error", () => res.destroy());
      // Sent, or cut off with its node: the call is over either way.
      res.on("close", () => {
        forward.destroy();
        if (call) calls.push({ ...call, to: Date.now() });
      });
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${upstream.pathname}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The model and last user message of a chat completion request body, if it is one. */
function describe(body: Buffer, from: number): Omit<WitnessedCall, "to"> | undefined {
  try {
    const parsed = JSON.parse(body.toString("utf8")) as {
      model?: string;
      messages?: { role?: string; content?: unknown }[];
    };
    const user = [...(parsed.messages ?? [])].reverse().find((m) => m.role === "user");
    const content = user?.content;
    const lastUser =
      typeof content === "string"
        ? content
        : Array.isArray(content)
          ? content.map((p: { text?: string }) => p.text ?? "").join("")
          : "";
    return { model: parsed.model ?? "", lastUser, from };
  } catch {
    return undefined;
  }
}
