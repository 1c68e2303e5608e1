import { connect, createServer, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { nowUs } from "./stats.js";

/**
 * A TCP pass-through in front of the scripted model that notes when the model's response bytes are
 * handed on to Parkway: `lastByteAt` holds the time (µs, `nowUs`) each response ending with the
 * SSE `[DONE]` sentinel was written to Parkway's socket, i.e. the moment Parkway can know the
 * model's turn is over.
 */
export interface TimingProxy {
  /** Base URL for Parkway (`http://127.0.0.1:PORT/v1`). */
  readonly url: string;
  readonly lastByteAt: number[];
  close(): Promise<void>;
}

const DONE = Buffer.from("[DONE]");

export async function startTimingProxy(modelUrl: string): Promise<TimingProxy> {
  const upstream = new URL(modelUrl);
  const lastByteAt: number[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((down) => {
    const up = connect(Number(upstream.port), upstream.hostname);
    down.setNoDelay(true);
    up.setNoDelay(true);
    for (const s of [down, up]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => undefined);
    }
    down.on("data", (chunk: Buffer) => up.write(chunk));
    up.on("data", (chunk: Buffer) => {
      down.write(chunk);
      if (chunk.includes(DONE)) lastByteAt.push(nowUs());
    });
    down.on("end", () => up.end());
    up.on("end", () => down.end());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    lastByteAt,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
