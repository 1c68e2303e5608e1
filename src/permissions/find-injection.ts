import type { ShellScript } from "./parse-shell.js";
import {
  MAX_BRACE_EXPANSION,
  expandBraces,
  innerCommands,
  lookup,
  splitAssignments,
} from "./shell-command.js";

/** Reserved words that open compound commands whose structure the split cannot follow. */
const KEYWORDS: Record<string, string> = {
  for: "loop (for)",
  while: "loop (while)",
  until: "loop (until)",
  select: "loop (select)",
  do: "loop (do)",
  done: "loop (done)",
  function: "function definition",
  "[[": "conditional [[ … ]]",
  "]]": "conditional [[ … ]]",
  if: "compound command (if)",
  then: "compound command (then)",
  elif: "compound command (elif)",
  else: "compound command (else)",
  fi: "compound command (fi)",
  case: "compound command (case)",
  esac: "compound command (esac)",
  coproc: "compound command (coproc)",
  "{": "command group { … }",
  "}": "command group { … }",
};

/** Shells and interpreters of shell code that `-c` hands a string to. */
const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "csh", "tcsh"]);

/**
 * Names the first construct through which the command line can run code that the analysis cannot
 * see, or undefined. Covers the lexer's risks (`$(…)`, backticks, `<(…)`, `>(…)`, `${…}`, `$'…'`,
 * subshells, function definitions, unterminated quotes), loops and other compound commands, `[[ ]]`,
 * `eval`, `sh -c` and friends, `env -S`, a variable as the command name, and brace expansions too
 * large to check.
 */
export function findInjection(script: ShellScript): string | undefined {
  const risk = script.risks[0];
  if (risk !== undefined) return risk;
  for (const command of script.commands) {
    const { argv } = splitAssignments(command);
    const keyword = lookup(KEYWORDS, argv[0]);
    if (keyword !== undefined) return keyword;
    if (argv.some((arg) => expandBraces(arg).length > MAX_BRACE_EXPANSION)) {
      return "brace expansion too large to check";
    }
    const envAt = argv.indexOf("env");
    if (
      envAt !== -1 &&
      argv.slice(envAt + 1).some((arg) => /^(-[A-Za-z]*S|--split-string)/.test(arg))
    ) {
      return "env -S";
    }
    for (const inner of innerCommands(argv)) {
      const [name, ...args] = inner.argv;
      if (name === undefined) continue;
      if (name.includes("$")) return "variable as command name";
      if (name === "eval") return "eval";
      if (SHELLS.has(name) && args.some((arg) => /^-[A-Za-z]*c[A-Za-z]*$/.test(arg))) {
        return `nested shell ${name} -c`;
      }
    }
  }
  return undefined;
}
