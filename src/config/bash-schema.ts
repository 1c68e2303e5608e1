import { z } from "zod";

/** An environment variable's name. */
const envName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name: letters, digits and _");

/**
 * How Bash runs commands. Commands get a clean environment (PATH, HOME, USER, LOGNAME, SHELL, LANG,
 * TERM=dumb, PAGER=cat, GIT_PAGER=cat, TMPDIR), never the server's own: `passEnv` names server
 * variables to hand through, and `env` sets values (it wins over both).
 */
export const bashConfigSchema = z.strictObject({
  /** Variables set for every command, e.g. {"NODE_ENV": "test"}. */
  env: z.record(envName, z.string()).default({}),
  /** Names of the server's variables passed through when set, e.g. ["GOPATH", "SSH_AUTH_SOCK"]. */
  passEnv: z.array(envName).default([]),
  /** Processes a command may run at once (its process group); past it the group is killed. */
  maxProcesses: z.number().int().min(1).max(100_000).default(1024),
});
export type BashConfig = z.infer<typeof bashConfigSchema>;
export const BASH_CONFIG_DEFAULT: BashConfig = { env: {}, passEnv: [], maxProcesses: 1024 };
