import { posix } from "node:path";
import { HARMLESS_DEVICES, dangerousPathReason } from "./dangerous-path.js";
import { findInjection } from "./find-injection.js";
import type { ShellScript } from "./parse-shell.js";
import { isInside, isInsideWorkingDirectory, locate, resolvePath } from "./resolve-path.js";
import { SED_OUTPUTS, readSed } from "./sed-script.js";
import {
  type InnerCommand,
  flagsOf,
  innerCommands,
  pathArguments,
  splitAssignments,
} from "./shell-command.js";
import type { PathContext, SafetyCheck } from "./types.js";
import { writesFile } from "./writes-file.js";

/** A safety check that fired, with the reason shown to people. */
export interface SafetyFinding {
  check: SafetyCheck;
  reason: string;
}

const DISK_TOOLS = new Set(["dd", "fdisk", "sfdisk", "cfdisk", "parted", "wipefs", "mkswap"]);
const KILL_SIGNALS = new Set(["9", "KILL", "SIGKILL"]);

/**
 * Runs the Bash safety checks, in this order: injection, removal of a root, a sed script that runs
 * a program or writes, dangerous command, dangerous path. The first that fires decides; undefined
 * when none does. A safety finding is a bypass-immune ASK: no allow rule clears it. `written` are
 * the files the commands write, links followed (from the Bash analysis), so a link does not hide a
 * sensitive target.
 */
export function checkBashSafety(
  script: ShellScript,
  context: PathContext,
  written: readonly string[] = [],
): SafetyFinding | undefined {
  const injection = findInjection(script);
  if (injection !== undefined) {
    return { check: "safety.injection", reason: `injection risk: ${injection}` };
  }
  const commands = script.commands.map((command) => ({
    inner: innerCommands(splitAssignments(command).argv),
    redirects: command.redirects.filter(writesFile),
  }));
  for (const { inner } of commands) {
    for (const program of inner) {
      const reason = rmRootReason(program, context);
      if (reason !== undefined) return { check: "safety.rm_root", reason };
    }
  }
  for (const { inner } of commands) {
    for (const program of inner) {
      const reason = sedScriptReason(program, context);
      if (reason !== undefined) return { check: "safety.sed_script", reason };
    }
  }
  for (const { inner, redirects } of commands) {
    for (const program of inner) {
      const reason = dangerousCommandReason(program);
      if (reason !== undefined) return { check: "safety.dangerous_command", reason };
    }
    for (const redirect of redirects) {
      const target = resolvePath(redirect.target?.value ?? "", context);
      if (target.startsWith("/dev/") && !HARMLESS_DEVICES.has(target)) {
        return { check: "safety.dangerous_command", reason: `dangerous command: > ${target}` };
      }
    }
  }
  for (const { inner, redirects } of commands) {
    const paths = [
      ...inner.flatMap((program) => pathArguments(program.argv)),
      ...redirects.map((redirect) => redirect.target?.value ?? ""),
      ...written,
    ];
    for (const path of paths) {
      const reason = dangerousPathReason(path, context);
      if (reason !== undefined)
        return { check: "safety.dangerous_path", reason: `touches a ${reason}` };
    }
  }
  return undefined;
}

/** Why removing with `program` hits a root, the home directory or a working directory, if it does. */
function rmRootReason(program: InnerCommand, context: PathContext): string | undefined {
  const name = program.argv[0];
  if (name !== "rm" && name !== "rmdir") return undefined;
  for (const arg of pathArguments(program.argv)) {
    if (matchesEveryName(posix.basename(arg))) {
      return `${name} of ${arg} removes everything it matches`;
    }
    if (arg.startsWith("$")) return `${name} of ${arg}: the path depends on a variable`;
    if (/^~[^/]*\/*$/.test(arg)) return `${name} of a home directory (${arg})`;
    const resolved = resolvePath(arg, context);
    if (resolved === "/") return `${name} of the root directory`;
    if (posix.dirname(resolved) === "/") return `${name} of a top-level directory (${resolved})`;
    if (isInside(context.homeDir, resolved))
      return `${name} of the home directory or above (${arg})`;
    if (context.workingDirectories.some((dir) => isInside(dir, resolved))) {
      return `${name} of a working directory or above (${arg})`;
    }
  }
  return undefined;
}

/**
 * Whether a glob matches (nearly) every name in its directory: nothing is left once its wildcards
 * (`*`, `?`, bracket expressions) and dots are removed, as in `*`, `.*`, `?*`, `[!.]*`, `**`.
 */
function matchesEveryName(segment: string): boolean {
  if (!/[*?[]/.test(segment)) return false;
  return segment.replace(/\[[^\]]*\]/g, "").replace(/[*?.]/g, "") === "";
}

/**
 * Why a sed run by `program` may do more than edit its input, if it may: its script runs a program
 * (`e`, `s///e`), writes a file (`w`, `W`, `s///w`), reads a file outside the working directories
 * (`r`, `R`), or cannot be read (`-f`, syntax the check does not know).
 */
function sedScriptReason(program: InnerCommand, context: PathContext): string | undefined {
  if (program.argv[0] !== "sed") return undefined;
  const sed = readSed(program.argv.slice(1));
  if (!sed.ok) return undefined;
  const { effects } = sed;
  if (effects.unreadable !== undefined)
    return `sed script cannot be checked: ${effects.unreadable}`;
  if (effects.exec !== undefined) return `sed script runs a program (${effects.exec})`;
  const written = effects.writes.find((file) => !SED_OUTPUTS.has(file));
  if (written !== undefined) return `sed script writes ${written}`;
  const outside = effects.reads.find(
    (file) => !isInsideWorkingDirectory(locate(file, context, undefined, true).real, context),
  );
  if (outside !== undefined) return `sed script reads ${outside} outside the working directories`;
  return undefined;
}

/** Why `program` is a dangerous command, if it is. */
function dangerousCommandReason({ argv, wrappers }: InnerCommand): string | undefined {
  const name = argv[0] ?? "";
  const flags = flagsOf(argv);
  const recursive = flags.has("r") || flags.has("R") || flags.has("--recursive");
  if (name === "rm") {
    if (wrappers.includes("sudo") || wrappers.includes("doas")) return "dangerous command: sudo rm";
    if (recursive && (flags.has("f") || flags.has("--force"))) return "dangerous command: rm -rf";
  }
  if (DISK_TOOLS.has(name) || name === "mkfs" || name.startsWith("mkfs.")) {
    return `dangerous command: ${name}`;
  }
  if (name === "chmod" && argv.some((arg) => /^0?777$|^(a|ugo)?[+=]rwx$/.test(arg))) {
    return `dangerous command: chmod ${flags.has("R") || flags.has("--recursive") ? "-R " : ""}777`;
  }
  if ((name === "chown" || name === "chgrp") && (flags.has("R") || flags.has("--recursive"))) {
    return `dangerous command: ${name} -R`;
  }
  if (name === "kill" || name === "pkill" || name === "killall") {
    const args = argv.slice(1);
    const forced = args.some((arg, k) => {
      const previous = args[k - 1];
      if (previous === "-s" || previous === "-n" || previous === "--signal") {
        return KILL_SIGNALS.has(arg.toUpperCase());
      }
      const signals = [arg.replace(/^--signal=/, ""), arg.replace(/^-[sn]/, ""), arg.slice(1)];
      return (
        arg.startsWith("-") && signals.some((signal) => KILL_SIGNALS.has(signal.toUpperCase()))
      );
    });
    if (forced) return `dangerous command: ${name} -9`;
  }
  return undefined;
}
