/**
 * The signature of park notifications: Parkway's signer against its own verifier, and against the
 * three verification snippets of the README ("Park notifications"), run as written in TypeScript,
 * Python and Go on a signed body, as a receiver would; and the README's receiver, run as written
 * against a server, answering a parked call by its link.
 */
import { execFile, spawn } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { signature, verifySignature } from "../../src/session/notifications/signature.js";
import { createParkwayClient, FinishedReason } from "../../src/client/index.js";
import { silentLogger } from "../../src/common/logger.js";
import { parseConfig } from "../../src/config/index.js";
import { startScriptedModel } from "../../src/model/scripted/index.js";
import { startParkway } from "../../src/runtime/start-parkway.js";
import { collect } from "../helpers/parkway-harness.js";
import { freePort } from "../helpers/free-port.js";
import { REPO_ROOT } from "../helpers/spawn-server.js";

const run = promisify(execFile);
const SECRET = "a-receiver-secret-of-some-length";
const BODY = JSON.stringify({ id: "ntf_x", event: "reply.parked", note: "naïve – ünïcode" });

/** The README's first fenced block of `lang` after `after`. */
async function snippet(lang: string, after = "**Verify the signature**"): Promise<string> {
  const readme = await readFile(path.join(REPO_ROOT, "README.md"), "utf8");
  const from = readme.indexOf(after);
  const start = readme.indexOf(`\`\`\`${lang}\n`, from) + lang.length + 4;
  return readme.slice(start, readme.indexOf("```", start));
}

describe("notification signatures", () => {
  it("verify with the secret, not with another, not on another body, not when stale", () => {
    const now = Math.floor(Date.now() / 1000);
    const header = signature(SECRET, now, BODY);
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifySignature(SECRET, header, BODY, now)).toBe(true);
    expect(verifySignature("another-secret-of-some-length", header, BODY, now)).toBe(false);
    expect(verifySignature(SECRET, header, `${BODY} `, now)).toBe(false);
    expect(verifySignature(SECRET, header, BODY, now + 301)).toBe(false);
    expect(verifySignature(SECRET, "t=x,v1=00", BODY, now)).toBe(false);
  });

  it("verify with the README's snippets in TypeScript, Python and Go", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "parkway-verify-"));
    const header = signature(SECRET, Math.floor(Date.now() / 1000), BODY);
    await writeFile(path.join(dir, "case.json"), JSON.stringify({ header, body: BODY }));
    const checks = `secret=${SECRET} wrong=another-secret-of-some-length`;

    await writeFile(
      path.join(dir, "verify.mts"),
      `${await snippet("ts")}
import { readFileSync } from "node:fs";
const c = JSON.parse(readFileSync(${JSON.stringify(path.join(dir, "case.json"))}, "utf8"));
console.log(verify(${JSON.stringify(SECRET)}, c.header, c.body), verify("x".repeat(16), c.header, c.body));
`,
    );
    const tsx = path.join(REPO_ROOT, "node_modules", ".bin", "tsx");
    const ts = await run(tsx, [path.join(dir, "verify.mts")]);
    expect(ts.stdout.trim(), checks).toBe("true false");

    await writeFile(
      path.join(dir, "verify.py"),
      `${await snippet("python")}
import json
c = json.load(open(${JSON.stringify(path.join(dir, "case.json"))}))
print(verify(${JSON.stringify(SECRET)}, c["header"], c["body"].encode()), verify("x" * 16, c["header"], c["body"].encode()))
`,
    );
    const py = await run("python3", [path.join(dir, "verify.py")]);
    expect(py.stdout.trim(), checks).toBe("True False");

    await writeFile(path.join(dir, "go.mod"), "module verify\n\ngo 1.22\n");
    await writeFile(
      path.join(dir, "main.go"),
      `package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

${await snippet("go")}
func main() {
	raw, _ := os.ReadFile(${JSON.stringify(path.join(dir, "case.json"))})
	var c struct{ Header, Body string }
	_ = json.Unmarshal(raw, &c)
	fmt.Println(Verify(${JSON.stringify(SECRET)}, c.Header, []byte(c.Body), time.Now()), Verify(strings.Repeat("x", 16), c.Header, []byte(c.Body), time.Now()))
}
`,
    );
    const go = await run("go", ["run", "."], { cwd: dir });
    expect(go.stdout.trim(), checks).toBe("true false");
  }, 120_000);

  it("let the README's receiver verify a notification and answer by link", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "parkway-receiver-"));
    const file = path.join(dir, "receiver.mts");
    await writeFile(
      file,
      `${await snippet("ts")}\n${await snippet("ts", "A receiver that verifies the signature")}`,
    );
    const [receiverPort, webPort] = [await freePort(), await freePort()];
    const receiver = spawn(path.join(REPO_ROOT, "node_modules", ".bin", "tsx"), [file], {
      env: { ...process.env, PORT: String(receiverPort), PARKWAY_NOTIFY_SECRET: SECRET },
      stdio: "inherit",
    });
    const model = await startScriptedModel({
      script: {
        turns: [
          {
            match: { lastUser: "^go" },
            toolCalls: [{ name: "Bash", input: { command: "touch made.txt" } }],
          },
          { match: { toolName: "Bash" }, text: "made it" },
        ],
      },
    });
    const parkway = await startParkway({
      config: parseConfig({
        listen: "127.0.0.1:0",
        data: path.join(dir, "data"),
        model: { url: model.url, name: "scripted", maxRetries: 0 },
        web: { listen: `127.0.0.1:${webPort}` },
        agents: [
          {
            id: "ops",
            workingDirectories: [path.join(dir, "work")],
            notifications: [
              {
                url: `http://127.0.0.1:${receiverPort}/`,
                secret: SECRET,
                events: ["reply.parked"],
                firstRetry: "100ms",
                maxRetryDelay: "500ms",
                answerLinks: { baseUrl: `http://127.0.0.1:${webPort}` },
              },
            ],
          },
        ],
      }),
      log: silentLogger,
    });
    const client = createParkwayClient(parkway.address);
    try {
      const session = await client.createSession({ agentId: "ops" });
      const chat = await client.attach(session.id);
      const parked = await collect(chat.message("go"));
      expect(parked.at(-1)?.event?.$case).toBe("replyParked");
      // No person answers: the receiver does, through the link (retried until it listens).
      const rest = await collect(chat.untilSettled());
      const end = rest.at(-1)?.event;
      expect(end?.$case === "replyEnd" && end.value.finishedReason).toBe(
        FinishedReason.FINISHED_REASON_COMPLETED,
      );
      const audit = await client.listAuditRecords({ sessionId: session.id });
      expect(audit.records.map((r) => r.actor)).toContain(
        `answer link (http://127.0.0.1:${receiverPort}/)`,
      );
    } finally {
      client.close();
      receiver.kill();
      await parkway.close();
      await model.close();
    }
  }, 120_000);
});
