/**
 * The signature of park notifications: Parkway's signer against its own verifier, and against the
 * three verification snippets of the README ("Park notifications"), run as written in TypeScript,
 * Python and Go on a signed body, as a receiver would.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { signature, verifySignature } from "../../src/session/notifications/signature.js";
import { REPO_ROOT } from "../helpers/spawn-server.js";

const run = promisify(execFile);
const SECRET = "a-receiver-secret-of-some-length";
const BODY = JSON.stringify({ id: "ntf_x", event: "reply.parked", note: "naïve – ünïcode" });

/** The README's fenced block of `lang` after "**Verify the signature**". */
async function snippet(lang: string): Promise<string> {
  const readme = await readFile(path.join(REPO_ROOT, "README.md"), "utf8");
  const from = readme.indexOf("**Verify the signature**");
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
});
