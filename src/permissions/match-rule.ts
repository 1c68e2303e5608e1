import { posix } from "node:path";
import picomatch from "picomatch/posix.js";
import { type CallView, describeCall } from "./describe-call.js";
import { escapeGlob } from "./escape-glob.js";
import { globsMayOverlap, hasWildcard } from "./glob-overlap.js";
import { innerCommands, splitAssignments, unwrap } from "./shell-command.js";
import type { Located } from "./resolve-path.js";
import type { PathContext, PermissionRule } from "./types.js";
import { matchesStarParts } from "./wildcard-match.js";

/**
 * Rule matching. A rule without content matches every call of its tool. With content:
 * - Bash: `X:*` matches a command equal to X or starting with "X "; a pattern with an unescaped `*`
 *   must match the whole command (`*` is any text; a trailing ` *` also matches nothing, so `git *`
 *   matches `git`); any other pattern matches as a substring. `\*` is a literal star.
 * - Read / Write / Edit: a glob on `file_path`; Glob: on `path`, then the pattern under it; Grep: on
 *   `path`. Globs are picomatch globs with dot files matched; `~/` is the home directory; a pattern
 *   without a slash (a trailing one aside) matches a name anywhere (`*.env`, `build/`), a relative
 *   pattern with a slash is anchored at each working directory (`src/**`).
 * - Other tools: only rules without content match.
 * - MCP tools (`mcp__<server>__<tool>`): a rule names one tool, or with `mcp__<server>` every tool
 *   of that server (rules without content).
 *
 * Deny and ask rules match a path as written and where its links lead; a `Read(…)` rule also
 * reaches what Grep, Glob and Bash commands read (a command that reads a directory's whole tree,
 * such as `grep -r`, whatever in it the rule covers; the Grep and Glob tools leave such files out
 * instead, see `readRuleCovering`), an `Edit(…)`/`Write(…)` rule what the other file-writing tool
 * and Bash commands write (see `accessedPaths`).
 *
 * Compound commands and several paths: an allow rule must cover all of the call, a deny or ask rule
 * applies when it matches any part. For Bash, an allow rule matches when it matches every simple
 * command that needs a rule, and at least one (so `npm test:*` allows `cd app && npm test` but not
 * `npm test && rm -rf x`, nor `cd /tmp/x && npm test`); a command that only reads by itself needs
 * none, a `cd` only when it stays inside the working directories. Deny and ask rules are tried on the whole
 * line, each simple command as written, unquoted, with wrappers peeled off (`sudo rm …`), and as
 * the programs it runs by file name (`/bin/rm …`, `find … -exec rm …`), so quoting, `sudo` or a
 * full path does not dodge them. Glob's two targets must both match an allow rule.
 */

/** Whether `rule` matches the call. `context` anchors relative globs and `~`. */
export function matchesRule(
  rule: PermissionRule,
  toolName: string,
  input: unknown,
  context: Partial<PathContext> = {},
): boolean {
  const full = fullContext(context);
  return ruleMatchesCall(rule, toolName, describeCall(toolName, input, full), full);
}

/** `matchesRule` on an already described call. */
export function ruleMatchesCall(
  rule: PermissionRule,
  toolName: string,
  view: CallView,
  context: PathContext,
): boolean {
  if (rule.behavior === "allow")
    return findAllowingRule([rule], toolName, view, context) !== undefined;
  const content = rule.ruleContent;
  if (isServerRuleFor(rule, toolName)) return true;
  if (rule.toolName !== toolName) {
    if (content === undefined || content === "") return false;
    return accessedPaths(rule.toolName, view).some((located) =>
      matchesLocated(content, located, context),
    );
  }
  if (content === undefined || content === "") return true;
  switch (view.kind) {
    case "bash":
      return denyCandidates(view).some((text) => matchesBashPattern(content, text));
    case "file":
      return matchesLocated(content, view.located, context);
    case "search":
      return view.located.some((located) => matchesLocated(content, located, context));
    default:
      return false;
  }
}

/** `mcp__<server>`: a rule name that stands for every tool of one MCP server. */
const MCP_SERVER_RULE = /^mcp__(?:(?!__)[A-Za-z0-9_-])+$/;

