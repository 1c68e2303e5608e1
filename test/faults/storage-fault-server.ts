import { startScriptedModel, type ScriptedModelServer } from "../../src/model/scripted/index.js";
import type { SpawnedServer } from "../helpers/spawn-server.js";
import type { SmallDisk } from "../helpers/store-faults.js";

/** A text streamed in small deltas, so a fill can land in the middle of it. */
export const STREAMED =
  "streamed text of a reply, arriving in small pieces so the disk can fill meanwhile";

/**
 * The scripted model: "go …" asks for a Bash call that appends the message to effects.txt, "say …"
 * streams `STREAMED`, "check …" answers at once.
 */
export async function startModel(): Promise<ScriptedModelServer> {
  return startScriptedModel({
    script: {
      turns: [
        {
          match: { lastUser: "^go " },
          repeat: true,
          toolCalls: [{ name: "Bash", input: { command: 'echo "{{last_user}}" >> effects.txt' } }],
        },
        { match: { toolName: "Bash" }, repeat: true, text: "ran it" },
        { match: { lastUser: "^say " }, repeat: true, text: STREAMED, chunkSize: 4, delayMs: 2 },
        { match: { lastUser: "^check " }, repeat: true, text: "checked" },
      ],
    },
  });
}

/** Waits for the server's exit for up to `ms`; undefined if it is still running. */
export function exitWithin(server: SpawnedServer, ms: number): Promise<number | null | undefined> {
  return new Promise((resolve) => {
    if (server.child.exitCode !== null) return resolve(server.child.exitCode);
    const timer = setTimeout(() => resolve(undefined), ms);
    server.child.once("exit", (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

/**
 * The kind of file LevelDB could not write, from the server's "storage failed" log line (log,
 * ldb, MANIFEST, CURRENT; "other" when the message names none), or undefined when nothing failed.
 */
export function failedFile(output: readonly string[]): string | undefined {
  const failure = output.find((line) => line.includes("storage failed"));
  if (!failure) return undefined;
  const kind = /\.(log|ldb|sst)\b|MANIFEST|CURRENT/.exec(failure);
  return kind?.[1] ?? kind?.[0] ?? "other";
}

/** How a start on a nearly full disk ended. */
export type NearlyFullStart = "refused" | "failStopped" | "served";

/**
 * Starts the server on a disk with `leaveBytes` free, where opening LevelDB (replaying the log into
 * a table, a new MANIFEST and log, a compaction in the background) and the recovery of interrupted
 * replies may run out of space. The server must refuse to start with one line naming the full
 * disk, or start, take `probe` (writes whose acknowledgements the caller keeps), and then fail-stop
 * (75) or serve until it is stopped. Returns the outcome and the file LevelDB failed to write, or a
 * violation.
 */
export async function startNearlyFull(
  disk: SmallDisk,
  leaveBytes: number,
  launch: () => Promise<SpawnedServer>,
  probe: (server: SpawnedServer) => Promise<void>,
): Promise<{ outcome: NearlyFullStart; file?: string } | { violation: string }> {
  await disk.fill(leaveBytes);
  let server: SpawnedServer;
  try {
    server = await launch();
  } catch (err) {
    const text = String(err);
    const oneLine = /parkway: cannot (open the store|use data directory) .*No space left on device/;
    if (oneLine.test(text) && !/\n\s+at /.test(text)) {
      return { outcome: "refused", file: failedFile([`storage failed ${text}`]) };
    }
    return { violation: `start on a nearly full disk failed: ${text.slice(-600)}` };
  }
  await probe(server);
  const code = (await exitWithin(server, 300)) ?? (await server.stop());
  const output = server.output.join("\n");
  if (/unhandled|uncaught/i.test(output)) {
    return { violation: `start on a nearly full disk: ${output.slice(-600)}` };
  }
  const file = failedFile(server.output);
  if (code === 75) return { outcome: "failStopped", ...(file ? { file } : {}) };
  if (code === 0) return { outcome: "served" };
  return { violation: `a server started on a nearly full disk exited with ${code}` };
}
