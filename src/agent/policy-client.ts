import { z } from "zod";
import { deadline } from "../common/deadline.js";
import type { PolicyConfig } from "../config/policy-schema.js";
import type { PolicyAnswer } from "./policy-decision.js";
import type { DecisionInfo, ToolCallBlock } from "./types.js";
import type { PermissionState } from "./gate.js";
import { formatRule } from "../permissions/index.js";

/** Whom the policy service is asked about: the session a call belongs to. */
export interface PolicySession {
  id: string;
  tenant: string;
  agent: string;
}

/** The most bytes of an answer read; a longer one is an error. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * The service's answer, as it must come back (unknown fields are allowed and ignored; a null
 * reason, as encoders write an absent one, is no reason). The decision is read in any case: a
 * service that answers "DENY" denies, rather than failing into `onError`.
 */
export const policyAnswerSchema = z.object({
  decision: z.preprocess(
    (value) => (typeof value === "string" ? value.toLowerCase() : value),
    z.enum(["allow", "ask", "deny"]),
  ),
  reason: z.string().nullish(),
});

/** The JSON body POSTed to the policy service for one call. */
export function policyRequest(
  call: ToolCallBlock,
  input: unknown,
  decision: DecisionInfo,
  session: PolicySession,
  state: PermissionState,
) {
  return {
    version: 1,
    tool: call.name,
    input,
    callId: call.id,
    session: {
      id: session.id,
      tenant: session.tenant,
      agent: session.agent,
      workingDirectories: state.workingDirectories,
      mode: state.mode,
    },
    engine: {
      behavior: decision.behavior,
      check: decision.check,
      reason: decision.reason,
      ...(decision.rule ? { rule: formatRule(decision.rule) } : {}),
    },
  };
}

const describe = (err: unknown): string => {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (typeof cause?.code === "string") return cause.code;
  if (typeof cause?.message === "string") return cause.message;
  return err instanceof Error ? err.message : String(err);
};

/** The body as text, or undefined once it passes MAX_ANSWER_BYTES (the rest is not read). */
async function readCapped(response: Response): Promise<string | undefined> {
  const reader = response.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for (;;) {
    const { done, value } = (await reader.read()) as { done: boolean; value?: Uint8Array };
    if (done || !value) break;
    bytes += value.byteLength;
    if (bytes > MAX_ANSWER_BYTES) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

async function readAnswer(response: Response): Promise<Omit<PolicyAnswer, "latencyMs">> {
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    return { result: "error", reason: `answered HTTP ${response.status}` };
  }
  const text = await readCapped(response);
  if (text === undefined) {
    return { result: "error", reason: `answered more than ${MAX_ANSWER_BYTES} bytes` };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { result: "error", reason: "answered a body that is not JSON" };
  }
  const parsed = policyAnswerSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = issue?.path.length ? `${issue.path.map(String).join(".")}: ` : "";
    return { result: "error", reason: `answered an invalid body (${at}${issue?.message ?? ""})` };
  }
  const { decision, reason } = parsed.data;
  return { result: decision, ...(reason ? { reason } : {}) };
}

/**
 * POSTs `body` to the policy service and reads its answer within the configured timeout. Resolves
 * the answer, or the failure as an "error" or "timeout" result with what failed; resolves
 * undefined when `signal` (the reply's) aborted first: the request is then abandoned.
 */
export async function askPolicy(
  config: PolicyConfig,
  body: unknown,
  signal: AbortSignal,
): Promise<PolicyAnswer | undefined> {
  const started = performance.now();
  const request = deadline(signal, config.timeout);
  let answer: Omit<PolicyAnswer, "latencyMs">;
  try {
    const response = await fetch(config.url, {
      method: "POST",
      headers: {
        ...config.headers,
        "content-type": "application/json",
        accept: "application/json",
      },
      body: JSON.stringify(body),
      redirect: "error",
      signal: request.signal,
    });
    answer = await readAnswer(response);
  } catch (err) {
    if (signal.aborted) return undefined;
    answer = request.timedOut()
      ? { result: "timeout", reason: `timed out after ${config.timeout} ms` }
      : { result: "error", reason: `unreachable (${describe(err)})` };
  } finally {
    request.clear();
  }
  if (signal.aborted) return undefined;
  return { ...answer, latencyMs: Math.round((performance.now() - started) * 1000) / 1000 };
}

/** The external policy decision point a reply's calls go to, and the session they belong to. */
export interface ReplyPolicy {
  config: PolicyConfig;
  session: PolicySession;
}
