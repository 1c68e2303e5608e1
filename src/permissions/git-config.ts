import { posix } from "node:path";
import { isInsideWorkingDirectory } from "./resolve-path.js";
import { repositoryLayoutVerdict } from "./git-repository-layout.js";
import { type GitSetting, parseGitConfig } from "./git-config-syntax.js";
import type { PathContext } from "./types.js";

/**
 * What a repository's own configuration makes git do besides reading. git reads the settings in
 * its repository (`.git/config`, `config.worktree`) for every command, and some of them run a
 * program: `core.fsmonitor` on `git status`, a diff driver's `textconv` on `git diff`, a filter's
 * `clean` on `git status`. A repository that came from elsewhere, or one the agent laid out and
 * names with `--git-dir`, would then run what it likes under a command the check takes for a
 * read. Such a git command is not read-only: the mode and the rules decide on it.
 */

/**
 * Patterns for a setting's name: `*` stands for a subsection (which may hold dots) or a key.
 * Settings git uses only to reach the network (`core.sshCommand`, credential helpers) are not
 * here: no read-only command reaches it (`ls-remote` only of a path), and `url.*.insteadOf`, which
 * could turn a path into a URL, is.
 */
const RUNS_A_PROGRAM: readonly string[] = [
  "core.fsmonitor",
  "core.pager",
  "core.editor",
  "core.alternaterefscommand",
  "pager.*",
  "sequence.editor",
  "diff.external",
  "diff.*.textconv",
  "diff.*.command",
  "filter.*.clean",
  "filter.*.smudge",
  "filter.*.process",
  "merge.*.driver",
  "gpg.program",
  "gpg.*.program",
  "gpg.ssh.defaultkeycommand",
  "remote.*.uploadpack",
  "remote.*.receivepack",
  "remote.*.vcs",
  "url.*.insteadof",
  "url.*.pushinsteadof",
  "protocol.allow",
  "protocol.*.allow",
  "uploadpack.packobjectshook",
  "difftool.*.cmd",
  "difftool.*.path",
  "mergetool.*.cmd",
  "mergetool.*.path",
  "man.*.cmd",
  "man.*.path",
  "browser.*.cmd",
  "browser.*.path",
  "web.browser",
  "help.browser",
  "help.format",
  "help.htmlpath",
  "man.viewer",
  "trailer.*.command",
  "trailer.*.cmd",
  "hook.*.command",
];

/**
 * Settings that make git read files elsewhere, which the check does not judge (`core.worktree` is
 * judged by where it leads: a submodule's names its directory in the work tree).
 */
const READS_ELSEWHERE: readonly string[] = [
  "include.path",
  "includeif.*.path",
  "mailmap.file",
  "core.excludesfile",
  "core.attributesfile",
  "diff.orderfile",
  "blame.ignorerevsfile",
];

/**
 * Settings that make a read fetch: a partial clone's promisor remote is asked for every object
 * the clone lacks (`git show` of a file it never fetched), over the network or from a path.
 */
const FETCHES: readonly string[] = ["extensions.partialclone", "remote.*.promisor"];

