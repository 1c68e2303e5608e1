/**
 * Streamed text deltas per second, as a fixed amount of work. The Go load generator (bench/go)
 * drives N sessions at once, each sending "stream" as soon as its previous reply ended, R times;
 * the scripted model (zero delay, in this process) answers each with `streamDeltas` text deltas of
 * 8 characters. Rate = TEXT_BLOCK_DELTA events received ÷ time from the first send to the last
 * REPLY_END. The baseline is the bare grpc-js echo driven by the same generator over the same
 * number of streams, the same number of messages per stream: ClientEvents pipelined (256 in
 * flight per stream), each answered with a copy of a real TEXT_BLOCK_DELTA received from Parkway
 * (same size, same codec). A warm-up reply runs first; Parkway and echo then alternate, twice
 * each in the full run, and the medians are reported.
 */
import path from "node:path";
import type { BenchConfig } from "../lib/config.js";
import { buildLoad, runLoad, withCpu } from "../lib/go-load.js";
import { chatRequest, timeCompletion } from "../lib/model-probe.js";
import { type Row, row, single } from "../lib/rows.js";
import { startEcho, startStack } from "../lib/stack.js";
import { median, percentile } from "../lib/stats.js";
import { describeCores } from "../lib/cores.js";

interface ParkwayRun {
  rate: number;
  count: number;
  seconds: number;
  replies: number;
  firstDeltaMs: number[];
  sampleDelta: string;
  deltaBytes: number;
  deltaText: number;
}

interface EchoRun {
  rate: number;
  count: number;
  templateBytes: number;
}

export async function throughput(config: BenchConfig): Promise<Row[]> {
  const bin = await buildLoad(path.join(config.scratch, "bin"));
  const stack = await startStack(config, { profile: "throughput" });
  const echoServer = await startEcho();
  const reps = config.smoke ? 1 : 2;
  const rows: Row[] = [];
  try {
    if (!stack.model)
      throw new Error("the throughput rows need the scripted model in this process");
    const alone = await timeCompletion(stack.model.url, chatRequest("stream"));
    const modelRate = alone.chunks / (alone.total / 1e6);
    const address = stack.parkway.ready.address;
    await runLoad(bin, ["-addr", address, "-replies", "1", "stream-parkway"]); // warm-up
    for (const sessions of [1, config.manySessions]) {
      const replies = sessions === 1 ? config.singleSessionReplies : 1;
      const parkway: number[] = [];
      const echo: number[] = [];
      const cores = { parkway: [] as number[], echo: [] as number[] };
      let sample: ParkwayRun | undefined;
      let echoRun: EchoRun | undefined;
      const firsts: number[] = [];
      for (let rep = 0; rep < reps; rep++) {
        const streams = ["-streams", String(sessions), "-conns", "1"];
        const [p, pc] = await withCpu(stack.parkway.pid, () =>
          runLoad<ParkwayRun>(bin, [
            ...["-addr", address, ...streams, "-replies", String(replies)],
            "stream-parkway",
          ]),
        );
        sample ??= p;
        firsts.push(...p.firstDeltaMs);
        const [e, ec] = await withCpu(echoServer.pid, () =>
          runLoad<EchoRun>(bin, [
            "-addr",
            echoServer.ready.address,
            ...streams,
            ...["-messages", String(replies * config.streamDeltas)],
            "-template",
            sample!.sampleDelta,
            "-text",
            String(sample!.deltaText),
            "stream-echo",
          ]),
        );
        echoRun = e;
        parkway.push(p.rate);
        echo.push(e.rate);
        cores.parkway.push(pc);
        cores.echo.push(ec);
      }
      const label = sessions === 1 ? "1 session" : `${sessions} sessions`;
      rows.push(
        row(
          {
            id: `stream.${sessions}`,
            name: `Streamed text deltas, ${label}`,
            unit: "per_s",
            parkway: single(
              `TEXT_BLOCK_DELTA/s at the Go client, median of ${reps}`,
              median(parkway),
            ),
            baseline: single(
              `bare grpc-js pipelined echo, ${sessions} stream(s), median of ${reps}`,
              median(echo),
            ),
            note:
              `Runs: Parkway ${parkway.map(Math.round).join(", ")}/s; echo ${echo.map(Math.round).join(", ")}/s; ` +
              `${sessions} session(s) × ${replies} repl${replies === 1 ? "y" : "ies"} × ${config.streamDeltas} deltas. ` +
              `First delta at the client after p50 ${Math.round(percentile(firsts, 50))} ms / max ${Math.round(percentile(firsts, 100))} ms. ` +
              `CPU cores used during the runs: Parkway server ` +
              `${median(cores.parkway).toFixed(2)}, echo server ${median(cores.echo).toFixed(2)} ` +
              `(${describeCores()}; the Go client on the load side). ` +
              `Message: TEXT_BLOCK_DELTA ${sample!.deltaBytes} B (${sample!.deltaText} characters); ` +
              `echo answer ${echoRun!.templateBytes} B. The scripted model alone streams ` +
              `${Math.round(modelRate).toLocaleString("en-US")} chunks/s to a bare HTTP client.`,
          },
          { minRatio: 0.6, text: "≥ 0.6× echo" },
        ),
      );
    }
  } finally {
    await echoServer.close();
    await stack.close();
  }
  return rows;
}
