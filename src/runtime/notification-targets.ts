import type { Config } from "../config/index.js";
import type { TargetRef, TargetsFor } from "../session/notifications/outbox.js";
import type { TargetOf } from "../session/notifications/sender.js";

/**
 * The receivers of park notifications the configuration declares (an agent's, then its tenant's),
 * or undefined when there is none: the outbox is then neither written nor read.
 */
export function notificationTargets(
  config: Config,
): { notifications: { targetsFor: TargetsFor; targetOf: TargetOf } } | Record<string, never> {
  const byAgent = new Map<string, TargetRef[]>();
  const byTenant = new Map<string, TargetRef[]>();
  for (const agent of config.agents) {
    const refs = agent.notifications.map((target) => ({
      owner: { kind: "agent" as const, id: agent.id },
      target,
    }));
    if (refs.length > 0) byAgent.set(agent.id, refs);
  }
  for (const tenant of config.tenants) {
    const refs = tenant.notifications.map((target) => ({
      owner: { kind: "tenant" as const, id: tenant.id },
      target,
    }));
    if (refs.length > 0) byTenant.set(tenant.id, refs);
  }
  if (byAgent.size === 0 && byTenant.size === 0) return {};
  const none: TargetRef[] = [];
  return {
    notifications: {
      targetsFor: (agentId, tenant) => [
        ...(byAgent.get(agentId) ?? none),
        ...(byTenant.get(tenant) ?? none),
      ],
      targetOf: (owner, url) =>
        (owner.kind === "agent" ? byAgent : byTenant)
          .get(owner.id)
          ?.find((ref) => ref.target.url === url),
    },
  };
}
