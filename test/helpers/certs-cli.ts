/**
 * Generates the test PKI of `make-certs.ts` in DIR and prints the files' paths as one JSON object
 * (`{"ca": ..., "serverCert": ..., ...}`) on stdout, for the TLS tests of the Python and Go clients.
 *
 * Usage: node --import tsx test/helpers/certs-cli.ts DIR
 */
import { makeCerts } from "./make-certs.js";

const [dir] = process.argv.slice(2);
if (!dir) {
  process.stderr.write("usage: certs-cli DIR\n");
  process.exit(2);
}
process.stdout.write(`${JSON.stringify(await makeCerts(dir))}\n`);
