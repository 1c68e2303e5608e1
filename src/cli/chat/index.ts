import { createPrivateKey, X509Certificate } from "node:crypto";
import { readFile } from "node:fs/promises";
import {
  createParkwayClient,
  type ParkwayClient,
  ParkwayClientError,
  type TlsOptions,
} from "../../client/index.js";
import { ChatApp } from "./app.js";
import { HandlerModuleError, type Handlers, loadHandlers } from "./external.js";
import type { Input } from "./input.js";
import { LineInput } from "./line-input.js";
import { Screen } from "./screen.js";
import { MARK } from "./style.js";
import { explainUnavailable } from "./tls-probe.js";
import { TtyInput } from "./tty-input.js";
import type { Session } from "./wire.js";

/** `parkway chat` options. */
export interface ChatOptions {
  /** `HOST:PORT` of the server. */
  server: string;
  /** Attach to this session instead of creating one. */
  session?: string;
  /** The agent of a new session; default the server's first agent. */
  agent?: string;
  /** A module whose handlers answer external tool calls. */
  external?: string;
  /** Bearer token for a server with tenants (also `PARKWAY_TOKEN`). */
  token?: string;
  /** PEM files for TLS: the CA to trust, and a client certificate and key for mTLS. */
  tls?: { ca?: string; cert?: string; key?: string };
}

const UNAVAILABLE = 14;
const UNAUTHENTICATED = 16;
const NOT_FOUND = 5;

/** A start-up failure the user can act on; the message is one line. */
class ChatStartError extends Error {
  override readonly name = "ChatStartError";
}

/** Creates a session for the agent, declaring handlers the agent does not have as external tools. */
async function createSession(
  client: ParkwayClient,
  options: ChatOptions,
  handlers: Handlers | undefined,
): Promise<Session> {
  const agents = await client.listAgents();
  const agent = options.agent ? agents.find((a) => a.id === options.agent) : agents[0];
  if (!agent) {
    const known = agents.map((a) => a.id).join(", ") || "none";
    throw new ChatStartError(`no agent ${options.agent ?? ""} on the server; agents: ${known}`);
  }
  const tools = new Set(agent.tools.map((t) => t.name));
  // A handler for a tool the server runs itself (Bash) would never be called: say so.
  for (const tool of agent.tools) {
    if (!tool.external && handlers?.byName.has(tool.name)) {
      process.stderr.write(
        `parkway: --external: the handler ${tool.name} in ${handlers.file} is not used: agent ${agent.id} runs ${tool.name} on the server\n`,
      );
    }
  }
  const externalTools = [...(handlers?.byName ?? [])]
    .filter(([name]) => !tools.has(name))
    .map(([name, handler]) => ({
      name,
      description: handler.description ?? `Executed by the client (${handlers?.file ?? ""}).`,
      inputSchema: JSON.stringify(handler.inputSchema ?? { type: "object" }),
      metadataSchema: "",
    }));
  return client.createSession({ agentId: agent.id, externalTools });
}

/** Reads the PEM files of `--tls-ca`, `--tls-cert` and `--tls-key`; none given = plaintext. */
async function readTlsFiles(files: ChatOptions["tls"]): Promise<TlsOptions | undefined> {
  if (!files || (!files.ca && !files.cert && !files.key)) return undefined;
  if (!files.cert !== !files.key) {
    throw new ChatStartError(
      "--tls-cert and --tls-key go together (a client certificate and its key)",
    );
  }
  const read = async (flag: string, file: string | undefined) => {
    if (!file) return undefined;
    try {
      return await readFile(file);
    } catch (err) {
      throw new ChatStartError(
        `${flag}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? "error"})`,
      );
    }
  };
  const [ca, cert, key] = await Promise.all([
    read("--tls-ca", files.ca),
    read("--tls-cert", files.cert),
    read("--tls-key", files.key),
  ]);
  // grpc-js takes any bytes here and fails every handshake later with UNAVAILABLE: check them now.
  const certificate = (flag: string, file: string | undefined, pem: Buffer | undefined) => {
    if (!pem) return;
    try {
      if (!pem.includes("-----BEGIN CERTIFICATE-----")) throw new Error("no certificate");
      new X509Certificate(pem);
    } catch {
      throw new ChatStartError(`${flag}: ${file ?? ""} is not a PEM certificate`);
    }
  };
  certificate("--tls-ca", files.ca, ca);
  certificate("--tls-cert", files.cert, cert);
  if (key) {
    try {
      createPrivateKey(key);
    } catch {
      throw new ChatStartError(`--tls-key: ${files.key ?? ""} is not a PEM private key`);
    }
  }
  return { ...(ca ? { ca } : {}), ...(cert ? { cert } : {}), ...(key ? { key } : {}) };
}

