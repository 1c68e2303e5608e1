import { posix } from "node:path";
import { isInsideWorkingDirectory } from "./resolve-path.js";
import { repositoryLayoutVerdict } from "./git-repository-layout.js";
import type { PathContext } from "./types.js";

/**
 * What a repository's own configuration makes git do besides reading. git reads the settings in
 * its repository (`.git/config`, `config.worktree`) for every command, and some of them run a
 * program: `core.fsmonitor` on `git status`, a diff driver's `textconv` on `git diff`, a filter's
 * `clean` on `git status`. A repository that came from elsewhere, or one the agent laid out and
 * names with `--git-dir`, would then run what it likes under a command the check takes for a
 * read. Such a git command is not read-only: the mode and the rules decide on it.
 */

/** One setting as git reads it: its name lowercased but for the subsection, and its value. */
export interface GitSetting {
  /** `section.key` or `section.subsection.key`. */
  name: string;
  /** Undefined for a key written without `=` (a boolean true). */
  value: string | undefined;
}

export type ParsedGitConfig = { ok: true; settings: GitSetting[] } | { ok: false; reason: string };

/**
 * Parses git's configuration syntax as git does (config.c): sections `[name]`, `[name "sub"]`
 * and `[name.sub]`, keys after a header on the same line, values with quotes, escapes and
 * backslash-newline continuations, `#` and `;` comments. What git would refuse is refused too.
 */
export function parseGitConfig(source: string): ParsedGitConfig {
  const text = source.replace(/^\uFEFF/, "").replace(/\r\n/g, "\n");
  if (text.includes("\0")) return { ok: false, reason: "it holds a NUL byte" };
  const settings: GitSetting[] = [];
  let section: string | undefined;
  let i = 0;
  const fail = (what: string): ParsedGitConfig => {
    const line = text.slice(0, i).split("\n").length;
    return { ok: false, reason: `line ${line}: ${what}` };
  };
  while (i < text.length) {
    const c = text[i] ?? "";
    if (/\s/.test(c)) {
      i += 1;
    } else if (c === "#" || c === ";") {
      while (i < text.length && text[i] !== "\n") i += 1;
    } else if (c === "[") {
      const header = /^\[([A-Za-z0-9.-]+)(?:[ \t]+"((?:[^"\\\n]|\\[^\n])*)")?\]/.exec(
        text.slice(i),
      );
      if (header === null) return fail("a section header git would refuse");
      const subsection = header[2]?.replace(/\\(.)/g, "$1");
      const name = (header[1] ?? "").toLowerCase();
      section = subsection === undefined ? name : `${name}.${subsection}`;
      i += header[0].length;
    } else if (/[A-Za-z]/.test(c)) {
      const key = /^[A-Za-z][A-Za-z0-9-]*/.exec(text.slice(i))?.[0] ?? "";
      i += key.length;
      while (text[i] === " " || text[i] === "\t") i += 1;
      let value: string | undefined;
      if (text[i] === "=") {
        i += 1;
        const parsed = parseValue(text, i);
        if (parsed === undefined) return fail(`a value of ${key} git would refuse`);
        value = parsed.value;
        i = parsed.end;
      } else if (i < text.length && text[i] !== "\n") {
        return fail(`${key} followed by neither "=" nor the line's end`);
      }
      const name = key.toLowerCase();
      settings.push({ name: section === undefined ? name : `${section}.${name}`, value });
    } else {
      return fail(`${JSON.stringify(c)} where a key or a section was expected`);
    }
  }
  return { ok: true, settings };
}

/** A value from `start` (just after `=`) to its line's end: quotes, escapes and continuations. */
function parseValue(text: string, start: number): { value: string; end: number } | undefined {
  let value = "";
  let pendingSpace = "";
  let quoted = false;
  let i = start;
  while (i < text.length && (text[i] === " " || text[i] === "\t")) i += 1;
  for (;;) {
    const c = text[i];
    if (c === undefined || c === "\n") {
      if (quoted) return undefined;
      return { value, end: i };
    }
    i += 1;
    if (!quoted && (c === "#" || c === ";")) {
      while (i < text.length && text[i] !== "\n") i += 1;
      return { value, end: i };
    }
    if (!quoted && (c === " " || c === "\t")) {
      pendingSpace += c;
      continue;
    }
    value += pendingSpace;
    pendingSpace = "";
    if (c === "\\") {
      const next = text[i];
      i += 1;
      if (next === "\n") continue;
      const escaped = { t: "\t", b: "\b", n: "\n", '"': '"', "\\": "\\" }[next ?? ""];
      if (escaped === undefined) return undefined;
      value += escaped;
    } else if (c === '"') {
      quoted = !quoted;
    } else {
      value += c;
    }
  }
}

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

