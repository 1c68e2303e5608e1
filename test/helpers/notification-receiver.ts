import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import type { NotificationBody } from "../../src/session/notifications/notification-body.js";

/** One POST the receiver got. */
export interface Received {
  headers: IncomingHttpHeaders;
  /** The body as sent (what the signature covers). */
  text: string;
  body: NotificationBody;
  /** The status it was answered with. */
  status: number;
  /** When it arrived (ms since the epoch), once its body was read. */
  at: number;
}

/** A real HTTP receiver of park notifications on 127.0.0.1. */
export interface NotificationReceiver {
  url: string;
  received: Received[];
  /** The status of the next answer, given what came so far (default 200). */
  answer: (body: NotificationBody, received: readonly Received[]) => number;
  /** Resolves once `ready(received)` holds (checked on each POST). */
  waitFor(ready: (received: readonly Received[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startNotificationReceiver(): Promise<NotificationReceiver> {
  const waiters = new Set<() => void>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const body = JSON.parse(text) as NotificationBody;
      const status = receiver.answer(body, receiver.received);
      receiver.received.push({ headers: req.headers, text, body, status, at: Date.now() });
      res.writeHead(status, { "content-type": "text/plain" }).end(status < 300 ? "ok" : "not now");
      for (const wake of waiters) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const receiver: NotificationReceiver = {
    url: `http://127.0.0.1:${port}/hooks/parkway`,
    received: [],
    answer: () => 200,
    waitFor(ready, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!ready(receiver.received)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`receiver: not ready after ${receiver.received.length} POSTs`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return receiver;
}
