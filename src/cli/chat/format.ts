import type { PermissionRule } from "./wire.js";

/** The tool input as an object, or undefined when it is not a JSON object. */
export function parseInput(json: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(json);
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Whitespace runs (newlines included) collapsed to one space. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** A value as one line: strings as they are, anything else as compact JSON. */
export function showValue(value: unknown): string {
  return typeof value === "string" ? oneLine(value) : JSON.stringify(value);
}

/** The input field that says most about a call of each built-in tool. */
const KEY_FIELD: Record<string, string[]> = {
  Bash: ["command"],
  Read: ["file_path"],
  Write: ["file_path"],
  Edit: ["file_path"],
  Glob: ["pattern", "path"],
  Grep: ["pattern", "path"],
  ListFiles: ["path"],
};

/** A call in one line: the tool's key field(s), the first AskUser question, or compact JSON. */
export function callSummary(name: string, inputJson: string): string {
  const input = parseInput(inputJson);
  if (!input) return oneLine(inputJson);
  if (name === "AskUser" && Array.isArray(input.questions)) {
    const first = input.questions[0] as { question?: unknown } | undefined;
    const more = input.questions.length > 1 ? ` (+${input.questions.length - 1} more)` : "";
    return `${showValue(first?.question ?? "")}${more}`;
  }
  const fields = (KEY_FIELD[name] ?? []).filter((f) => input[f] !== undefined);
  if (fields.length > 0) return fields.map((f) => showValue(input[f])).join("  ");
  return JSON.stringify(input);
}

/** The input as `key: value` lines; long and multi-line values shortened unless `full`. */
export function inputLines(inputJson: string, full = false): string[] {
  const input = parseInput(inputJson);
  if (!input) return [inputJson];
  return Object.entries(input).flatMap(([key, value]) => {
    if (typeof value === "string" && value.replace(/\n+$/, "").includes("\n")) {
      const lines = value.replace(/\n+$/, "").split("\n");
      const shown = full ? lines : lines.slice(0, 4);
      const rest = lines.length - shown.length;
      return [
        `${key}:`,
        ...shown.map((l) => `  ${l}`),
        ...(rest > 0 ? [`  … ${rest} more line${rest === 1 ? "" : "s"}`] : []),
      ];
    }
    const text = showValue(value);
    return [`${key}: ${!full && text.length > 300 ? `${text.slice(0, 299)}…` : text}`];
  });
}

/** A rule in its display form, e.g. `Bash(npm test:*)` or `Read`. */
export function ruleText(rule: Pick<PermissionRule, "toolName" | "ruleContent">): string {
  return rule.ruleContent === undefined ? rule.toolName : `${rule.toolName}(${rule.ruleContent})`;
}

/** The first line of `text` and how many lines follow it. */
export function firstLine(text: string): { line: string; more: number } {
  const lines = text.replace(/\n+$/, "").split("\n");
  return { line: lines[0] ?? "", more: Math.max(0, lines.length - 1) };
}

/** A duration in words: "45s", "4m 30s", "2h 5m". */
export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${s % 60 ? ` ${s % 60}s` : ""}`;
  return `${Math.floor(m / 60)}h${m % 60 ? ` ${m % 60}m` : ""}`;
}
