import { parseArgs } from "node:util";
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

/** Runs the command line; resolves with the exit code. Expected failures print one line. */
async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command !== undefined && command in COMMAND_USAGE && wantsHelp(rest)) {
    process.stdout.write(`${COMMAND_USAGE[command as Command]}\n`);
    return 0;
  }
  switch (command) {
    case "serve": {
      const { values } = parseArgs({
        args: rest,
        strict: true,
        options: {
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
        },
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
      const { values } = parseArgs({
        args: rest,
        strict: true,
        options: {
          data: { type: "string" },
          config: { type: "string" },
        },
      });
      return repair({ data: values.data, config: values.config });
    }
    case "mock-model": {
      const { values } = parseArgs({
        args: rest,
        strict: true,
        options: {
          script: { type: "string" },
          listen: { type: "string" },
          "keep-requests": { type: "string" },
        },
      });
      if (!values.script) {
        process.stderr.write(`parkway: mock-model needs --script FILE\n${USAGE}\n`);
        return 2;
      }
      const keep = values["keep-requests"];
      if (keep !== undefined && !/^[1-9][0-9]{0,6}$/.test(keep)) {
        process.stderr.write(
          `parkway: --keep-requests must be a whole number from 1 to 9999999, got ${JSON.stringify(keep)}\n`,
        );
        return 2;
      }
      return mockModel({
        script: values.script,
        ...(values.listen ? { listen: values.listen } : {}),
        ...(keep === undefined ? {} : { keepRequests: Number(keep) }),
      });
    }
    case "chat": {
      const { values } = parseArgs({
        args: rest,
        strict: true,
        options: {
          server: { type: "string", default: "127.0.0.1:50051" },
          session: { type: "string" },
          agent: { type: "string" },
          external: { type: "string" },
          token: { type: "string" },
          "tls-ca": { type: "string" },
          "tls-cert": { type: "string" },
          "tls-key": { type: "string" },
        },
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
      return command === undefined ? 2 : 0;
    default:
      process.stderr.write(`parkway: unknown command '${command}'\n${USAGE}\n`);
      return 2;
  }
}

ignoreIpServerNameWarning();
try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  if (err instanceof StoreDamagedError) {
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
  } else if (
    err instanceof TypeError &&
    (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")
  ) {
    process.stderr.write(`parkway: ${err.message}\n${USAGE}\n`);
  } else {
    process.stderr.write(
      `parkway: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
  }
  process.exitCode ??= 1;
}