/**
 * Whether `rule` is a server rule (`mcp__<server>`, without content) that covers the MCP tool
 * `toolName` (`mcp__<server>__<tool>`).
 */
export function isServerRuleFor(
  rule: Pick<PermissionRule, "toolName" | "ruleContent">,
  toolName: string,
): boolean {
  return (
    (rule.ruleContent === undefined || rule.ruleContent === "") &&
    MCP_SERVER_RULE.test(rule.toolName) &&
    !rule.toolName.endsWith("_") &&
    toolName.startsWith(`${rule.toolName}__`) &&
    toolName.length > rule.toolName.length + 2
  );
}

const READ_RULE_TOOLS = new Set(["Read"]);
const EDIT_RULE_TOOLS = new Set(["Edit", "Write"]);

/**
 * The files another tool's call reads or writes that a deny or ask rule of `ruleTool` reaches: a
 * `Read(…)` rule also covers Grep and Glob roots and the files a Bash command reads; an `Edit(…)`
 * or `Write(…)` rule covers both file-writing tools and the files a Bash command writes.
 */
function accessedPaths(ruleTool: string, view: CallView): readonly Located[] {
  if (READ_RULE_TOOLS.has(ruleTool)) {
    if (view.kind === "search") return view.located;
    if (view.kind === "bash") {
      return view.analysis.commands.flatMap((command) => [
        ...command.reads,
        ...(command.names ?? []),
      ]);
    }
  }
  if (EDIT_RULE_TOOLS.has(ruleTool)) {
    if (view.kind === "file" && view.writes) return [view.located];
    if (view.kind === "bash") return view.analysis.commands.flatMap((command) => command.writes);
  }
  return [];
}

/**
 * Whether a path glob matches a path as written (resolved) or where it really leads; a path with
 * wildcards, when it may name a matching file; a tree read whole, when it may hold one.
 */
export function matchesLocated(pattern: string, located: Located, context: PathContext): boolean {
  const tree = (path: string) =>
    `${(hasWildcard(path) ? path : escapeGlob(path)).replace(/\/+$/, "")}/**`;
  const covers = (path: string) =>
    mayCover(pattern, path, context) ||
    (located.below === true && mayCover(pattern, tree(path), context));
  return covers(located.path) || (located.real !== located.path && covers(located.real));
}

/**
 * The allow rule among `rules` that allows the whole call, or undefined. For Bash the rules may
 * share the work: each simple command that needs a rule must be matched by one of them; the rule
 * returned is the one that matched the first command it matched.
 */
export function findAllowingRule(
  rules: readonly PermissionRule[],
  toolName: string,
  view: CallView,
  context: PathContext,
): PermissionRule | undefined {
  const candidates = rules.filter(
    (rule) => rule.behavior === "allow" && rule.toolName === toolName,
  );
  const wholeTool =
    candidates.find((rule) => rule.ruleContent === undefined || rule.ruleContent === "") ??
    rules.find((rule) => rule.behavior === "allow" && isServerRuleFor(rule, toolName));
  if (wholeTool !== undefined) return wholeTool;
  const withContent = candidates as (PermissionRule & { ruleContent: string })[];
  switch (view.kind) {
    case "bash": {
      let first: PermissionRule | undefined;
      for (const [k, command] of view.script.commands.entries()) {
        const rule = withContent.find((r) => matchesBashPattern(r.ruleContent, command.text));
        if (rule === undefined && view.needsNoRule[k] !== true) return undefined;
        first ??= rule;
      }
      return first;
    }
    case "file":
      return withContent.find((rule) => matchesPathGlob(rule.ruleContent, view.path, context));
    case "search":
      return withContent.find((rule) =>
        view.targets.every((target) => matchesPathGlob(rule.ruleContent, target, context)),
      );
    default:
      return undefined;
  }
}

const candidateCache = new WeakMap<object, string[]>();

