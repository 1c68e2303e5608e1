// The baseline of the start-up rows: a bare grpc-js server with only the health service, started
// as `node bare-health-server.mjs` (plain JavaScript, like the compiled Parkway). Prints a
// {"msg":"listening","address":…} line once bound, like `parkway serve`, and stops on SIGTERM.
import { Server, ServerCredentials } from "@grpc/grpc-js";
import { HealthImplementation } from "grpc-health-check";
import process from "node:process";

const server = new Server();
new HealthImplementation({ "": "SERVING" }).addToServer(server);
server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, port) => {
  if (error) throw error;
  process.stdout.write(`${JSON.stringify({ msg: "listening", address: `127.0.0.1:${port}` })}\n`);
});
process.on("SIGTERM", () => server.tryShutdown(() => process.exit(0)));
