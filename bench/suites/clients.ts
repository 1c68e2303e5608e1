/**
 * The client libraries against their own raw generated stubs: the CPU time a client process spends
 * reading one whole streamed reply (user message → REPLY_END, `streamDeltas` text deltas of 8
 * characters) through the client library ÷ the same through the raw stubs of the same language,
 * in the same run. One compiled Parkway server and the scripted model (zero delay, in this
 * process); every reader is a process of its own (bench/servers/client-reader.ts for TypeScript,
 * `parkway-load read-client|read-stub` of bench/go for Go, bench/servers/client_reader.py for
 * Python asyncio and blocking), attached to a session of its own, which measures its own user +
 * system CPU time around the replies it reads (start-up, session creation, attach and a warm-up
 * reply excluded). The two sides of a language take turns in rounds, the order alternating; the
 * languages' order rotates too. Only the reader being measured is busy; the others wait on stdin.
 */
import { existsSync } from "node:fs";
import { execFile } from "node:child_process";
import { cpus, loadavg } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { BenchConfig } from "../lib/config.js";
import { buildLoad, type LoadProcess, startLoad } from "../lib/go-load.js";
import { type Row, row, single } from "../lib/rows.js";
import { startStack } from "../lib/stack.js";
import { median } from "../lib/stats.js";
import { describeCores } from "../lib/cores.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** One line of a reader: `replies` whole replies read back to back. */
interface ReadResult {
  cpu_s: number;
  wall_s: number;
  deltas: number;
  replies: number;
}

interface Language {
  id: string;
  name: string;
  client: string;
  stub: string;
  /**
   * Replies per round at full size: about 150 ms of a client's CPU, so that a round outweighs the
   * scheduler's and the garbage collector's jitter (a Go reply takes ≈9 ms, TypeScript ≈18 ms,
   * Python ≈120 ms).
   */
  replies: number;
  start(side: "client" | "stub", address: string, replies: number): LoadProcess;
}

/**
 * The Python of the repository's virtual environment, with the client's dependencies installed
 * (scripts/py-venv.sh, run when they are missing: a venv `npm run gen` made holds only the code
 * generator); the readers import the client from clients/python/src (PYTHONPATH), so the sources
 * are measured.
 */
async function python(): Promise<string> {
  const venv = path.join(ROOT, ".venv", "bin", "python");
  const ready = existsSync(venv)
    ? await promisify(execFile)(venv, ["-c", "import grpc, google.rpc.status_pb2"]).then(
        () => true,
        () => false,
      )
    : false;
  if (ready) return venv;
  const { stdout } = await promisify(execFile)("bash", ["scripts/py-venv.sh"], {
    cwd: ROOT,
    timeout: 600_000,
  });
  return stdout.trim();
}

async function languages(config: BenchConfig): Promise<Language[]> {
  const bin = await buildLoad(path.join(config.scratch, "bin"));
  const py = await python();
  const pyEnv = { PYTHONPATH: path.join(ROOT, "clients", "python", "src"), PYTHONUNBUFFERED: "1" };
  const pyReader = path.join(ROOT, "bench", "servers", "client_reader.py");
  const tsReader = path.join(ROOT, "bench", "servers", "client-reader.ts");
  const pyStart = (kind: string) => (side: string, address: string, replies: number) =>
    startLoad(py, [pyReader, address, `${kind}-${side}`, String(replies)], pyEnv);
  return [
    {
      id: "ts",
      name: "TypeScript",
      client: "src/client (compiled): session.message(text), for await until REPLY_END",
      stub: "ts-proto/grpc-js AgentServiceClient.chat(): write, then the call's async iterator until REPLY_END",
      replies: 8,
      start: (side, address, replies) =>
        startLoad("node", ["--import", "tsx", tsReader, address, side, String(replies)]),
    },
    {
      id: "go",
      name: "Go",
      client: "clients/go: range session.Send(ctx, text) until REPLY_END",
      stub: "clients/go/gen AgentServiceClient.Chat: Send, then Recv() until REPLY_END",
      replies: 16,
      start: (side, address, replies) =>
        startLoad(bin, ["-addr", address, "-replies", String(replies), `read-${side}`]),
    },
    {
      id: "py_asyncio",
      name: "Python asyncio",
      client: "parkway.AsyncClient: async for event in session.send(text)",
      stub: "grpcio aio AgentServiceStub.Chat(): await call.write, then await call.read() until REPLY_END",
      replies: 4,
      start: pyStart("aio"),
    },
    {
      id: "py_blocking",
      name: "Python blocking",
      client: "parkway.Client (sync.py, sync_session.py): for event in session.send(text)",
      stub: "grpcio AgentServiceStub.Chat(iter(queue.get, None)): queue.put, then next(responses) until REPLY_END",
      replies: 4,
      start: pyStart("sync"),
    },
  ];
}

