import { spawn } from "node:child_process";
import type { Writable } from "node:stream";
import { homedir } from "node:os";
import { StringDecoder } from "node:string_decoder";
import { z } from "zod";
import { OutputCap } from "./output-cap.js";
import { realWorkingDirectories } from "./paths.js";
import { guardGroup, KILL_GRACE_MS, killGroup, watchGroupSize } from "./process-group.js";
import type { Tool, ToolContext, ToolResult } from "./tool.js";
import { errorResult, interruptedResult } from "./tool-result.js";

export const BASH_DEFAULT_TIMEOUT_MS = 120_000;
export const BASH_MAX_TIMEOUT_MS = 600_000;
/** Processes a command may run at once by default. */
export const BASH_DEFAULT_MAX_PROCESSES = 1024;
/** Output a command may write, kept or discarded, before it is killed as a flood. */
export const BASH_DEFAULT_FLOOD_BYTES = 64 * 1024 * 1024;
/** How long to wait for the output pipes to close once the command's process group is gone. */
const DRAIN_MS = 500;
/** What bash runs: the command, once the server says go on fd 3 (see `runBash`), without fd 3. */
const GATED = 'read -r _ <&3 && exec 3<&- bash -c "$1"';

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
  /**
   * The whole environment of the commands (the server's own is never inherited). Default: PATH of
   * the usual system directories, HOME, LANG=C.UTF-8 and TERM=dumb; the server builds each agent's
   * from its `bash` config (see `bashEnvironment` in src/config).
   */
  env?: Readonly<Record<string, string>>;
  /** Processes the command's group may run at once; past it the group is killed. */
  maxProcesses?: number;
  /** Bytes of output (kept or discarded) past which the command is killed; at least the cap. */
  floodBytes?: number;
}

/** Why a command was ended before it exited by itself. */
type StopReason = "timeout" | "interrupt" | "flood" | "processes";

/**
 * Runs `bash -c command` (not a login shell; stdin is empty; the environment is `options.env`, never
 * the server's) with cwd = the first working directory, in its own process group.
 *
 * - stdout and stderr are streamed together through `ctx.emitText` as they arrive.
 * - At `ctx.maxOutputBytes` streaming stops and "[output truncated at N bytes]" is emitted; the
 *   command keeps running (its further output is read and discarded) so that a verbose command is
 *   not cut off half-way, until it has written `floodBytes` in all: then it is killed ("output
 *   flood"). The timeout still bounds it.
 * - More than `maxProcesses` running processes in the group (a fork bomb) kill the group.
 * - The timeout and `ctx.signal` end the whole group: SIGTERM, then SIGKILL after a short grace.
 * - Background processes do not outlive the call: once bash exits, what is left of its group is
 *   ended the same way before the result is returned.
 * - `output` is exactly the text emitted: the kept output, the truncation note, then a last line
 *   "exit code N" / "killed by signal S" / "timed out after N ms" / "interrupted" unless it exited 0.
 */
export function createBashTool(options: BashOptions = {}): Tool<BashInput> {
  const limits: BashLimits = {
    killGraceMs: options.killGraceMs ?? KILL_GRACE_MS,
    env: options.env ?? minimalEnv(),
    maxProcesses: options.maxProcesses ?? BASH_DEFAULT_MAX_PROCESSES,
    floodBytes: options.floodBytes ?? BASH_DEFAULT_FLOOD_BYTES,
  };
  return {
    name: "Bash",
    description:
      "Runs a bash command in the first working directory and returns its combined stdout and " +
      "stderr. Use it for builds, tests, git and other terminal work; prefer Read, Edit, Write, " +
      "Glob and Grep for files. Commands are killed after `timeout` ms (default 2 minutes); " +
      "long output is truncated, and a command that floods output or starts too many processes " +
      "is killed; background processes are stopped when the command exits. The environment is " +
      "a clean one, not the server's.",
    inputSchema: bashInputSchema,
    isReadOnly: () => false,
    isConcurrencySafe: () => false,
    run: (input, ctx) => runBash(input, ctx, limits),
  };
}

interface BashLimits {
  killGraceMs: number;
  env: Readonly<Record<string, string>>;
  maxProcesses: number;
  floodBytes: number;
}

/** The environment when none is configured: enough to find programs, nothing of the server's. */
function minimalEnv(): Record<string, string> {
  return {
    PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    HOME: homedir(),
    LANG: "C.UTF-8",
    TERM: "dumb",
  };
}

