import { createServer } from "node:http";
import { nodeFetch } from "../src/model/http-fetch.js";
const server = createServer((req, res) => {
  req.resume();
  req.on("end", async () => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    for (let i = 0; i < 2000; i++) { if (!res.write(`data: {"i":${i}}\n\n`)) await new Promise((r) => res.once("drain", r)); if (i % 50 === 0) await new Promise((r) => setImmediate(r)); }
    res.end("data: [DONE]\n\n");
  });
});
server.on("clientError", (e) => console.log("server clientError", (e as any).code));
server.on("connection", (s) => s.on("error", (e) => console.log("server socket error", (e as any).code)));
await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
const url = `http://127.0.0.1:${(server.address() as any).port}/x`;
const f = nodeFetch();
for (let round = 0; round < 5; round++) {
  const res = await Promise.allSettled(Array.from({ length: 64 }, async () => {
    const r = await f(url, { method: "POST", body: "{}" });
    let n = 0; for await (const c of r.body as any) n += c.length; return n;
  }));
  const bad = res.filter((r) => r.status === "rejected");
  console.log("round", round, "failed", bad.length, bad.slice(0,1).map((b: any) => b.reason?.code ?? b.reason));
}
server.close(); process.exit(0);