/** git's false booleans: a key written with `=` and nothing after it is false too. */
const FALSE_VALUES = new Set(["false", "no", "off", "0", ""]);
const SIGNATURE_FORMAT = /%G|%\(signature/;

/**
 * Settings whose value makes git verify signatures, which runs gpg (or ssh-keygen, gpgsm) on
 * `git log`: `log.showSignature` set true, or a format that shows a signature's state (`%G?`),
 * as `format.pretty` or as a named format (`pretty.NAME`) that `--format=NAME` uses.
 */
const VERIFIES_SIGNATURES: readonly {
  name: string;
  runs: (value: string | undefined) => boolean;
}[] = [
  {
    name: "log.showsignature",
    runs: (value) => !FALSE_VALUES.has((value ?? "true").toLowerCase()),
  },
  { name: "format.pretty", runs: (value) => SIGNATURE_FORMAT.test(value ?? "") },
  { name: "pretty.*", runs: (value) => SIGNATURE_FORMAT.test(value ?? "") },
];

const patternOf = (pattern: string): RegExp =>
  new RegExp(`^${pattern.replace(/\./g, "\\.").replace(/\*/g, ".+")}$`);
const PROGRAM_PATTERNS = RUNS_A_PROGRAM.map(patternOf);
const ELSEWHERE_PATTERNS = READS_ELSEWHERE.map(patternOf);
const FETCH_PATTERNS = FETCHES.map(patternOf);
const SIGNATURE_PATTERNS = VERIFIES_SIGNATURES.map(({ name, runs }) => ({
  pattern: patternOf(name),
  runs,
}));

/**
 * Values git reads as booleans: `core.fsmonitor` set to one of them runs nothing, or git's own
 * monitor; any other value is a program to run.
 */
const BOOLEAN_VALUES = new Set(["false", "no", "off", "0", "", "true", "yes", "on", "1"]);

/** Why `settings` make git do more than read, or undefined. */
export function settingVerdict(settings: readonly GitSetting[]): string | undefined {
  for (const { name, value } of settings) {
    if (name === "core.fsmonitor" && BOOLEAN_VALUES.has((value ?? "true").toLowerCase())) continue;
    if (PROGRAM_PATTERNS.some((pattern) => pattern.test(name))) {
      return `${name}, which runs a program`;
    }
    if (ELSEWHERE_PATTERNS.some((pattern) => pattern.test(name))) {
      return `${name}, which takes git to files the check does not follow`;
    }
    if (FETCH_PATTERNS.some((pattern) => pattern.test(name))) {
      return `${name}, which makes git fetch the objects it lacks from a remote`;
    }
    if (SIGNATURE_PATTERNS.some(({ pattern, runs }) => pattern.test(name) && runs(value))) {
      return `${name}, which makes git log verify signatures with gpg`;
    }
  }
  return undefined;
}

/** Hooks git runs under commands that only read: `git status` refreshes the index and writes it. */
const READING_HOOKS = ["post-index-change", "reference-transaction"];

/**
 * Why git working with the repository in `gitDir` (its `.git` directory, or a bare repository's
 * own) does more than read, or undefined. Its own settings and those of the submodules it holds
 * (`git status` runs git in each of them) are read, and the hooks a read may run; a repository
 * whose settings are shared from elsewhere (`commondir`) is not followed. Without a way to read files, nothing is checked.
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

/**
 * Why the submodules checked out in the work tree at `top` make git do more than read, or
 * undefined. `git status` and `git diff` run git in each submodule `.gitmodules` names, with the
 * settings of the repository its `.git` holds (a directory of its own) or names (`gitdir: …`),
 * wherever that is: each is read as the main repository's are, and its own submodules in turn.
 */
export function worktreeSubmodulesVerdict(top: string, context: PathContext): string | undefined {
  const { readSmallFile, listDirectory } = context;
  if (readSmallFile === undefined || listDirectory === undefined) return undefined;
  if (!(listDirectory(top) ?? []).includes(".gitmodules")) return undefined;
  const text = readSmallFile(posix.join(top, ".gitmodules"));
  if (text === undefined) return undefined;
  const parsed = parseGitConfig(text);
  if (!parsed.ok) return `${top}/.gitmodules cannot be read by the check (${parsed.reason})`;
  for (const { name, value } of parsed.settings) {
    if (!/^submodule\..+\.path$/.test(name) || value === undefined) continue;
    const dir = posix.join(top, value);
    if (!(listDirectory(dir) ?? []).includes(".git")) continue;
    const dotGit = posix.join(dir, ".git");
    let gitDir = dotGit;
    if (listDirectory(dotGit) === undefined) {
      const named = /^gitdir: (.+)$/m.exec(readSmallFile(dotGit) ?? "")?.[1];
      if (named === undefined) return `${dotGit} names no repository the check can follow`;
      gitDir = posix.resolve(dir, named.trim());
    }
    const why = repositoryConfigVerdict(gitDir, context) ?? worktreeSubmodulesVerdict(dir, context);
    if (why !== undefined) return `the submodule at ${dir}: ${why}`;
  }
  return undefined;
}
