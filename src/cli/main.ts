import { readFileSync } from "node:fs";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { clientToken, ConfigError } from "../config/index.js";
import {
  DataDirectoryError,
  StoreDamagedError,
  StoreLockedError,
  StoreOpenError,
} from "../store/index.js";
import { DatabaseOpenError, SchemaTooNewError } from "../store/postgres/errors.js";
import { ListenError } from "../server/index.js";
import { ScriptError } from "../model/scripted/index.js";
import { AgentConfigError } from "../runtime/build-agents.js";
import { EXIT_STORE_DAMAGED } from "../runtime/start-parkway.js";
import { ignoreIpServerNameWarning } from "./ip-server-name-warning.js";
import { mockModel } from "./mock-model.js";
import { repair } from "./repair.js";
import { serve } from "./serve.js";
import { COMMAND_USAGE, type Command, USAGE, wantsHelp } from "./usage.js";

/** Exit code of a command line that cannot be used (unknown flag, missing value, stray word). */
const EXIT_USAGE = 2;

/** A command line that cannot be used: one line on stderr, then the command's usage, exit 2. */
class UsageError extends Error {
  override readonly name = "UsageError";
  constructor(
    readonly command: Command,
    message: string,
  ) {
    super(message);
  }
}

/** Parses a command's flags strictly; anything it cannot use is a `UsageError` of that command. */
function parseFlags<T extends NonNullable<ParseArgsConfig["options"]>>(
  command: Command,
  args: string[],
  options: T,
) {
  try {
    return parseArgs({ args, strict: true, allowPositionals: false, options });
  } catch (err) {
    if ((err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      throw new UsageError(command, (err as Error).message);
    }
    throw err;
  }
}

/**
 * Joins `--keep-requests -3` into `--keep-requests=-3`, so that a negative count is refused as a
 * bad count rather than as a flag without its value.
 */
function keepRequestsValue(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const next = args[i + 1];
    if (arg === "--") return [...out, ...args.slice(i)];
    if (arg === "--keep-requests" && next !== undefined && /^-[0-9]/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

/** The package's version, from its package.json (two levels above src/cli and dist/cli). */
function packageVersion(): string {
  const file = new URL("../../package.json", import.meta.url);
  return (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version;
}

/** Runs the command line; resolves with the exit code. Expected failures print one line. */
async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command !== undefined && command in COMMAND_USAGE && wantsHelp(rest)) {
    process.stdout.write(`${COMMAND_USAGE[command as Command]}\n`);
    return 0;
  }
  switch (command) {
    case "serve": {
      const { values } = parseFlags("serve", rest, {
        config: { type: "string" },
        listen: { type: "string" },
        data: { type: "string" },
        "database-url": { type: "string" },
        "metrics-listen": { type: "string" },
        "web-listen": { type: "string" },
        "model-url": { type: "string" },
        model: { type: "string" },
        "tls-cert": { type: "string" },
        "tls-key": { type: "string" },
        "tls-client-ca": { type: "string" },
      });
      return serve({
        config: values.config,
        listen: values.listen,
        data: values.data,
        databaseUrl: values["database-url"],
        metricsListen: values["metrics-listen"],
        webListen: values["web-listen"],
        modelUrl: values["model-url"],
        model: values.model,
        tlsCert: values["tls-cert"],
        tlsKey: values["tls-key"],
        tlsClientCa: values["tls-client-ca"],
      });
    }
    case "repair": {
      const { values } = parseFlags("repair", rest, {
        data: { type: "string" },
        config: { type: "string" },
      });
      return repair({ data: values.data, config: values.config });
    }
    case "mock-model": {
      const { values } = parseFlags("mock-model", keepRequestsValue(rest), {
        script: { type: "string" },
        listen: { type: "string" },
        "keep-requests": { type: "string" },
      });
      const keep = values["keep-requests"];
      if (keep !== undefined && !/^[1-9][0-9]{0,6}$/.test(keep)) {
        throw new UsageError(
          "mock-model",
          `--keep-requests must be a whole number from 1 to 9999999, got ${JSON.stringify(keep)}`,
        );
      }
      if (!values.script) throw new UsageError("mock-model", "mock-model needs --script FILE");
      return mockModel({
        script: values.script,
        ...(values.listen ? { listen: values.listen } : {}),
        ...(keep === undefined ? {} : { keepRequests: Number(keep) }),
      });
    }
    case "chat": {
      const { values } = parseFlags("chat", rest, {
        server: { type: "string", default: "127.0.0.1:50051" },
        session: { type: "string" },
        agent: { type: "string" },
        external: { type: "string" },
        token: { type: "string" },
        "tls-ca": { type: "string" },
        "tls-cert": { type: "string" },
        "tls-key": { type: "string" },
      });
      const { chat } = await import("./chat/index.js");
      const token = values.token ?? clientToken();
      return chat({
        server: values.server,
        ...(values.session ? { session: values.session } : {}),
        ...(values.agent ? { agent: values.agent } : {}),
        ...(values.external ? { external: values.external } : {}),
        ...(token ? { token } : {}),
        tls: { ca: values["tls-ca"], cert: values["tls-cert"], key: values["tls-key"] },
      });
    }
    case undefined:
    case "help":
    case "--help":
    case "-h":
      process.stdout.write(`${USAGE}\n`);
      return command === undefined ? EXIT_USAGE : 0;
    case "--version":
    case "-V":
    case "version":
      process.stdout.write(`${packageVersion()}\n`);
      return 0;
    default:
      process.stderr.write(`parkway: unknown command '${command}'\n${USAGE}\n`);
      return EXIT_USAGE;
  }
}

ignoreIpServerNameWarning();
try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  if (err instanceof UsageError) {
    process.stderr.write(`parkway: ${err.message}\n${COMMAND_USAGE[err.command]}\n`);
    process.exitCode = EXIT_USAGE;
  } else if (err instanceof StoreDamagedError) {
    process.stderr.write(`parkway: ${err.message}\n`);
    process.exitCode = EXIT_STORE_DAMAGED;
  } else if (
    err instanceof ConfigError ||
    err instanceof StoreLockedError ||
    err instanceof StoreOpenError ||
    err instanceof DataDirectoryError ||
    err instanceof DatabaseOpenError ||
    err instanceof SchemaTooNewError ||
    err instanceof ListenError ||
    err instanceof AgentConfigError ||
    err instanceof ScriptError
  ) {
    process.stderr.write(`parkway: ${err.message}\n`);
  } else {
    process.stderr.write(
      `parkway: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
  }
  process.exitCode ??= 1;
}
