/** What `parkway <command> --help` prints for each command. */
export const COMMAND_USAGE = {
  serve: `usage: parkway serve [options]

Serves Parkway's gRPC API until SIGINT or SIGTERM, then stops in order (inputs refused, running
tools given shutdownGrace, store closed last). With no model configured it plays the built-in demo
model. Flags win over PARKWAY_* environment variables, which win over the config file.

options:
  --config FILE         JSON config file (or PARKWAY_CONFIG); every key is in the README
  --listen HOST:PORT    address to listen on (PARKWAY_LISTEN; default 127.0.0.1:50051)
  --data DIR            LevelDB data directory (PARKWAY_DATA; default ./data)
  --database-url URL    PostgreSQL database instead of LevelDB, postgres://user@host/db
                        (PARKWAY_DATABASE_URL; a password belongs there or in the config file:
                        every process on the machine can read a command line)
  --metrics-listen HOST:PORT
                        serve Prometheus metrics at http://HOST:PORT/metrics (PARKWAY_METRICS_LISTEN;
                        default off); traces go where the standard OTEL_* variables say
  --web-listen HOST:PORT
                        serve Connect and gRPC-web, and the web console at /, on HOST:PORT
                        (PARKWAY_WEB_LISTEN; default off)
  --model-url URL       OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1 (PARKWAY_MODEL_URL)
  --model NAME          model name sent to the endpoint (PARKWAY_MODEL)
  --tls-cert FILE       server certificate, PEM (PARKWAY_TLS_CERT; needs --tls-key)
  --tls-key FILE        its private key, PEM (PARKWAY_TLS_KEY)
  --tls-client-ca FILE  CA that client certificates must chain to: mutual TLS (PARKWAY_TLS_CLIENT_CA)
  -h, --help            print this help

exit codes: 0 stopped by a signal; 1 could not start (one line names the cause); 2 the command
line cannot be used (unknown flag, missing value, stray word);
65 the store is damaged (one line names the file; see parkway repair);
75 stopped after a storage failure (restart it once the disk is fixed).`,

  "mock-model": `usage: parkway mock-model --script FILE [options]

Serves a script as an OpenAI-compatible model (POST /v1/chat/completions, GET /v1/models) until
SIGINT or SIGTERM, for testing frontends; point \`parkway serve --model-url\` at the URL it logs.
The script format is described in the package's README (under "mock-model").

options:
  --script FILE         the script (JSON)
  --listen HOST:PORT    address to listen on (default 127.0.0.1:0, a free port)
  --keep-requests N     request bodies kept for GET /_scripted/requests (default 100, the latest);
                        older ones are dropped so a long load test holds bounded memory
  -h, --help            print this help`,

  repair: `usage: parkway repair [options]

Repairs a data directory the server refuses to open (stop the server first). LevelDB's repair
rebuilds its MANIFEST and CURRENT from every log and table it can read: records in a damaged part
of a log, and tables it cannot read (moved to DIR/lost/), are lost. Then every session's records
are checked; those that disagree (and, when writes were lost, those with a parked or running reply,
which may have been answered in a lost write) are listed and answer DATA_LOSS from then on: delete
them. Exit code 0 when every session is whole, 3 when some answer DATA_LOSS.

options:
  --data DIR            the data directory (PARKWAY_DATA; default ./data)
  --config FILE         config file whose data directory to repair (or PARKWAY_CONFIG)
  -h, --help            print this help`,

  chat: `usage: parkway chat [options]

The terminal frontend: talks to one session, shows each tool call that needs approval with why it
asks, and takes your answers. Piped input works too (one answer per line).

options:
  --server ADDR         server address (default 127.0.0.1:50051)
  --session ID          resume this session (default: create one)
  --agent ID            agent of a new session (default: the first agent)
  --external FILE       module whose handlers execute tools in this terminal (declared as
                        external tools of the new session)
  --token TOKEN         bearer token (or PARKWAY_TOKEN)
  --tls-ca FILE         CA to verify the server with (any --tls-* flag turns TLS on)
  --tls-cert FILE       client certificate for mutual TLS (needs --tls-key)
  --tls-key FILE        its private key
  -h, --help            print this help`,
} as const;

/** The commands `parkway` knows. */
export type Command = keyof typeof COMMAND_USAGE;

/** What `parkway --help` prints. */
export const USAGE = `usage:
  parkway serve [--config FILE] [--listen HOST:PORT] [--data DIR | --database-url URL]
                [--metrics-listen HOST:PORT] [--web-listen HOST:PORT]
                [--model-url URL] [--model NAME]
                [--tls-cert FILE --tls-key FILE [--tls-client-ca FILE]]
  parkway mock-model --script FILE [--listen HOST:PORT] [--keep-requests N]
  parkway repair [--data DIR] [--config FILE]
  parkway chat [--server ADDR] [--session ID] [--agent ID] [--external FILE] [--token TOKEN]
               [--tls-ca FILE] [--tls-cert FILE --tls-key FILE]
  parkway --version

\`parkway <command> --help\` describes a command. A command line that cannot be used exits 2.`;

/** True when the arguments ask for help (`--help` or `-h` before any `--`). */
export function wantsHelp(args: readonly string[]): boolean {
  for (const arg of args) {
    if (arg === "--") return false;
    if (arg === "--help" || arg === "-h") return true;
  }
  return false;
}
