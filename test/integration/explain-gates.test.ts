/**
 * The permission engine's gates as the public Explain RPC tells them, over the real server and the
 * real TypeScript client. Commands that run a program, write a file elsewhere or read outside the
 * working directories are never classed read-only: in every mode the deciding check is the mode
 * (default and accept_edits ask, explore and dont_ask deny, bypass allows), never `read_only`. sed
 * scripts that run, write or read are a safety ASK that no mode and no allow rule clears (dont_ask
 * and explore deny them). Plain reads stay read-only in every mode, and a Read deny rule holds
 * through a symlink for Read, Grep and Bash.
 *
 * One server; one session per mode (its mode set with SetMode), each with a session-scope deny rule
 * Read(./secret/**) and, in its own working directory, f.txt, secret/key.txt and alias -> secret.
 */
import { mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type PermissionDecision,
  PermissionBehavior,
  PermissionMode,
  RuleScope,
} from "../../src/generated/parkway/v1/permission.js";
import { type Harness, startHarness } from "../helpers/parkway-harness.js";

type Mode = "default" | "accept_edits" | "explore" | "bypass" | "dont_ask";
type Behavior = "ALLOW" | "DENY" | "ASK";

const MODES: Record<Mode, PermissionMode> = {
  default: PermissionMode.PERMISSION_MODE_DEFAULT,
  accept_edits: PermissionMode.PERMISSION_MODE_ACCEPT_EDITS,
  explore: PermissionMode.PERMISSION_MODE_EXPLORE,
  bypass: PermissionMode.PERMISSION_MODE_BYPASS,
  dont_ask: PermissionMode.PERMISSION_MODE_DONT_ASK,
};
const ALL_MODES = Object.keys(MODES) as Mode[];

const BEHAVIOR: Record<Behavior, PermissionBehavior> = {
  ALLOW: PermissionBehavior.PERMISSION_BEHAVIOR_ALLOW,
  DENY: PermissionBehavior.PERMISSION_BEHAVIOR_DENY,
  ASK: PermissionBehavior.PERMISSION_BEHAVIOR_ASK,
};
const behaviorName = (b: PermissionBehavior) =>
  (Object.keys(BEHAVIOR) as Behavior[]).find((k) => BEHAVIOR[k] === b) ?? String(b);

/** What each mode decides for a command that is not read-only and trips no safety check. */
const BY_MODE: Record<Mode, { behavior: Behavior; check: string }> = {
  default: { behavior: "ASK", check: "mode.default" },
  accept_edits: { behavior: "ASK", check: "mode.accept_edits" },
  explore: { behavior: "DENY", check: "mode.explore" },
  bypass: { behavior: "ALLOW", check: "mode.bypass" },
  dont_ask: { behavior: "DENY", check: "mode.dont_ask" },
};

/**
 * Commands a "read-only" program turns into running a program, writing a file or reading outside
 * the working directories, each with what the default-mode ASK's reason must say about why.
 */
const GATED: [command: string, why: string][] = [
  // programs run by options
  ["git ls-remote --upload-pack='touch X' .", "git ls-remote --upload-pack runs a program"],
  ["sort --compress-program=/bin/sh f.txt", "sort --compress-program runs a program"],
  ["git grep --open=x foo", "git grep --open-files-in-pager runs a program"],
  // files written by options (GNU abbreviations resolved)
  ["sort --out=/tmp/x f.txt", "sort --output writes a file"],
  ["sort --o=/tmp/x f.txt", "sort --output writes a file"],
  ["git diff --outp=/tmp/x", "git diff --output writes a file"],
  ["nice time -o /tmp/x cat f.txt", "time -o writes a file"],
  ["file -C -m magic", "file -C writes a file"],
  // command lines built from piped input
  ["echo -delete | xargs find .", "xargs runs a command line built from its input"],
  ["echo touch X | xargs env", "xargs runs a command line built from its input"],
  // reads outside the working directories
  ["cd / && cat etc/passwd", "reads etc/passwd outside the working directories"],
  ["cat < /etc/passwd", "reads /etc/passwd outside the working directories"],
  ["grep -R foo .", "grep -R follows symbolic links, possibly outside the working directories"],
  ["find /opt -name x", "reads /opt outside the working directories"],
  ["git -C / log", "reads / outside the working directories"],
];

/**
 * Reads of system and sensitive paths: the dangerous-path safety check decides before the mode, so
 * the ASK is bypass-immune (no allow rule clears it); bypass mode, a person's choice, skips it.
 */
