/**
 * What the client commands (`parkway chat`) take from the environment: the bearer token for a
 * server with tenants, so it need not appear on the command line.
 */
export function clientToken(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env.PARKWAY_TOKEN || undefined;
}
