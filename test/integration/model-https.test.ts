import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modelFetch } from "../../src/model/http-fetch.js";
import { type CertFiles, makeCerts } from "../helpers/make-certs.js";
import { tempDir } from "../helpers/spawn-server.js";

const HTTP_FETCH = fileURLToPath(new URL("../../src/model/http-fetch.ts", import.meta.url));

/** A model endpoint over TLS with the test PKI's server certificate (localhost, 127.0.0.1). */
describe("model requests to an https endpoint", () => {
  let files: CertFiles;
  let server: Server;
  let url = "";

  beforeAll(async () => {
    files = await makeCerts(await tempDir("parkway-model-certs-"));
    server = createServer(
      { cert: await readFile(files.serverCert), key: await readFile(files.serverKey) },
      (req, res) => {
        req.resume();
        req.on("end", () => {
          res.writeHead(200, { "content-type": "text/event-stream" });
          res.end("data: over-tls\n\n");
        });
      },
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `https://localhost:${(server.address() as AddressInfo).port}/v1/chat/completions`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("refuses a certificate no trusted CA signed", async () => {
    const failed = await modelFetch()(url, { method: "POST", body: "{}" }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(Error);
    // UNABLE_TO_VERIFY_LEAF_SIGNATURE: the test CA is in no store this process reads.
    expect((failed as { code?: string }).code).toBe("UNABLE_TO_VERIFY_LEAF_SIGNATURE");
  });

  it("streams the answer of an endpoint whose CA the process trusts (NODE_EXTRA_CA_CERTS)", async () => {
    const program = [
      `const { modelFetch } = await import(${JSON.stringify(HTTP_FETCH)});`,
      `const res = await modelFetch()(${JSON.stringify(url)}, { method: "POST", body: "{}" });`,
      `let text = ""; for await (const c of res.body) text += Buffer.from(c).toString();`,
      `console.log(JSON.stringify({ status: res.status, text }));`,
    ].join("\n");
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "-e", program],
      { env: { ...process.env, NODE_EXTRA_CA_CERTS: files.ca }, timeout: 30_000 },
    );
    expect(JSON.parse(stdout)).toEqual({ status: 200, text: "data: over-tls\n\n" });
  });
});
