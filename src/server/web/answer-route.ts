import { z } from "zod";
import { isParkwayError, ParkwayError } from "../../common/errors.js";
import { zodViolations } from "../../common/zod-violations.js";
import type { AnswerLink } from "./answer-link.js";
import type { NodeHandler, NodeRequest, NodeResponse } from "./node-handler.js";

const PATH = /^\/answers\/([A-Za-z0-9_-]{16,128})$/;
const MAX_BODY_BYTES = 8192;

const answerSchema = z.strictObject({
  decision: z.enum(["allow", "deny"]),
  reason: z.string().max(1024).optional(),
});

/** What an answer looks like, for a body that is none. */
const EXAMPLE = '{"decision":"allow"} or {"decision":"deny","reason":"…"}';

const HTTP_STATUS: Partial<Record<ParkwayError["code"], number>> = {
  invalid_argument: 400,
  not_found: 404,
  failed_precondition: 409,
  resource_exhausted: 429,
  unavailable: 503,
};

function send(res: NodeResponse, status: number, body: object): void {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(JSON.stringify(body));
}

async function readBody(req: NodeRequest): Promise<string> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new ParkwayError("invalid_argument", "the body is too large");
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * `POST /answers/<token>` with `{"decision":"allow"}` or `{"decision":"deny","reason":"…"}`:
 * answers the call the token names, as a ConfirmResult would, and answers 200 `{"applied":true}`;
 * 400 for a body that is not such an answer (naming the field), 404 for an unknown or used link,
 * 409 for an expired one or a call no longer waiting. Other paths go to `next`.
 */
export function answerRoute(answer: AnswerLink, next: NodeHandler): NodeHandler {
  return (req, res) => {
    const token = PATH.exec((req.url ?? "/").split("?")[0] ?? "")?.[1];
    if (!token) {
      next(req, res);
      return;
    }
    if (req.method !== "POST") {
      res.setHeader("allow", "POST");
      send(res, 405, { error: "answer links take POST" });
      return;
    }
    void (async () => {
      try {
        const raw = await readBody(req);
        if (raw.trim() === "") {
          send(res, 400, { error: `body: is empty; send ${EXAMPLE}`, field: "body" });
          return;
        }
        const parsed = answerSchema.safeParse(JSON.parse(raw));
        if (!parsed.success) {
          const violation = zodViolations(parsed.error)[0];
          const field = violation && violation.field !== "(root)" ? violation.field : "body";
          const problem =
            field === "body" ? `is not an answer; send ${EXAMPLE}` : violation?.description;
          send(res, 400, { error: `${field}: ${problem ?? "invalid"}`, field });
          return;
        }
        const result = await answer(token, parsed.data);
        send(res, 200, { applied: true, ...result });
      } catch (err) {
        if (err instanceof SyntaxError) {
          send(res, 400, { error: "the body is not JSON" });
        } else if (isParkwayError(err)) {
          send(res, HTTP_STATUS[err.code] ?? 500, { error: err.message });
        } else {
          send(res, 500, { error: "internal error" });
        }
      }
    })();
  };
}