/** The Bash tool with the default kill grace. */
export const bashTool: Tool<BashInput> = createBashTool();

async function runBash(
  input: BashInput,
  ctx: ToolContext,
  limits: BashLimits,
): Promise<ToolResult> {
  const { killGraceMs, maxProcesses } = limits;
  const floodBytes = Math.max(limits.floodBytes, ctx.maxOutputBytes);
  if (ctx.signal.aborted) return interruptedResult();
  const [cwd] = await realWorkingDirectories(ctx.workingDirectories);
  if (cwd === undefined) return errorResult("There is no working directory to run the command in.");
  const timeoutMs = input.timeout ?? BASH_DEFAULT_TIMEOUT_MS;

  const cap = new OutputCap(ctx.maxOutputBytes);
  let noted = false;
  let written = 0;
  const emit = (text: string) => {
    if (noted) return;
    const kept = cap.push(text);
    if (kept !== "") ctx.emitText(kept);
    if (cap.truncated) {
      noted = true;
      ctx.emitText(cap.note);
    }
  };

  // The command starts only once a watcher will kill its group should the server die (even
  // SIGKILLed): it waits on fd 3 for the go, and a server gone before that closes fd 3 unsaid.
  const guard = guardGroup();
  const child = spawn("bash", ["-c", GATED, "bash", input.command], {
    cwd,
    env: { ...limits.env },
    detached: true,
    stdio: ["ignore", "pipe", "pipe", "pipe"],
  });
  const gate = child.stdio[3] as Writable | null;
  // The command may close its end of the gate at any time (it exits, or is killed): not an error.
  gate?.on("error", () => undefined);
  if (child.pid === undefined) guard.release();
  else guard.arm(child.pid, () => gate?.end("go\n"));
  const decoders = [new StringDecoder("utf8"), new StringDecoder("utf8")] as const;
  const onData = (decoder: StringDecoder, chunk: Buffer) => {
    written += chunk.length;
    if (written > floodBytes) stop("flood");
    if (!noted) emit(decoder.write(chunk));
  };
  child.stdout?.on("data", (chunk: Buffer) => onData(decoders[0], chunk));
  child.stderr?.on("data", (chunk: Buffer) => onData(decoders[1], chunk));
  const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(
    (resolve, reject) => {
      child.once("exit", (code, signal) => resolve({ code, signal }));
      child.on("error", reject);
    },
  );

  let stoppedBy: StopReason | undefined;
  let ending: Promise<void> | undefined;
  const stop = (why: StopReason) => {
    if (stoppedBy !== undefined || child.pid === undefined) return;
    stoppedBy = why;
    // A fork bomb or a flood gets no grace: it would only grow meanwhile.
    ending = killGroup(child.pid, why === "timeout" || why === "interrupt" ? killGraceMs : 0);
  };
  const timer = setTimeout(() => stop("timeout"), timeoutMs);
  const unwatch =
    child.pid === undefined
      ? () => undefined
      : watchGroupSize(child.pid, maxProcesses, () => stop("processes"));
  const onAbort = () => stop("interrupt");
  ctx.signal.addEventListener("abort", onAbort, { once: true });

  let exit: { code: number | null; signal: NodeJS.Signals | null };
  try {
    exit = await exited;
  } catch (err) {
    return errorResult(`Could not start bash: ${(err as Error).message}`);
  } finally {
    clearTimeout(timer);
    unwatch();
    ctx.signal.removeEventListener("abort", onAbort);
  }
  // The group may still hold background processes; none may outlive the call.
  if (child.pid !== undefined) await (ending ?? killGroup(child.pid, killGraceMs));
  guard.release();
  await drain(closed, child);
  emit(decoders[0].end());
  emit(decoders[1].end());

  const trailer =
    stoppedBy === "timeout"
      ? `timed out after ${timeoutMs} ms`
      : stoppedBy === "interrupt"
        ? "interrupted"
        : stoppedBy === "flood"
          ? `killed: output flood (more than ${floodBytes} bytes written)`
          : stoppedBy === "processes"
            ? `killed: more than ${maxProcesses} processes at once (fork bomb?)`
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
  if (stoppedBy === "flood") metadata.flooded = true;
  if (stoppedBy === "processes") metadata.tooManyProcesses = true;
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
