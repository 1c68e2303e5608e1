import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { type CallToolResult, ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";

/** How a call is made: as a task or not, bounded by its signal (an interrupt) and a timeout. */
export interface CallOptions {
  /** The tool's listing says the server runs it only as a task (`taskSupport: "required"`). */
  asTask: boolean;
  signal: AbortSignal;
  timeoutMs: number;
}

/**
 * Calls `name` on `client` and resolves its result. A tool the server runs only as a task is
 * called as one: the server answers at once with a task,
 * whose status is polled (at the interval the server asks) until it ends; a form it asks for on
 * the way (`input_required`) reaches the client's elicitation handler as a direct call's does. A
 * task that fails names its last status message; one still running after `timeoutMs` fails with
 * a timeout, and one whose call is interrupted is cancelled on the server. Rejects with the
 * server's error (an `McpError`) as a direct call does.
 */
export async function callMcpTool(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  limits: CallOptions,
): Promise<CallToolResult> {
  if (!limits.asTask) {
    return (await client.callTool({ name, arguments: args }, undefined, {
      signal: limits.signal,
      timeout: limits.timeoutMs,
    })) as CallToolResult;
  }
  const deadline = AbortSignal.timeout(limits.timeoutMs);
  const signal = AbortSignal.any([limits.signal, deadline]);
  let taskId: string | undefined;
  let status: string | undefined;
  try {
    const stream = client.experimental.tasks.callToolStream({ name, arguments: args }, undefined, {
      signal,
      timeout: limits.timeoutMs,
      task: {},
    });
    for await (const message of stream) {
      switch (message.type) {
        case "taskCreated":
          taskId = message.task.taskId;
          break;
        case "taskStatus":
          status = message.task.statusMessage ?? status;
          break;
        case "result":
          return message.result as CallToolResult;
        case "error":
          if (limits.signal.aborted) throw limits.signal.reason;
          if (deadline.aborted) {
            throw new McpError(
              ErrorCode.RequestTimeout,
              `its task did not end within ${limits.timeoutMs / 1000} s`,
            );
          }
          throw status === undefined
            ? message.error
            : new McpError(message.error.code, `${message.error.message}: ${status}`);
      }
    }
    throw new McpError(ErrorCode.InternalError, "its task ended without a result");
  } finally {
    if (signal.aborted && taskId !== undefined) {
      void client.experimental.tasks.cancelTask(taskId).catch(() => undefined);
    }
  }
}
