import type { Move } from "./directory-walk.js";
import { dependsOnVariable, isInsideWorkingDirectory, locate } from "./resolve-path.js";
import type { PathContext } from "./types.js";

/** Where `cd`/`pushd`/`popd` leads, and whether that stays inside the working directories. */
export function directoryChange(
  name: string,
  args: readonly string[],
  context: PathContext,
  cwd: string | undefined,
): { move: Move; inside: boolean } {
  // `cd -`, `popd` with an index or -n, `pushd` with none, an index or -n: where later commands
  // run depends on the previous directory or the stack, which are not followed here.
  const lost = { move: { kind: "lost" }, inside: false } as const;
  if (name === "popd") return args.length === 0 ? { move: { kind: "popd" }, inside: false } : lost;
  const target = args.filter((arg) => !/^-[LPe@]+$/.test(arg))[0];
  if (
    target === "-" ||
    (name === "pushd" && (target === undefined || /^[+-]\d+$/.test(target) || args.includes("-n")))
  ) {
    return lost;
  }
  const written = target ?? "~";
  if (dependsOnVariable(written)) return lost;
  if (cwd === undefined && !written.startsWith("/") && !written.startsWith("~")) return lost;
  // Without -P, bash folds `..` against $PWD before it follows links (`cd link/..` stays where
  // it was) when that directory exists, and the walk keeps that logical directory; else it
  // takes the path as the system does.
  // Its wildcards and braces were expanded with the line's words (expand-words).
  const located = locate(written, context, cwd, true);
  const modes = args.filter((arg) => /^-[LPe@]+$/.test(arg)).join("");
  const logical = !modes.replace(/[^LP]/g, "").endsWith("P");
  let to = located.real;
  let real = located.real;
  if (logical) {
    const folded = context.realPath?.(located.path) ?? located.path;
    if (folded === located.real) to = located.path;
    else if (context.listDirectory === undefined) return lost;
    else if (context.listDirectory(located.path) !== undefined) {
      to = located.path;
      real = folded;
    }
  }
  const inside = isInsideWorkingDirectory(real, context);
  return { move: { kind: name === "pushd" ? "pushd" : "cd", to }, inside };
}
