import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  type CallToolResult,
  type ElicitRequestFormParams,
  ElicitRequestSchema,
  McpError,
  type Tool as McpToolInfo,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { linkSignals } from "../../common/abort.js";
import type { Logger } from "../../common/logger.js";
import type { McpServerConfig } from "../../config/mcp-schema.js";
import { type Backoff, backoffDelay, DEFAULT_BACKOFF } from "./mcp-backoff.js";
import { closeQuietly, listAllTools } from "./mcp-client.js";
import {
  isInvalidResult,
  isSessionGone,
  McpInvalidResultError,
  McpUnavailableError,
  message,
  resultProblem,
  SessionGoneError,
  withStderr,
} from "./mcp-errors.js";
import { type Asker, FormAskers } from "./mcp-form-askers.js";
import { oversizedReason } from "./mcp-oversized.js";
import { callMcpTool } from "./mcp-task-call.js";
import { endSession, openTransport } from "./mcp-transport.js";

/**
 * How long the handshake may take before the attempt fails: a server may be slow to start (npx
 * fetching its package, say), and is not stopped and started over while it does.
 */
const START_TIMEOUT_MS = 5 * 60_000;
/** How long a server whose event stream broke has to answer a ping. */
const PING_TIMEOUT_MS = 10_000;
/** How long Parkway's start, and a call, wait for an attempt under way before going on without it. */
const WAIT_MS = 30_000;
/** How long one tool call may take before it fails (an interrupt cancels it sooner). */
const CALL_TIMEOUT_MS = 10 * 60_000;

export interface McpConnectionOptions {
  /** The server's configured name. */
  name: string;
  config: McpServerConfig;
  /** stdio: the working directory and the environment the process is started with. */
  cwd: string;
  env: Record<string, string>;
  log: Logger;
  backoff?: Backoff;
  /** The version Parkway announces to the server. */
  clientVersion?: string;
  /**
   * Told the tools the server lists, after each successful connection and each time the server
   * says its list changed (`notifications/tools/list_changed`).
   */
  onConnected?: (tools: readonly McpToolInfo[]) => void;
}

type State =
  | { kind: "connecting"; attempt: Promise<void> }
  | { kind: "ready"; client: Client; transport: Transport }
  | { kind: "down"; reason: string; timer?: NodeJS.Timeout }
  | { kind: "closed" };

/**
 * One MCP server as a tool source: connects (starting the process of a stdio server), lists its
 * tools, and reconnects with exponential backoff when the process exits or the connection drops.
 * A call made while the server is down first tries to reconnect at once; when that fails, the call
 * fails with `McpUnavailableError`. Never rejects or throws out of band: failures are logged and
 * reported to the calls.
 */
export class McpConnection {
  readonly name: string;
  private state: State = { kind: "down", reason: "not started" };
  private failures = 0;
  /** The tools the server listed on its last successful connection. */
  tools: McpToolInfo[] = [];
  private readonly backoff: Backoff;
  private readonly log: Logger;
  /** The calls under way that ask the person the forms the server sends. */
  private readonly askers: FormAskers;
  /** Why each lost connection was taken for lost, for the calls it fails. */
  private readonly lostFor = new WeakMap<Client, string>();
  /** The clients whose server is being pinged (see `checkAlive`). */
  private readonly checking = new WeakSet<Client>();
  /** The client of the attempt under way, closed when Parkway stops meanwhile. */
  private connecting: Client | undefined;
  /** The listing under way after a `tools/list_changed` notification. */
  private listing: Promise<void> = Promise.resolve();
  /** Why a client's connection closed, when it was a message too large to read. */
  private readonly tooLarge = new WeakMap<Client, string>();

  constructor(private readonly options: McpConnectionOptions) {
    this.name = options.name;
    this.backoff = options.backoff ?? DEFAULT_BACKOFF;
    this.log = options.log.child({ mcpServer: options.name });
    this.askers = new FormAskers(this.log);
  }

  /** True while connected. */
  get ready(): boolean {
    return this.state.kind === "ready";
  }

  /** Why the server is not connected, or undefined while it is. */
  get unavailableReason(): string | undefined {
    return this.state.kind === "down" ? this.state.reason : undefined;
  }