/** git's booleans: a key written with `=` and nothing after it is false too. */
const FALSE_VALUES = new Set(["false", "no", "off", "0", ""]);
const TRUE_VALUES = new Set(["true", "yes", "on", "1"]);
const SIGNATURE_FORMAT = /%G|%\(signature/;

const patternOf = (pattern: string): RegExp =>
  new RegExp(`^${pattern.replace(/\./g, "\\.").replace(/\*/g, ".+")}$`);

/** What a setting makes git do, by the patterns of its name; `applies` judges its value. */
const EFFECTS: readonly {
  patterns: readonly RegExp[];
  does: string;
  applies?: (value: string | undefined) => boolean;
}[] = [
  { patterns: RUNS_A_PROGRAM.map(patternOf), does: "runs a program" },
  {
    patterns: READS_ELSEWHERE.map(patternOf),
    does: "takes git to files the check does not follow",
  },
  { patterns: FETCHES.map(patternOf), does: "makes git fetch the objects it lacks from a remote" },
  {
    // Verifying signatures runs gpg (or ssh-keygen, gpgsm) on `git log`: `log.showSignature` set
    // true, or a format showing a signature's state (`%G?`), as `format.pretty` or a named format.
    patterns: ["log.showsignature"].map(patternOf),
    does: "makes git log verify signatures with gpg",
    applies: (value) => !FALSE_VALUES.has((value ?? "true").toLowerCase()),
  },
  {
    patterns: ["format.pretty", "pretty.*"].map(patternOf),
    does: "makes git log verify signatures with gpg",
    applies: (value) => SIGNATURE_FORMAT.test(value ?? ""),
  },
];

const isBoolean = (value: string | undefined): boolean => {
  const lower = (value ?? "true").toLowerCase();
  return FALSE_VALUES.has(lower) || TRUE_VALUES.has(lower);
};

/** Why `settings` make git do more than read, or undefined. */
export function settingVerdict(settings: readonly GitSetting[]): string | undefined {
  for (const { name, value } of settings) {
    // `core.fsmonitor` set to a boolean runs nothing, or git's own monitor.
    if (name === "core.fsmonitor" && isBoolean(value)) continue;
    const effect = EFFECTS.find(
      ({ patterns, applies }) =>
        patterns.some((pattern) => pattern.test(name)) && (applies?.(value) ?? true),
    );
    if (effect !== undefined) return `${name}, which ${effect.does}`;
  }
  return undefined;
}

/** Hooks git runs under commands that only read: `git status` refreshes the index and writes it. */
const READING_HOOKS = ["post-index-change", "reference-transaction"];

/**
 * Why git working with the repository in `gitDir` (its `.git` directory, or a bare repository's
 * own) does more than read, or undefined. Its own settings and those of the submodules it holds
 * (`git status` runs git in each of them) are read, and the hooks a read may run; a repository
 * whose settings are shared from elsewhere (`commondir`) is not followed. Without a way to read
 * files, nothing is checked.
 */
export function repositoryConfigVerdict(gitDir: string, context: PathContext): string | undefined {
  const { readSmallFile, listDirectory } = context;
  if (readSmallFile === undefined || listDirectory === undefined) return undefined;
  const layout = repositoryLayoutVerdict(gitDir, context);
  if (layout !== undefined) return layout;
  const names = listDirectory(gitDir) ?? [];
  if (names.includes("commondir")) {
    return `${gitDir} takes its settings from another directory (commondir), not followed`;
  }
  const settings: GitSetting[] = [];
  for (const file of ["config", "config.worktree"]) {
    const path = posix.join(gitDir, file);
    const text = names.includes(file) ? readSmallFile(path) : undefined;
    if (text === undefined) continue;
    const parsed = parseGitConfig(text);
    if (!parsed.ok)
      return `git's settings in ${path} cannot be read by the check (${parsed.reason})`;
    const why = settingVerdict(parsed.settings);
    if (why !== undefined) return `the repository's settings (${path}) set ${why}`;
    settings.push(...parsed.settings);
  }
  const last = (name: string) => settings.findLast((setting) => setting.name === name)?.value;
  const worktree = last("core.worktree");
  if (worktree !== undefined) {
    const where = posix.resolve(gitDir, worktree);
    if (!isInsideWorkingDirectory(context.realPath?.(where) ?? where, context)) {
      return `the repository's settings in ${gitDir} name the work tree ${where}, outside the working directories`;
    }
  }
  const hooks = hookDirectories(gitDir, last("core.hookspath"), context);
  if (typeof hooks === "string") return hooks;
  for (const dir of hooks) {
    const hook = READING_HOOKS.find((name) => listDirectory(dir)?.includes(name) === true);
    if (hook !== undefined) {
      return `the repository has a ${hook} hook (${dir}), which git runs when it refreshes its index or refs`;
    }
  }
  if (names.includes("modules")) return modulesVerdict(posix.join(gitDir, "modules"), context);
  return undefined;
}

/**
 * The directories git takes hooks from: the repository's own, and the one `core.hooksPath` names
 * (`~/` is the home directory; a relative path is taken from the work tree's top, known here only
 * for a `.git` directory); why not, when that cannot be known.
 */
function hookDirectories(
  gitDir: string,
  hooksPath: string | undefined,
  context: PathContext,
): string[] | string {
  const own = posix.join(gitDir, "hooks");
  if (hooksPath === undefined || hooksPath === "") return [own];
  if (hooksPath.startsWith("/")) return [own, hooksPath];
  if (hooksPath === "~" || hooksPath.startsWith("~/")) {
    return [own, posix.join(context.homeDir, hooksPath.slice(1))];
  }
  if (posix.basename(gitDir) === ".git")
    return [own, posix.resolve(posix.dirname(gitDir), hooksPath)];
  return `the repository's settings in ${gitDir} set core.hooksPath ${hooksPath}, relative to a work tree the check does not know`;
}

/** The submodules' repositories under `.git/modules` (a submodule's name may hold slashes). */
function modulesVerdict(dir: string, context: PathContext): string | undefined {
  for (const name of context.listDirectory?.(dir) ?? []) {
    const path = posix.join(dir, name);
    const inner = context.listDirectory?.(path);
    if (inner === undefined) continue;
    const isRepository = ["HEAD", "objects", "refs"].every((entry) => inner.includes(entry));
    const why = isRepository
      ? repositoryConfigVerdict(path, context)
      : modulesVerdict(path, context);
    if (why !== undefined) return why;
  }
  return undefined;
}

/** How long the object ids of the repository in `gitDir` are: 32 bytes for SHA-256, else 20. */
function objectIdBytes(gitDir: string, context: PathContext): 20 | 32 {
  const text = context.readSmallFile?.(posix.join(gitDir, "config"));
  const parsed = text === undefined ? undefined : parseGitConfig(text);
  if (!parsed?.ok) return 20;
  const format = parsed.settings.findLast((s) => s.name === "extensions.objectformat")?.value;
  return format?.toLowerCase() === "sha256" ? 32 : 20;
}

/**
 * The paths of the submodules of the work tree at `top`, whose repository is in `gitDir`: those
 * `.gitmodules` lists and those the index holds (an embedded repository added with `git add` is
 * in the index only); why not, when they cannot be known.
 */
function submodulePaths(top: string, gitDir: string, context: PathContext): string[] | string {
  const { readSmallFile, listDirectory, gitlinks } = context;
  const paths = new Set<string>();
  const text = (listDirectory?.(top) ?? []).includes(".gitmodules")
    ? readSmallFile?.(posix.join(top, ".gitmodules"))
    : undefined;
  if (text !== undefined) {
    const parsed = parseGitConfig(text);
    if (!parsed.ok) return `${top}/.gitmodules cannot be read by the check (${parsed.reason})`;
    for (const { name, value } of parsed.settings) {
      if (/^submodule\..+\.path$/.test(name) && value !== undefined) paths.add(value);
    }
  }
  if (gitlinks !== undefined && listDirectory?.(gitDir) !== undefined) {
    const index = gitlinks(posix.join(gitDir, "index"), objectIdBytes(gitDir, context));
    for (const path of index ?? []) paths.add(path);
  }
  return [...paths];
}

/**
 * Why the submodules checked out in the work tree at `top` (its repository in `gitDir`) make git
 * do more than read, or undefined. `git status` and `git diff` run git in each submodule
 * `.gitmodules` names or the index holds, with the settings of the repository its `.git` holds (a
 * directory of its own) or names (`gitdir: …`), wherever that is: each is read as the main
 * repository's are, and its own submodules in turn.
 */
export function worktreeSubmodulesVerdict(
  top: string,
  context: PathContext,
  gitDir = posix.join(top, ".git"),
): string | undefined {
  const { readSmallFile, listDirectory } = context;
  if (readSmallFile === undefined || listDirectory === undefined) return undefined;
  const paths = submodulePaths(top, gitDir, context);
  if (typeof paths === "string") return paths;
  for (const path of paths) {
    const dir = posix.join(top, path);
    if (!(listDirectory(dir) ?? []).includes(".git")) continue;
    const dotGit = posix.join(dir, ".git");
    let subGitDir = dotGit;
    if (listDirectory(dotGit) === undefined) {
      const named = /^gitdir: (.+)$/m.exec(readSmallFile(dotGit) ?? "")?.[1];
      if (named === undefined) return `${dotGit} names no repository the check can follow`;
      subGitDir = posix.resolve(dir, named.trim());
    }
    const why =
      repositoryConfigVerdict(subGitDir, context) ??
      worktreeSubmodulesVerdict(dir, context, subGitDir);
    if (why !== undefined) return `the submodule at ${dir}: ${why}`;
  }
  return undefined;
}