/** The texts a deny or ask rule is tried on for a Bash call (computed once per view). */
function denyCandidates(view: Extract<CallView, { kind: "bash" }>): string[] {
  const cached = candidateCache.get(view);
  if (cached !== undefined) return cached;
  const texts = [view.command.trim()];
  for (const command of view.script.commands) {
    const { argv } = splitAssignments(command);
    texts.push(
      command.text,
      command.words.map((word) => word.value).join(" "),
      argv.join(" "),
      unwrap(argv).argv.join(" "),
      ...innerCommands(argv).map((inner) => inner.argv.join(" ")),
    );
  }
  const unique = [...new Set(texts)];
  candidateCache.set(view, unique);
  return unique;
}

/** Whether a Bash rule pattern matches one command text. */
export function matchesBashPattern(pattern: string, text: string): boolean {
  const normalized = pattern.trim().replace(/\s+/g, " ");
  if (normalized.endsWith(":*")) {
    const prefix = normalized.slice(0, -2);
    return text === prefix || text.startsWith(`${prefix} `);
  }
  if (/(^|[^\\])(\\\\)*\*/.test(normalized)) return wildcardMatches(normalized, text);
  return text.includes(normalized.replace(/\\([\\*])/g, "$1"));
}

/**
 * Whether a wildcard pattern (`*` any text, `\*` a star) matches the whole of `text`; a trailing
 * ` *` also matches nothing (`git *` matches `git`). Linear in the text for each part of the
 * pattern: no regular expression, so no backtracking (see wildcard-match.ts).
 */
function wildcardMatches(pattern: string, text: string): boolean {
  const parts = [""];
  for (let k = 0; k < pattern.length; k += 1) {
    const c = pattern[k] as string;
    if (c === "\\" && k + 1 < pattern.length) {
      k += 1;
      parts[parts.length - 1] += pattern[k] as string;
    } else if (c === "*") parts.push("");
    else parts[parts.length - 1] += c;
  }
  if (matchesStarParts(parts, text)) return true;
  if (!/(^|[^\\]) \*$/.test(pattern)) return false;
  // Without its trailing ` *`: the parts but the last (empty) one, the space taken off.
  const bare = parts.slice(0, -1);
  bare[bare.length - 1] = (bare[bare.length - 1] as string).slice(0, -1);
  return matchesStarParts(bare, text);
}

const matchers = new Map<string, (path: string) => boolean>();

/** Whether a path glob matches an absolute path. */
export function matchesPathGlob(pattern: string, path: string, context: PathContext): boolean {
  return ruleGlobs(pattern, context).some((glob) => matcher(glob)(path));
}

/**
 * The absolute globs a rule's path pattern stands for: `~/` is the home directory, a pattern
 * without a slash matches a name anywhere (and below it), a relative one is anchored at each
 * working directory.
 */
function ruleGlobs(pattern: string, context: PathContext): string[] {
  let glob = pattern.trim();
  if (glob === "~" || glob.startsWith("~/")) glob = escapeGlob(context.homeDir) + glob.slice(1);
  if (glob.startsWith("./")) glob = glob.slice(2);
  const anchored = glob.replace(/\/+$/, "").includes("/");
  if (glob.endsWith("/")) glob += "**";
  if (glob.startsWith("/")) return [glob];
  if (!anchored) return [`**/${glob}`, `**/${glob}/**`];
  return context.workingDirectories.map(
    (dir) => `${escapeGlob(posix.normalize(dir)).replace(/\/+$/, "")}/${glob}`,
  );
}

/**
 * Whether a deny or ask rule's pattern may cover a path: a path with wildcards (`cat secre?/key.txt`)
 * is covered when the two may match a common file.
 */
function mayCover(pattern: string, path: string, context: PathContext): boolean {
  if (!hasWildcard(path)) return matchesPathGlob(pattern, path, context);
  return ruleGlobs(pattern, context).some((glob) => globsMayOverlap(glob, path));
}

function matcher(glob: string): (path: string) => boolean {
  let match = matchers.get(glob);
  if (match === undefined) {
    if (matchers.size >= 1000) matchers.clear();
    match = picomatch(glob, { dot: true, noextglob: true });
    matchers.set(glob, match);
  }
  return match;
}

function fullContext(context: Partial<PathContext>): PathContext {
  return {
    ...context,
    workingDirectories: context.workingDirectories ?? [],
    homeDir: context.homeDir ?? "/",
  };
}
