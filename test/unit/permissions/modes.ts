import { expect } from "vitest";
import type {
  Decision,
  PermissionMode,
  PermissionRequest,
} from "../../../src/permissions/index.js";
import { bash, decide } from "./helpers.js";

export const MODES: readonly PermissionMode[] = [
  "default",
  "accept_edits",
  "explore",
  "bypass",
  "dont_ask",
];

/** What the mode answers for a call that is neither read-only nor caught by a safety check. */
export const BY_MODE: Record<PermissionMode, Pick<Decision, "behavior" | "check">> = {
  default: { behavior: "ask", check: "mode.default" },
  accept_edits: { behavior: "ask", check: "mode.accept_edits" },
  explore: { behavior: "deny", check: "mode.explore" },
  bypass: { behavior: "allow", check: "mode.bypass" },
  dont_ask: { behavior: "deny", check: "mode.dont_ask" },
};

/** What a safety check answers in each mode; `sticky` checks are not skipped by bypass. */
export function safetyByMode(
  check: string,
  sticky = false,
): Record<PermissionMode, { behavior: string; check: string }> {
  return {
    default: { behavior: "ask", check },
    accept_edits: { behavior: "ask", check },
    explore: { behavior: "deny", check: "mode.explore" },
    bypass: sticky ? { behavior: "ask", check } : { behavior: "allow", check: "mode.bypass" },
    dont_ask: { behavior: "deny", check },
  };
}

/** Expects a Bash command to be read-only (ALLOW, check read_only) in every mode. */
export function expectReadOnly(command: string, extra: Partial<PermissionRequest> = {}): void {
  for (const mode of MODES) {
    const decision = decide("Bash", bash(command), mode, [], extra);
    expect(decision, `${command} in ${mode}: ${decision.reason}`).toMatchObject({
      behavior: "allow",
      check: "read_only",
    });
  }
}

/** Expects a Bash command to get the mode's answer in every mode: it is not read-only. */
export function expectNotReadOnly(command: string, extra: Partial<PermissionRequest> = {}): void {
  for (const mode of MODES) {
    const decision = decide("Bash", bash(command), mode, [], extra);
    expect(decision, `${command} in ${mode}: ${decision.reason}`).toMatchObject(BY_MODE[mode]);
  }
}

/**
 * Expects a Bash command never to be read-only: in every mode the answer comes from another step
 * (an edit inside the working directories, a safety check, the mode), and outside bypass and the
 * edit modes nothing allows it.
 */
export function expectNeverReadOnly(command: string): void {
  for (const mode of MODES) {
    const decision = decide("Bash", bash(command), mode);
    expect(decision.check, `${command} in ${mode}: ${decision.reason}`).not.toBe("read_only");
    if (mode === "default" || mode === "explore") {
      expect(decision.behavior, `${command} in ${mode}`).not.toBe("allow");
    }
  }
}
