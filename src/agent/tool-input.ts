import type { Tool } from "../tools/tool.js";

/** A tool call's input, parsed and validated against its tool, or why it cannot be. */
export type ParsedInput = { ok: true; value: unknown } | { ok: false; error: string };

/**
 * Parses a call's raw JSON input and validates it with the tool's schema. The error text is written
 * for the model: it names each offending field, or for an unknown tool the `known` tools, so the
 * model can correct the call.
 */
export function parseToolInput(
  tool: Tool | undefined,
  name: string,
  raw: string,
  known?: Iterable<string>,
): ParsedInput {
  if (!tool) {
    const names = known === undefined ? [] : [...known];
    const hint = names.length > 0 ? `; the tools are: ${names.join(", ")}` : "";
    return { ok: false, error: `unknown tool ${JSON.stringify(name)}${hint}` };
  }
  let json: unknown;
  try {
    json = raw.trim() === "" ? {} : JSON.parse(raw);
  } catch (err) {
    return { ok: false, error: `the input is not valid JSON: ${(err as Error).message}` };
  }
  const result = tool.inputSchema.safeParse(json);
  if (result.success) return { ok: true, value: result.data };
  const problems = result.error.issues.map((issue) => {
    const path = issue.path.map(String).join(".");
    if (issue.code === "unrecognized_keys") return `unknown field(s) ${issue.keys.join(", ")}`;
    return path ? `${path}: ${issue.message}` : issue.message;
  });
  return { ok: false, error: `invalid input for ${name}: ${problems.join("; ")}` };
}