const SENSITIVE_READS: [command: string, why: string][] = [
  ["cat /etc/shadow", "touches a system path /etc/shadow"],
  ["cat ~/.ssh/id_rsa", "touches a sensitive path ~/.ssh/id_rsa"],
];
const SENSITIVE_BY_MODE: Record<Mode, { behavior: Behavior; check: string }> = {
  default: { behavior: "ASK", check: "safety.dangerous_path" },
  accept_edits: { behavior: "ASK", check: "safety.dangerous_path" },
  explore: { behavior: "DENY", check: "mode.explore" },
  bypass: { behavior: "ALLOW", check: "mode.bypass" },
  dont_ask: { behavior: "DENY", check: "safety.dangerous_path" },
};

/** sed scripts that run a program, write, read outside, or cannot be checked. */
const SED_SCRIPTS: string[] = [
  "sed -n '1e touch X' f.txt",
  "sed -i '1e touch X' f.txt",
  "sed 's/a/b/e' f.txt",
  "sed 'w /tmp/x' f.txt",
  "sed 'r /etc/shadow' f.txt",
  "sed -f script.sed f.txt",
];
/** A safety ASK: no mode clears it (not even bypass); dont_ask and explore deny. */
const SED_BY_MODE: Record<Mode, { behavior: Behavior; checks: string[] }> = {
  default: { behavior: "ASK", checks: ["safety.sed_script"] },
  accept_edits: { behavior: "ASK", checks: ["safety.sed_script"] },
  bypass: { behavior: "ASK", checks: ["safety.sed_script"] },
  dont_ask: { behavior: "DENY", checks: ["safety.sed_script"] },
  // explore denies anything not read-only; either the safety check or the mode may say so.
  explore: { behavior: "DENY", checks: ["safety.sed_script", "mode.explore"] },
};

/** Plain reads inside the working directory: read-only in every mode. */
const CONTROLS: string[] = [
  "cat f.txt",
  "sed -n 1,5p f.txt",
  "git log --oneline -5",
  "grep -rn TODO f.txt notes",
  "nice cat f.txt",
  "timeout 5 ls",
];

/** Reads of secret/key.txt through the symlink alias -> secret, under the rule Read(./secret/**). */
const THROUGH_SYMLINK: [tool: string, input: Record<string, unknown>][] = [
  ["Read", { file_path: "alias/key.txt" }],
  ["Grep", { pattern: "x", path: "alias" }],
  ["Bash", { command: "cat alias/key.txt" }],
  // A walk of the whole working directory reads secret/ too.
  ["Bash", { command: "grep -rn TODO ." }],
];

/** One-column rows for it.each. */
const rows = (items: string[]): [string][] => items.map((item): [string] => [item]);

const cross = <T extends unknown[]>(rows: T[], modes: Mode[] = ALL_MODES): [Mode, ...T][] =>
  modes.flatMap((mode) => rows.map((row): [Mode, ...T] => [mode, ...row]));

// --- the server and its sessions ----------------------------------------------------------------

let h: Harness;
/** One session per mode, with the deny rule and the files. */
const sessions = new Map<Mode, string>();
/** Sessions that also hold the allow rule Bash(sed -i:*). */
const sedRuleSessions = new Map<Mode, string>();

/** Creates a session, sets its mode, writes its files and adds its session-scope rules. */
async function session(mode: Mode, rules: { tool: string; content: string; allow: boolean }[]) {
  const s = await h.client.createSession({ agentId: "test" });
  expect(await h.client.setMode(s.id, MODES[mode])).toBe(MODES[mode]);
  const wd = s.workingDirectories[0]!;
  await mkdir(path.join(wd, "secret"), { recursive: true });
  await writeFile(path.join(wd, "f.txt"), "alpha\nfoo bar\n");
  await writeFile(path.join(wd, "secret", "key.txt"), "KEY\n");
  await symlink("secret", path.join(wd, "alias"));
  await h.client.addRules(
    rules.map((r) => ({
      toolName: r.tool,
      ruleContent: r.content,
      behavior: r.allow ? BEHAVIOR.ALLOW : BEHAVIOR.DENY,
      scope: RuleScope.RULE_SCOPE_SESSION,
      sessionId: s.id,
    })),
  );
  return s.id;
}

const DENY_SECRET = { tool: "Read", content: "./secret/**", allow: false };
const ALLOW_SED_I = { tool: "Bash", content: "sed -i:*", allow: true };

beforeAll(async () => {
  h = await startHarness({ turns: [] });
  for (const mode of ALL_MODES) sessions.set(mode, await session(mode, [DENY_SECRET]));
  for (const mode of ["default", "accept_edits"] as const) {
    sedRuleSessions.set(mode, await session(mode, [DENY_SECRET, ALLOW_SED_I]));
  }
});

afterAll(async () => {
  await h?.close();
});

