import { z } from "zod";
import type { PermissionMode, PermissionRule } from "./types.js";

/** Validates a permission rule (the engine's fields; unknown keys pass through for storage). */
export const permissionRuleSchema = z.looseObject({
  toolName: z.string().min(1),
  ruleContent: z.string().optional(),
  behavior: z.enum(["allow", "deny", "ask"]),
  source: z.enum(["suggested", "confirmation", "api", "config"]).optional(),
  scope: z.enum(["session", "agent", "tenant"]).optional(),
}) satisfies z.ZodType<PermissionRule>;

/** Validates a permission mode. */
export const permissionModeSchema = z.enum([
  "default",
  "accept_edits",
  "explore",
  "bypass",
  "dont_ask",
]) satisfies z.ZodType<PermissionMode>;
