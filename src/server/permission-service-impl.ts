import type { Rule } from "../agent/types.js";
import { invalidArgument } from "../common/errors.js";
import { ruleProblems } from "../permissions/index.js";
import type { PermissionRule } from "../generated/parkway/v1/permission.js";
import type { PermissionAdmin, RuleToAdd } from "../session/permission-admin.js";
import { decisionToPb, ruleToPb } from "./mappers/content.js";
import { behavior, permissionMode, ruleScope } from "./mappers/enums.js";
import type { PermissionServiceHandlers } from "./permission-service.js";

function decodeRule(rule: PermissionRule, i: number): RuleToAdd {
  const field = `rules[${i}]`;
  const problems = ruleProblems(rule);
  if (problems.length > 0) {
    throw invalidArgument(
      problems.map((p) => ({ field: `${field}.${p.field}`, description: p.description })),
    );
  }
  const b = behavior.fromPb(rule.behavior);
  if (!b) {
    throw invalidArgument([
      { field: `${field}.behavior`, description: "must be ALLOW, DENY or ASK" },
    ]);
  }
  const scope = Number(rule.scope) === 0 ? "session" : ruleScope.fromPb(rule.scope);
  if (!scope) throw invalidArgument([{ field: `${field}.scope`, description: "unknown scope" }]);
  const decoded: Rule = {
    toolName: rule.toolName,
    behavior: b,
    ...(rule.ruleContent !== undefined ? { ruleContent: rule.ruleContent } : {}),
  };
  return {
    rule: decoded,
    scope,
    ...(rule.sessionId ? { sessionId: rule.sessionId } : {}),
    ...(rule.agentId ? { agentId: rule.agentId } : {}),
  };
}

/** PermissionService over the session layer's permission administration. */
export function createPermissionService(
  adminFor: (tenant: string) => PermissionAdmin,
): PermissionServiceHandlers {
  return {
    async listRules(request, ctx) {
      const admin = adminFor(ctx.principal.tenant);
      const scope = Number(request.scope) === 0 ? undefined : ruleScope.fromPb(request.scope);
      if (Number(request.scope) !== 0 && !scope) {
        throw invalidArgument([{ field: "scope", description: "unknown scope" }]);
      }
      const rules = await admin.list({
        ...(request.sessionId ? { sessionId: request.sessionId } : {}),
        ...(request.agentId ? { agentId: request.agentId } : {}),
        ...(scope ? { scope } : {}),
      });
      return { rules: rules.map(ruleToPb) };
    },

    async addRules(request, ctx) {
      const admin = adminFor(ctx.principal.tenant);
      if (request.rules.length === 0) {
        throw invalidArgument([{ field: "rules", description: "add at least one rule" }]);
      }
      const { stored, added } = await admin.add(request.rules.map(decodeRule), ctx.principal.name);
      return { rules: stored.map(ruleToPb), added };
    },

    async removeRule(request, ctx) {
      const admin = adminFor(ctx.principal.tenant);
      return { rule: ruleToPb(await admin.remove(request.ruleId, ctx.principal.name)) };
    },

    async setMode(request, ctx) {
      const admin = adminFor(ctx.principal.tenant);
      const mode = permissionMode.fromPb(request.mode);
      if (Number(request.mode) !== 0 && !mode) {
        throw invalidArgument([{ field: "mode", description: "unknown mode" }]);
      }
      if (!request.sessionId)
        throw invalidArgument([{ field: "session_id", description: "is required" }]);
      return {
        mode: permissionMode.toPb(await admin.setMode(request.sessionId, mode, ctx.principal.name)),
      };
    },

    async explain(request, ctx) {
      const admin = adminFor(ctx.principal.tenant);
      if (!request.toolName)
        throw invalidArgument([{ field: "tool_name", description: "is required" }]);
      const decision = await admin.explain(
        {
          ...(request.sessionId ? { sessionId: request.sessionId } : {}),
          ...(request.agentId ? { agentId: request.agentId } : {}),
        },
        request.toolName,
        request.input,
      );
      return { decision: decisionToPb(decision) };
    },
  };
}