/** Explains a failure to reach or use the server in one line. */
function startFailure(err: unknown, options: ChatOptions): string {
  if (err instanceof ChatStartError || err instanceof HandlerModuleError) return err.message;
  if (err instanceof ParkwayClientError) {
    if (err.code === UNAVAILABLE) {
      return `cannot reach a Parkway server at ${options.server}: start one with \`npx parkway serve\` (\`npm start\` in a checkout), or pass --server HOST:PORT`;
    }
    if (err.code === UNAUTHENTICATED && options.token) {
      return `the server at ${options.server} refused the token from --token or PARKWAY_TOKEN (${err.message}): give one of its tenants' tokens`;
    }
    if (err.code === UNAUTHENTICATED) {
      return `the server at ${options.server} wants a token: pass --token or set PARKWAY_TOKEN (${err.message})`;
    }
    if (err.code === NOT_FOUND && options.session) return `no session ${options.session}`;
    return `${err.codeName}: ${err.message}`;
  }
  return err instanceof Error ? err.message : String(err);
}

/**
 * `parkway chat`: an interactive terminal frontend. Attaches to `--session` or creates a session
 * for `--agent`, then runs until the user quits or the input ends. Resolves with the exit code:
 * 0 after a normal end, 1 when the server cannot be used, 2 for a bad handler module.
 */
export async function chat(options: ChatOptions): Promise<number> {
  let handlers: Handlers | undefined;
  try {
    if (options.external) handlers = await loadHandlers(options.external);
  } catch (err) {
    process.stderr.write(`parkway: ${startFailure(err, options)}\n`);
    return 2;
  }
  let tls: TlsOptions | undefined;
  try {
    tls = await readTlsFiles(options.tls);
  } catch (err) {
    process.stderr.write(`parkway: ${startFailure(err, options)}\n`);
    return 1;
  }
  const client = createParkwayClient(options.server, {
    timeoutMs: 15_000,
    ...(options.token ? { token: options.token } : {}),
    ...(tls ? { tls } : {}),
  });
  let info: Session;
  try {
    info = options.session
      ? await client.getSession(options.session)
      : await createSession(client, options, handlers);
  } catch (err) {
    client.close();
    // UNAVAILABLE from a server that was reached is a TLS mismatch: say which, not "start one".
    const reached =
      err instanceof ParkwayClientError && err.code === UNAVAILABLE
        ? await explainUnavailable(options.server, tls, err.message)
        : undefined;
    process.stderr.write(`parkway: ${reached ?? startFailure(err, options)}\n`);
    return 1;
  }
  // A reader that goes away (`parkway chat | head -1`) ends the chat quietly, as it would a filter:
  // the writes after it fail, and each failure is an 'error' event on stdout.
  let outputClosed = false;
  let outputCode = 0;
  let onOutputClosed = () => {};
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (outputClosed) return;
    outputClosed = true;
    if (err.code !== "EPIPE") {
      outputCode = 1;
      process.stderr.write(`parkway: cannot write the chat: ${err.message}\n`);
    }
    onOutputClosed();
  });
  const screen = new Screen(process.stdout);
  const input: Input =
    process.stdin.isTTY && process.stdout.isTTY
      ? new TtyInput(process.stdin, process.stdout, screen)
      : new LineInput(process.stdin, screen);
  const app = new ChatApp(client, screen, input, handlers);
  onOutputClosed = () => app.quit();
  const onSigint = () => void app.ctrlC();
  process.on("SIGINT", onSigint);
  try {
    await app.open(info);
    app.banner(info);
    const c = screen.c;
    screen.line(
      c.dim(
        `server ${options.server}${handlers ? ` · external tools from ${handlers.file}` : ""} · type a message, /help for commands, ctrl-c to interrupt, twice to quit`,
      ),
    );
    if (outputClosed) app.quit();
    const code = await app.run();
    return outputClosed ? outputCode : code;
  } catch (err) {
    if (outputClosed) return outputCode;
    screen.line(screen.c.red(`${MARK.fail} ${startFailure(err, options)}`));
    return 1;
  } finally {
    process.off("SIGINT", onSigint);
    app.close();
    input.close();
    screen.restore();
    client.close();
  }
}
