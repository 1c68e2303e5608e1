import { createHash } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { createParkwayClient, type ParkwayClientError } from "../../src/client/index.js";
import { PermissionBehavior, RuleScope } from "../../src/generated/parkway/v1/permission.js";
import { type Harness, startHarness } from "../helpers/parkway-harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const sha = (token: string) => createHash("sha256").update(token).digest("hex");

async function refused(p: Promise<unknown>): Promise<ParkwayClientError> {
  return p.then(
    () => {
      throw new Error("expected a refusal");
    },
    (e: unknown) => e as ParkwayClientError,
  );
}

describe("tenants", () => {
  it("keeps tenants apart and refuses calls without a known token", async () => {
    h = await startHarness(
      { turns: [{ match: { lastUser: "" }, repeat: true, text: "hi" }] },
      {},
      {
        tenants: [
          { id: "acme", tokens: [{ name: "acme-ci", sha256: sha("acme-secret") }] },
          { id: "globex", tokens: [{ name: "globex-ops", sha256: sha("globex-secret") }] },
        ],
      },
    );
    const acme = createParkwayClient(h.parkway.address, { token: "acme-secret" });
    const globex = createParkwayClient(h.parkway.address, { token: "globex-secret" });
    const nobody = createParkwayClient(h.parkway.address, { token: "guess" });
    const anonymous = createParkwayClient(h.parkway.address);
    try {
      const session = await acme.createSession({ agentId: "test" });
      await acme.addRules([
        {
          toolName: "Read",
          behavior: PermissionBehavior.PERMISSION_BEHAVIOR_ALLOW,
          scope: RuleScope.RULE_SCOPE_TENANT,
        },
      ]);
      // One at a time: a refusal not yet awaited would be an unhandled rejection.
      for (const call of [
        () => globex.getSession(session.id),
        () => globex.deleteSession(session.id),
        () => globex.attach(session.id),
        () =>
          globex.reply({
            sessionId: session.id,
            input: { $case: "userMessage", value: { text: "x", content: [] } },
          }),
      ]) {
        expect((await refused(call())).codeName).toBe("NOT_FOUND");
      }
      expect((await globex.listSessions()).sessions).toEqual([]);
      expect(await globex.listRules({ scope: RuleScope.RULE_SCOPE_TENANT })).toEqual([]);
      expect((await acme.listSessions()).sessions.map((s) => s.id)).toEqual([session.id]);
      expect((await refused(nobody.listSessions())).codeName).toBe("UNAUTHENTICATED");
      expect((await refused(anonymous.listAgents())).codeName).toBe("UNAUTHENTICATED");
      expect((await refused(anonymous.attach(session.id))).codeName).toBe("UNAUTHENTICATED");
      const res = await acme.reply({
        sessionId: session.id,
        input: { $case: "userMessage", value: { text: "hello", content: [] } },
      });
      expect(res.message?.finishedReason).toBe(1);
    } finally {
      for (const c of [acme, globex, nobody, anonymous]) c.close();
    }
  });
});