  /**
   * Starts the first connection attempt (or, later, one at once), and resolves (never rejects)
   * once it succeeded or failed, or after WAIT_MS while it goes on.
   */
  start(): Promise<void> {
    return waitAtMost(this.connectNow());
  }

  /** Disconnects (a stdio server's process is stopped) and stops reconnecting. */
  async close(): Promise<void> {
    const state = this.state;
    this.state = { kind: "closed" };
    if (state.kind === "down") clearTimeout(state.timer);
    if (state.kind === "connecting") {
      if (this.connecting) void closeQuietly(this.connecting);
      await state.attempt;
    }
    if (state.kind === "ready") {
      await endSession(state.transport);
      await closeQuietly(state.client);
    }
  }

  /**
   * Calls a tool. Rejects with `McpUnavailableError` when the server cannot be reached or the
   * connection drops during the call; with the signal's reason when it aborts; with `McpError` for
   * an error the server answered. A form the server sends while the call runs is asked with `ask`.
   */
  async call(
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    ask?: Asker,
  ): Promise<CallToolResult> {
    try {
      return await this.callOnce(tool, args, signal, ask);
    } catch (err) {
      // A Streamable HTTP server that restarted no longer knows the session: it refused the
      // request without running it, so the call is made once more, on a new session.
      if (!(err instanceof SessionGoneError)) throw err;
      return await this.callOnce(tool, args, signal, ask);
    }
  }

  private async callOnce(
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    ask?: Asker,
  ): Promise<CallToolResult> {
    if (this.state.kind === "down") await waitAtMost(this.connectNow());
    if (this.state.kind === "connecting") await waitAtMost(this.state.attempt);
    const state = this.current();
    if (state.kind === "closed") throw new McpUnavailableError("Parkway is shutting down");
    if (state.kind !== "ready") {
      throw new McpUnavailableError(
        state.kind === "down" ? state.reason : `still starting after ${WAIT_MS / 1000} s`,
      );
    }
    if (ask) this.askers.add(ask);
    // The SDK never removes the listener it adds to a request's signal: it gets one of its own,
    // let go with the call, rather than the reply's, which lives for every call of the reply.
    const own = linkSignals(signal);
    try {
      const listed = this.tools.find((t) => t.name === tool);
      return await callMcpTool(state.client, tool, args, {
        asTask: listed?.execution?.taskSupport === "required",
        signal: own.signal,
        timeoutMs: CALL_TIMEOUT_MS,
      });
    } catch (err) {
      if (signal.aborted) throw err;
      // An answer the server gave (a JSON-RPC error of any code, -32000 too, or a result that is
      // not a tool result) leaves the connection as it was; only a connection that closed or a
      // request that could not be sent is a lost connection.
      const closed = state.client.transport === undefined;
      if (!closed && err instanceof McpError) throw err;
      if (!closed && isInvalidResult(err)) {
        throw new McpInvalidResultError(`its answer is not a tool result: ${resultProblem(err)}`);
      }
      const reason =
        this.tooLarge.get(state.client) ??
        oversizedReason(err) ??
        this.lostFor.get(state.client) ??
        message(err);
      this.lost(state.client, reason);
      if (isSessionGone(err)) {
        await this.connectNow();
        throw new SessionGoneError(reason);
      }
      throw new McpUnavailableError(reason);
    } finally {
      own.dispose();
      if (ask) this.askers.delete(ask);
    }
  }

  /** The state now (read after an await, when it may have changed). */
  private current(): State {
    return this.state;
  }

  private connectNow(): Promise<void> {
    if (this.state.kind === "connecting") return this.state.attempt;
    if (this.state.kind === "ready" || this.state.kind === "closed") return Promise.resolve();
    clearTimeout(this.state.timer);
    const attempt = this.connect();
    this.state = { kind: "connecting", attempt };
    return attempt;
  }

