import { resolvePath } from "./resolve-path.js";
import type { PathContext } from "./types.js";

/**
 * Directories whose contents configure code that runs later (git hooks, editor tasks, ssh keys,
 * cloud credentials): writing anywhere below them is a safety ASK.
 */
const DANGEROUS_DIRECTORIES = new Set([
  ".git",
  ".ssh",
  ".vscode",
  ".idea",
  ".husky",
  ".aws",
  ".gnupg",
  ".kube",
  ".docker",
]);

/** Files that shells, git, package managers or tools read and act on, or that hold secrets. */
const DANGEROUS_FILES = new Set([
  ".bashrc",
  ".bash_profile",
  ".bash_login",
  ".bash_logout",
  ".zshrc",
  ".zshenv",
  ".zprofile",
  ".zlogin",
  ".zlogout",
  ".profile",
  ".inputrc",
  ".gitconfig",
  ".gitmodules",
  ".git-credentials",
  ".npmrc",
  ".yarnrc",
  ".yarnrc.yml",
  ".pypirc",
  ".netrc",
  ".ripgreprc",
  ".mcp.json",
  ".env",
  ".envrc",
]);

/** System trees no agent should write to. */
const SYSTEM_DIRECTORIES = ["/etc", "/boot", "/dev", "/proc", "/sys"];

/** Device files that are harmless to write to. */
export const HARMLESS_DEVICES = new Set([
  "/dev/null",
  "/dev/stdout",
  "/dev/stderr",
  "/dev/tty",
  "/dev/fd/1",
  "/dev/fd/2",
]);

/**
 * Says why writing to `path` is dangerous, or undefined when it is not. Names are compared
 * case-insensitively (case-insensitive file systems would otherwise let `.GIT/hooks` through);
 * `:` separates segments too, so `host:.ssh/x` and `~/.ssh:/root/.ssh` are caught.
 */
export function dangerousPathReason(path: string, context: PathContext): string | undefined {
  for (const segment of path.toLowerCase().split(/[/:]/)) {
    if (DANGEROUS_DIRECTORIES.has(segment)) return `sensitive path ${path} (${segment})`;
    if (DANGEROUS_FILES.has(segment) || segment.startsWith(".env.")) {
      return `sensitive file ${path} (${segment})`;
    }
  }
  const resolved = resolvePath(path, context);
  if (HARMLESS_DEVICES.has(resolved)) return undefined;
  for (const dir of SYSTEM_DIRECTORIES) {
    if (resolved === dir || resolved.startsWith(`${dir}/`)) return `system path ${path} (${dir})`;
  }
  return undefined;
}
