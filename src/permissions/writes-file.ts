import { HARMLESS_DEVICES } from "./dangerous-path.js";
import type { ShellRedirect } from "./parse-shell.js";

const OUTPUT_OPS = new Set([">", ">>", ">|", "&>", "&>>", "<>", ">&"]);

/** Whether a redirection writes to a file (not a harmless device, a duplicated fd, or a heredoc). */
export function writesFile(redirect: ShellRedirect): boolean {
  if (!OUTPUT_OPS.has(redirect.op)) return false;
  const target = redirect.target?.value;
  if (target === undefined) return true;
  if ((redirect.op === ">&" || redirect.op === "<>") && /^(\d+|-)$/.test(target)) return false;
  return !HARMLESS_DEVICES.has(target);
}
