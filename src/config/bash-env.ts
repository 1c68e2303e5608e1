import { homedir, userInfo } from "node:os";
import type { BashConfig } from "./bash-schema.js";

/** PATH for commands when the server has none. */
const FALLBACK_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/**
 * The environment Bash commands of an agent run with: a clean base, then the `passEnv` variables the
 * server has, then `env`. The base holds PATH and TMPDIR as the server has them, HOME, USER and
 * LOGNAME of the user the server runs as (HOME is the real one: Bash is confined by its cwd, not by
 * HOME, and tools such as git and npm keep their caches and settings there), SHELL=/bin/bash,
 * LANG=C.UTF-8, and TERM=dumb with PAGER=cat and GIT_PAGER=cat since no terminal is attached.
 * Nothing else of the server's environment (API keys, tokens) reaches a command.
 */
export function bashEnvironment(
  bash: Pick<BashConfig, "env" | "passEnv">,
  serverEnv: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  let user = serverEnv.USER ?? "";
  if (user === "") {
    try {
      user = userInfo().username;
    } catch {
      user = "";
    }
  }
  const env: Record<string, string> = {
    PATH: serverEnv.PATH || FALLBACK_PATH,
    HOME: serverEnv.HOME || homedir(),
    SHELL: "/bin/bash",
    LANG: "C.UTF-8",
    TERM: "dumb",
    PAGER: "cat",
    GIT_PAGER: "cat",
  };
  if (user !== "") {
    env.USER = user;
    env.LOGNAME = user;
  }
  if (serverEnv.TMPDIR) env.TMPDIR = serverEnv.TMPDIR;
  for (const name of bash.passEnv) {
    const value = serverEnv[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, ...bash.env };
}
