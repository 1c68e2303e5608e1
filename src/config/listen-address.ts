import { z } from "zod";

/** `HOST:PORT` (IPv6 hosts in brackets), port 0–65535; 0 picks a free port. */
export const listenAddress = z.string().superRefine((value, ctx) => {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:\s]+):(\d+)$/.exec(value);
  if (!match) {
    ctx.addIssue({ code: "custom", message: `expected HOST:PORT, got ${JSON.stringify(value)}` });
    return;
  }
  const port = Number(match[2]);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    ctx.addIssue({ code: "custom", message: `invalid port ${match[2]} (expected 0-65535)` });
  }
});
