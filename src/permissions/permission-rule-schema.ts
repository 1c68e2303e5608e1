import { z } from "zod";
import {
  PERMISSION_BEHAVIORS,
  PERMISSION_MODES,
  type PermissionRule,
  RULE_SCOPES,
  RULE_SOURCES,
} from "./types.js";

/** Validates a rule's or a decision's behaviour. */
export const permissionBehaviorSchema = z.enum(PERMISSION_BEHAVIORS);

/** Validates a permission mode. */
export const permissionModeSchema = z.enum(PERMISSION_MODES);

/** The fields of a rule the engine reads, with their sources and scopes: the base of every rule schema. */
export const ruleFields = {
  toolName: z.string(),
  ruleContent: z.string().optional(),
  behavior: permissionBehaviorSchema,
  scope: z.enum(RULE_SCOPES).optional(),
  source: z.enum(RULE_SOURCES).optional(),
};

/** Validates a permission rule (the engine's fields; unknown keys pass through for storage). */
export const permissionRuleSchema = z.looseObject({
  ...ruleFields,
  toolName: z.string().min(1),
}) satisfies z.ZodType<PermissionRule>;
