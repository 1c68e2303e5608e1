import { evaluate } from "../../../src/permissions/index.js";
import type {
  Decision,
  PermissionMode,
  PermissionRequest,
  PermissionRule,
} from "../../../src/permissions/index.js";

export const WORKDIR = "/work/repo";
export const HOME = "/home/me";
export const CONTEXT = { workingDirectories: [WORKDIR], homeDir: HOME };

/** Evaluates one call with the test working directory and home. */
export function decide(
  toolName: string,
  input: unknown,
  mode: PermissionMode = "default",
  rules: PermissionRule[] = [],
  extra: Partial<PermissionRequest> = {},
): Decision {
  return evaluate({ toolName, input, mode, rules, ...CONTEXT, ...extra });
}

export const bash = (command: string): { command: string } => ({ command });

export const allow = (toolName: string, ruleContent?: string): PermissionRule =>
  ruleContent === undefined
    ? { toolName, behavior: "allow" }
    : { toolName, ruleContent, behavior: "allow" };
export const deny = (toolName: string, ruleContent?: string): PermissionRule => ({
  ...allow(toolName, ruleContent),
  behavior: "deny",
});
export const ask = (toolName: string, ruleContent?: string): PermissionRule => ({
  ...allow(toolName, ruleContent),
  behavior: "ask",
});
