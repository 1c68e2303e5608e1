import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../src/config/index.js";
import { notificationTargets } from "../../../src/runtime/notification-targets.js";

const secret = "s".repeat(16);
const tokens = [{ name: "n", sha256: "a".repeat(64) }];

describe("notification targets", () => {
  it("give a session its agent's receivers, then its tenant's, and find each by owner and url", () => {
    const config = parseConfig({
      agents: [
        { id: "ops", notifications: [{ url: "http://agent.example/hook", secret }] },
        { id: "quiet" },
      ],
      tenants: [
        {
          id: "acme",
          tokens,
          notifications: [{ url: "http://tenant.example/hook", secret, events: ["reply.ended"] }],
        },
        { id: "other", tokens: [{ name: "m", sha256: "b".repeat(64) }] },
      ],
    });
    const { notifications } = notificationTargets(config);
    expect(notifications).toBeDefined();
    const urls = (agent: string, tenant: string) =>
      notifications.targetsFor(agent, tenant).map((t) => `${t.owner.kind}:${t.target.url}`);
    expect(urls("ops", "acme")).toEqual([
      "agent:http://agent.example/hook",
      "tenant:http://tenant.example/hook",
    ]);
    expect(urls("quiet", "acme")).toEqual(["tenant:http://tenant.example/hook"]);
    expect(urls("ops", "other")).toEqual(["agent:http://agent.example/hook"]);
    expect(urls("quiet", "other")).toEqual([]);
    expect(
      notifications.targetOf({ kind: "tenant", id: "acme" }, "http://tenant.example/hook")?.target
        .events,
    ).toEqual(["reply.ended"]);
    // A receiver no longer configured (its notification then becomes a dead letter).
    expect(notifications.targetOf({ kind: "agent", id: "ops" }, "http://gone.example/")).toBe(
      undefined,
    );
    expect(notifications.targetOf({ kind: "tenant", id: "ops" }, "http://agent.example/hook")).toBe(
      undefined,
    );
  });

  it("are none when no receiver is configured: the outbox is neither written nor read", () => {
    expect(notificationTargets(parseConfig({ agents: [{ id: "a" }] }))).toEqual({});
  });
});