  private async connect(): Promise<void> {
    const client = new Client(
      { name: "parkway", version: this.options.clientVersion ?? "0" },
      { capabilities: { elicitation: { form: {} } } },
    );
    client.setRequestHandler(ElicitRequestSchema, (request, extra) =>
      this.askers.ask(request.params as ElicitRequestFormParams, extra.signal),
    );
    // Transport errors (a dropped event stream, an unparsable line) are logged; a lost
    // connection is reported by onclose or by the call that meets it. A message too large for the
    // stdio reader closes the connection: that is why it closed, for the log and the calls it fails.
    client.onerror = (err) => {
      const oversized = oversizedReason(err);
      if (oversized !== undefined) {
        this.tooLarge.set(client, oversized);
        // The stdio transport closes itself; a Streamable HTTP one is closed here, which fails
        // the calls waiting on it (the one whose answer was cut off among them).
        this.lost(client, oversized);
      } else {
        this.log.debug({ err }, "MCP transport error");
        // A Streamable HTTP event stream that broke (a call's answer, or the server's own stream)
        // may mean the server went away: the calls waiting on it would wait for their timeout.
        if (/^SSE stream disconnected/.test(err.message)) void this.checkAlive(client);
      }
    };
    let transport: Transport | undefined;
    let stderr: () => string = () => "";
    try {
      const opened = openTransport(this.options.config, {
        cwd: this.options.cwd,
        env: this.options.env,
        log: this.log,
      });
      transport = opened.transport;
      stderr = opened.stderr;
      this.connecting = client;
      await client.connect(transport, { timeout: START_TIMEOUT_MS });
      const tools = await listAllTools(client);
      if (this.state.kind === "closed") {
        await closeQuietly(client);
        return;
      }
      this.tools = tools;
      this.failures = 0;
      this.state = { kind: "ready", client, transport };
      client.onclose = () =>
        this.lost(
          client,
          this.tooLarge.get(client) ?? withStderr("the connection closed", stderr()),
        );
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.relist(client));
      this.log.info({ tools: tools.length }, "MCP server connected");
      this.options.onConnected?.(tools);
    } catch (err) {
      await closeQuietly(client);
      if (this.state.kind === "closed") return;
      this.failed(withStderr(message(err), stderr()));
    } finally {
      if (this.connecting === client) this.connecting = undefined;
    }
  }

  /** The server said its tool list changed: lists the tools again, one listing at a time. */
  private relist(client: Client): Promise<void> {
    this.listing = this.listing.then(async () => {
      if (this.state.kind !== "ready" || this.state.client !== client) return;
      try {
        const tools = await listAllTools(client);
        if (this.state.kind !== "ready" || this.state.client !== client) return;
        this.tools = tools;
        this.log.info({ tools: tools.length }, "MCP server changed its tools");
        this.options.onConnected?.(tools);
      } catch (err) {
        this.log.warn({ err }, "MCP server's changed tool list could not be read");
      }
    });
    return this.listing;
  }

  /**
   * Pings the server of `client` after one of its event streams broke: when it does not answer
   * (it went away, or no longer knows the session), the connection is lost, which fails the calls
   * waiting on it at once, and it is reconnected.
   */
  private async checkAlive(client: Client): Promise<void> {
    if (this.checking.has(client)) return;
    this.checking.add(client);
    try {
      await client.ping({ timeout: PING_TIMEOUT_MS });
    } catch (err) {
      this.lost(client, `its event stream broke and it does not answer (${message(err)})`);
    } finally {
      this.checking.delete(client);
    }
  }

  /** The connection of `client` dropped: reconnect after the backoff. */
  private lost(client: Client, reason: string): void {
    if (this.state.kind !== "ready" || this.state.client !== client) return;
    this.lostFor.set(client, reason);
    client.onclose = undefined;
    void closeQuietly(client);
    this.failed(reason);
  }

  private failed(reason: string): void {
    const delay = backoffDelay(this.backoff, this.failures);
    this.failures += 1;
    this.log.warn({ reason, retryInMs: delay }, "MCP server not available");
    const timer = setTimeout(() => void this.connectNow(), delay);
    timer.unref();
    this.state = { kind: "down", reason, timer };
  }
}

/** Resolves when `promise` does, or after WAIT_MS while it goes on. */
async function waitAtMost(promise: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise((resolve) => (timer = setTimeout(resolve, WAIT_MS)))]);
  clearTimeout(timer);
}
