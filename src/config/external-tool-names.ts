import { BUILTIN_TOOL_NAMES } from "../permissions/index.js";

/**
 * Refuses an agent's external tools that take a built-in tool's name (the built-in would be replaced
 * by a tool the client runs, while the rules and checks judge its calls as the built-in's) or the
 * name of another of them.
 */
export function checkExternalToolNames(
  tools: readonly { name: string }[],
  issue: (index: number, message: string) => void,
): void {
  const builtins: ReadonlySet<string> = new Set(BUILTIN_TOOL_NAMES);
  const seen = new Set<string>();
  tools.forEach(({ name }, j) => {
    if (builtins.has(name)) issue(j, `${name} is the name of a built-in tool`);
    else if (seen.has(name)) issue(j, `duplicate external tool name ${name}`);
    seen.add(name);
  });
}
