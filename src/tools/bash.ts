import { spawn } from "node:child_process";
import { StringDecoder } from "node:string_decoder";
import { z } from "zod";
import { OutputCap } from "./output-cap.js";
import { realWorkingDirectories } from "./paths.js";
import { KILL_GRACE_MS, killGroup } from "./process-group.js";
import type { Tool, ToolContext, ToolResult } from "./tool.js";
import { errorResult, interruptedResult } from "./tool-result.js";

export const BASH_DEFAULT_TIMEOUT_MS = 120_000;
export const BASH_MAX_TIMEOUT_MS = 600_000;
/** How long to wait for the output pipes to close once the command's process group is gone. */
const DRAIN_MS = 500;

export const bashInputSchema = z.strictObject({
  command: z
    .string()
    .min(1)
    .describe("The command to run with `bash -c`, in the first working directory."),
  description: z
    .string()
    .optional()
    .describe("What the command does, in 5–10 words, for the person watching."),
  timeout: z
    .number()
    .int()
    .positive()
    .max(BASH_MAX_TIMEOUT_MS)
    .optional()
    .describe(
      `Milliseconds before the command is killed (default ${BASH_DEFAULT_TIMEOUT_MS}, max ${BASH_MAX_TIMEOUT_MS}).`,
    ),
});

export type BashInput = z.infer<typeof bashInputSchema>;

export interface BashOptions {
  /** Milliseconds between SIGTERM and SIGKILL when the command's group is ended. */
  killGraceMs?: number;
}

/**
 * Runs `bash -c command` (not a login shell; stdin is empty; the server's environment is inherited)
 * with cwd = the first working directory, in its own process group.
 *
 * - stdout and stderr are streamed together through `ctx.emitText` as they arrive.
 * - At `ctx.maxOutputBytes` streaming stops and "[output truncated at N bytes]" is emitted; the
 *   command keeps running (its further output is read and discarded) so that a verbose command is
 *   not cut off half-way; the timeout still bounds it.
 * - The timeout and `ctx.signal` end the whole group: SIGTERM, then SIGKILL after a short grace.
 * - Background processes do not outlive the call: once bash exits, what is left of its group is
 *   ended the same way before the result is returned.
 * - `output` is exactly the text emitted: the kept output, the truncation note, then a last line
 *   "exit code N" / "killed by signal S" / "timed out after N ms" / "interrupted" unless it exited 0.
 */
export function createBashTool(options: BashOptions = {}): Tool<BashInput> {
  const killGraceMs = options.killGraceMs ?? KILL_GRACE_MS;
  return {
    name: "Bash",
    description:
      "Runs a bash command in the first working directory and returns its combined stdout and " +
      "stderr. Use it for builds, tests, git and other terminal work; prefer Read, Edit, Write, " +
      "Glob and Grep for files. Commands are killed after `timeout` ms (default 2 minutes); " +
      "long output is truncated; background processes are stopped when the command exits.",
    inputSchema: bashInputSchema,
    isReadOnly: () => false,
    isConcurrencySafe: () => false,
    run: (input, ctx) => runBash(input, ctx, killGraceMs),
  };
}

/** The Bash tool with the default kill grace. */
export const bashTool: Tool<BashInput> = createBashTool();

async function runBash(
  input: BashInput,
  ctx: ToolContext,
  killGraceMs: number,
): Promise<ToolResult> {
  if (ctx.signal.aborted) return interruptedResult();
  const [cwd] = await realWorkingDirectories(ctx.workingDirectories);
  if (cwd === undefined) return errorResult("There is no working directory to run the command in.");
  const timeoutMs = input.timeout ?? BASH_DEFAULT_TIMEOUT_MS;

  const cap = new OutputCap(ctx.maxOutputBytes);
  let noted = false;
  const emit = (text: string) => {
    if (noted) return;
    const kept = cap.push(text);
    if (kept !== "") ctx.emitText(kept);
    if (cap.truncated) {
      noted = true;
      ctx.emitText(cap.note);
    }
  };

  const child = spawn("bash", ["-c", input.command], {
    cwd,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const decoders = [new StringDecoder("utf8"), new StringDecoder("utf8")] as const;
  child.stdout.on("data", (chunk: Buffer) => emit(decoders[0].write(chunk)));
  child.stderr.on("data", (chunk: Buffer) => emit(decoders[1].write(chunk)));
  const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(
    (resolve, reject) => {
      child.once("exit", (code, signal) => resolve({ code, signal }));
      child.on("error", reject);
    },
  );

  let stoppedBy: "timeout" | "interrupt" | undefined;
  let ending: Promise<void> | undefined;
  const stop = (why: "timeout" | "interrupt") => {
    if (stoppedBy !== undefined || child.pid === undefined) return;
    stoppedBy = why;
    ending = killGroup(child.pid, killGraceMs);
  };
  const timer = setTimeout(() => stop("timeout"), timeoutMs);
  const onAbort = () => stop("interrupt");
  ctx.signal.addEventListener("abort", onAbort, { once: true });

  let exit: { code: number | null; signal: NodeJS.Signals | null };
  try {
    exit = await exited;
  } catch (err) {
    return errorResult(`Could not start bash: ${(err as Error).message}`);
  } finally {
    clearTimeout(timer);
    ctx.signal.removeEventListener("abort", onAbort);
  }
  // The group may still hold background processes; none may outlive the call.
  if (child.pid !== undefined) await (ending ?? killGroup(child.pid, killGraceMs));
  await drain(closed, child);
  emit(decoders[0].end());
  emit(decoders[1].end());

  const trailer =
    stoppedBy === "timeout"
      ? `timed out after ${timeoutMs} ms`
      : stoppedBy === "interrupt"
        ? "interrupted"
        : exit.code !== null && exit.code !== 0
          ? `exit code ${exit.code}`
          : exit.signal !== null
            ? `killed by signal ${exit.signal}`
            : "";
  let output = cap.text() + cap.note;
  if (trailer !== "") {
    const line = (output === "" || output.endsWith("\n") ? "" : "\n") + trailer;
    ctx.emitText(line);
    output += line;
  }
  const metadata: Record<string, unknown> = { exitCode: exit.code };
  if (exit.signal !== null) metadata.signal = exit.signal;
  if (stoppedBy === "timeout") metadata.timedOut = true;
  if (stoppedBy === "interrupt") metadata.interrupted = true;
  if (cap.truncated) metadata.truncated = true;
  const ok = stoppedBy === undefined && exit.code === 0;
  return { state: ok ? "success" : "error", output, metadata };
}

/** Waits for the child's pipes to close, at most DRAIN_MS (a process that left the group may hold them). */
async function drain(closed: Promise<void>, child: ReturnType<typeof spawn>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, DRAIN_MS);
  });
  await Promise.race([closed, timeout]);
  clearTimeout(timer);
  child.stdout?.destroy();
  child.stderr?.destroy();
}