export async function clientRows(config: BenchConfig): Promise<Row[]> {
  const load0 = loadavg()[0]!;
  const rounds = config.smoke ? 2 : 12;
  const langs = await languages(config);
  const stack = await startStack(config, { profile: "clients" });
  const address = stack.parkway.ready.address;
  const readers: { lang: Language; client: LoadProcess; stub: LoadProcess }[] = [];
  const started: LoadProcess[] = [];
  const start = async (lang: Language, side: "client" | "stub") => {
    const p = lang.start(side, address, config.smoke ? 1 : lang.replies);
    started.push(p);
    await p.next(); // its session created, attached, a warm-up reply read
    return p;
  };
  try {
    for (const lang of langs) {
      readers.push({ lang, client: await start(lang, "client"), stub: await start(lang, "stub") });
    }
    const got = new Map(readers.map((r) => [r.lang.id, { client: [], stub: [] }])) as Map<
      string,
      { client: ReadResult[]; stub: ReadResult[] }
    >;
    for (let round = 0; round < rounds; round++) {
      for (let j = 0; j < readers.length; j++) {
        const r = readers[(round + j) % readers.length]!;
        const sides =
          round % 2 === 0 ? (["client", "stub"] as const) : (["stub", "client"] as const);
        for (const side of sides) {
          r[side].advance();
          got.get(r.lang.id)![side].push(await r[side].next<ReadResult>());
        }
      }
    }
    const machine =
      `${cpus().length} cores (${describeCores()}; the reader being measured on the load side) ` +
      `and whatever else runs on the machine; the other readers wait. Load ` +
      `average ${load0.toFixed(2)} when the suite started, ${loadavg()[0]!.toFixed(2)} when it ended.`;
    return readers.map(({ lang }) => {
      const { client, stub } = got.get(lang.id)!;
      const replies = client[0]!.replies;
      const perReply = (rs: ReadResult[]) => rs.map((x) => (x.cpu_s / x.replies) * 1e6);
      const rate = (rs: ReadResult[]) => median(rs.map((x) => x.deltas / x.wall_s));
      const cpuRate = (rs: ReadResult[]) => median(rs.map((x) => x.deltas / x.cpu_s));
      const c = perReply(client);
      const s = perReply(stub);
      // Paired: each round's client and stubs ran next to each other, under the same load.
      const roundRatios = c.map((x, i) => x / s[i]!);
      const ratio = median(roundRatios);
      const deltas = client[0]!.deltas / client[0]!.replies;
      const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
      const measured = row({
        id: `clients.${lang.id}`,
        name: `${lang.name} client vs its raw stubs: CPU per ${fmt(deltas)}-delta reply`,
        unit: "us",
        parkway: single(
          `${lang.name} client's process CPU (user + system) per reply, median of ${rounds} rounds`,
          median(c),
        ),
        baseline: single(
          `raw generated stubs' process CPU per reply, median of ${rounds} rounds`,
          median(s),
        ),
        note:
          `Client: ${lang.client}. Stubs: ${lang.stub}. Both sides, each in its own process with its own ` +
          `session: create the session and attach (the stubs: attach written, its input_ack read) and read ` +
          `one warm-up reply, not timed; then per round ${replies} repl${replies === 1 ? "y" : "ies"} back ` +
          `to back, each the user message "stream" sent and the events read to REPLY_END, counting the ` +
          `TEXT_BLOCK_DELTAs (the client awaits the message's input_ack before reading; the stubs read it ` +
          `among the events). ${rounds} rounds, the sides alternating which goes first. Deltas/s at the ` +
          `reader (wall clock): client ${fmt(rate(client))}, stubs ${fmt(rate(stub))}; per CPU second: ` +
          `client ${fmt(cpuRate(client))}, stubs ${fmt(cpuRate(stub))}. The ratio is the median of the ` +
          `per-round ratios (client ÷ stubs of the same round): ` +
          `${roundRatios.map((x) => x.toFixed(2)).join(", ")}; the ratio of the two medians above is ` +
          `${(median(c) / median(s)).toFixed(2)}. ` +
          machine,
      });
      return {
        ...measured,
        ratio,
        target: { text: "≤ 1.2× raw stub CPU (median of per-round ratios)", met: ratio <= 1.2 },
      };
    });
  } finally {
    for (const p of started) p.kill();
    await stack.close();
  }
}