async function explain(
  sessionId: string,
  tool: string,
  input: Record<string, unknown>,
): Promise<PermissionDecision & { shown: string }> {
  const d = await h.client.explain({ sessionId, toolName: tool, input: JSON.stringify(input) });
  return { ...d, shown: `${behaviorName(d.behavior)} ${d.check}: ${d.reason}` };
}

const bash = (command: string) => ({ command });

// --- the cases ----------------------------------------------------------------------------------

describe("Explain: running a program, writing elsewhere or reading outside is never read-only", () => {
  it.each(cross(GATED))("%s: %s", async (mode, command, why) => {
    const d = await explain(sessions.get(mode)!, "Bash", bash(command));
    expect(d.check, `not read-only; got ${d.shown}`).not.toBe("read_only");
    expect({ behavior: behaviorName(d.behavior), check: d.check }, d.shown).toEqual(BY_MODE[mode]);
    if (mode === "default") expect(d.reason, "the ASK names why").toContain(why);
  });

  it.each(cross(SENSITIVE_READS))("%s: %s", async (mode, command, why) => {
    const d = await explain(sessions.get(mode)!, "Bash", bash(command));
    expect({ behavior: behaviorName(d.behavior), check: d.check }, d.shown).toEqual(
      SENSITIVE_BY_MODE[mode],
    );
    if (mode === "default") expect(d.reason, "the ASK names why").toContain(why);
  });
});

describe("Explain: sed scripts that run, write or read are a safety ASK no mode clears", () => {
  it.each(cross(rows(SED_SCRIPTS)))("%s: %s", async (mode, command) => {
    const d = await explain(sessions.get(mode)!, "Bash", bash(command));
    expect(d.check, `not read-only; got ${d.shown}`).not.toBe("read_only");
    const want = SED_BY_MODE[mode];
    expect(behaviorName(d.behavior), d.shown).toBe(want.behavior);
    expect(want.checks, d.shown).toContain(d.check);
    if (d.behavior === BEHAVIOR.ASK) {
      expect(d.bypassImmune, `a safety ASK is bypass-immune; ${d.shown}`).toBe(true);
    }
  });

  it.each(cross(rows(SED_SCRIPTS), ["default", "accept_edits"]))(
    "%s with the allow rule Bash(sed -i:*): %s still asks",
    async (mode, command) => {
      const d = await explain(sedRuleSessions.get(mode)!, "Bash", bash(command));
      expect({ behavior: behaviorName(d.behavior), check: d.check }, d.shown).toEqual({
        behavior: "ASK",
        check: "safety.sed_script",
      });
    },
  );

  it.each(["default", "accept_edits"] as const)(
    "%s: the allow rule Bash(sed -i:*) is in effect (control: it allows a plain sed -i the mode asks for)",
    async (mode) => {
      // Outside the session's directory, so that accept_edits alone would ask.
      const command = "sed -i s/a/b/ ../f.txt";
      const d = await explain(sedRuleSessions.get(mode)!, "Bash", bash(command));
      expect({ behavior: behaviorName(d.behavior), check: d.check }, d.shown).toEqual({
        behavior: "ALLOW",
        check: "rule.allow",
      });
      expect(d.rule?.ruleContent, d.shown).toBe("sed -i:*");
      const without = await explain(sessions.get(mode)!, "Bash", bash(command));
      expect(behaviorName(without.behavior), `without the rule; ${without.shown}`).toBe("ASK");
    },
  );
});

describe("Explain: rm of everything in the working directory", () => {
  it("accept_edits: rm -r ?* asks with safety.rm_root", async () => {
    const d = await explain(sessions.get("accept_edits")!, "Bash", bash("rm -r ?*"));
    expect({ behavior: behaviorName(d.behavior), check: d.check }, d.shown).toEqual({
      behavior: "ASK",
      check: "safety.rm_root",
    });
  });
});

describe("Explain: plain reads stay read-only in every mode", () => {
  it.each(cross(rows(CONTROLS)))("%s: %s", async (mode, command) => {
    const d = await explain(sessions.get(mode)!, "Bash", bash(command));
    expect({ behavior: behaviorName(d.behavior), check: d.check }, d.shown).toEqual({
      behavior: "ALLOW",
      check: "read_only",
    });
  });
});

describe("Explain: a Read deny rule holds through a symlink", () => {
  it.each(cross(THROUGH_SYMLINK))("%s: %s %j is denied", async (mode, tool, input) => {
    const d = await explain(sessions.get(mode)!, tool, input);
    expect({ behavior: behaviorName(d.behavior), check: d.check }, d.shown).toEqual({
      behavior: "DENY",
      check: "rule.deny",
    });
    expect(d.rule?.toolName, d.shown).toBe("Read");
    expect(d.rule?.ruleContent, d.shown).toBe("./secret/**");
  });
});
