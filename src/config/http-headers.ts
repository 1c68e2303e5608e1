import { z } from "zod";

/** An HTTP header's name is an RFC 9110 token. */
export function headerNameProblem(name: string): string | undefined {
  return /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)
    ? undefined
    : "not an HTTP header name (letters, digits and !#$%&'*+-.^_`|~ only)";
}

/**
 * Why fetch would refuse `value` as a header's value, or undefined: a line break or NUL (RFC 9110
 * field values), or a character past U+00FF (a header is bytes). fetch refuses it only when it sends
 * the request, so every request would fail. The value is not quoted: it is often a credential.
 */
export function headerValueProblem(value: string): string | undefined {
  // eslint-disable-next-line no-control-regex
  if (/[\r\n\u0000]/.test(value)) return "not an HTTP header value: it holds a line break or NUL";
  // eslint-disable-next-line no-control-regex
  if (/[^\u0000-\u00ff]/.test(value)) {
    return "not an HTTP header value: it holds a character past U+00FF (percent-encode or base64 it)";
  }
  return undefined;
}

/** Headers by name, as sent with every request: each name a token, each value one fetch sends. */
export const httpHeaders = z.record(z.string(), z.string()).superRefine((record, ctx) => {
  for (const [name, value] of Object.entries(record)) {
    const message = headerNameProblem(name) ?? headerValueProblem(value);
    if (message !== undefined) ctx.addIssue({ code: "custom", path: [name], message });
  }
});
