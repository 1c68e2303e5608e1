import { z } from "zod";
import { duration } from "./duration.js";
import { httpHeaders } from "./http-headers.js";
import { hasCredentials } from "./url-credentials.js";

/**
 * An external policy decision point (PDP): before the permission engine's ALLOW takes effect
 * (with `calls: "all"`, its ASK too), Parkway POSTs the call, the session's context and the
 * engine's decision to `url` and waits up to `timeout` for the answer. The answer may tighten the
 * decision (ALLOW into ASK or DENY, ASK into DENY), never loosen it. A timeout, a status other
 * than 2xx, a body that is not an answer or a connection error follows `onError`.
 */
export const policyConfigSchema = z.strictObject({
  /** Where the decisions are asked, e.g. https://pdp.internal/parkway/decide. */
  url: z
    .url({
      protocol: /^https?$/,
      error: "expected an http or https URL such as https://pdp.example.com/decide",
    })
    .refine((url) => !hasCredentials(url), {
      message:
        "a URL with a user name or password cannot be used: send credentials in headers (Authorization)",
    }),
  /** How long one answer may take, from 10 ms to 1 min; default 2 s. */
  timeout: duration({ min: 10, max: 60_000, text: ["10ms", "1m"] }).default(2000),
  /** What a call becomes when the service fails or does not answer in time: ASK or DENY. */
  onError: z.enum(["ask", "deny"], { error: 'expected "ask" or "deny"' }).default("ask"),
  /** Which decisions are sent: the engine's ALLOWs only (default), or its ASKs as well. */
  calls: z.enum(["allowed", "all"], { error: 'expected "allowed" or "all"' }).default("allowed"),
  /** Headers sent with every request, e.g. {"Authorization": "Bearer …"}. */
  headers: httpHeaders.default({}),
});
export type PolicyConfig = z.infer<typeof policyConfigSchema>;
