import { describeCall } from "./describe-call.js";
import { findAllowingRule } from "./match-rule.js";
import type { PathContext, PermissionRule } from "./types.js";

/**
 * De-duplication inside one concurrent batch (reference §4): whether a call is covered by rules
 * already suggested for earlier calls of the same tool in the batch, i.e. whether accepting those
 * suggestions would allow it (for Bash, the suggestions may share the work across the simple
 * commands). A covered call is held back without its own REQUIRE_USER_CONFIRM; if the earlier call
 * is confirmed with the rule, the held call runs, otherwise it is evaluated again and asks.
 *
 * Only for a non-safety ASK: the caller must not hold back a decision with `bypassImmune` set, since
 * no allow rule clears a safety ASK. This function does not look at safety.
 */
export function coveredBySuggested(
  previousSuggested: readonly PermissionRule[],
  toolName: string,
  input: unknown,
  context: Partial<PathContext> = {},
  external = false,
): boolean {
  const full: PathContext = {
    ...context,
    workingDirectories: context.workingDirectories ?? [],
    homeDir: context.homeDir ?? "/",
  };
  const view = describeCall(toolName, input, full, external);
  return findAllowingRule(previousSuggested, toolName, view, full) !== undefined;
}
