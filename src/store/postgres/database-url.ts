/** URL parameters that carry a password (node-postgres reads every parameter as a setting). */
const SECRET_PARAMETERS = new Set(["password", "sslpassword"]);

/**
 * A PostgreSQL connection URL as it may be shown: in logs, messages and `Store.location`. The
 * password, when there is one, is replaced by `***`, in the URL's user part and in the parameters
 * that carry one (`?password=`, which the driver takes as well, and `?sslpassword=`); everything
 * else (user, host, port, database, other parameters) stays, so an operator can tell which
 * database a server uses.
 */
export function redactDatabaseUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Not a URL: show its scheme at most, never what could be a secret.
    const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0];
    return scheme ? `${scheme}//…` : "(a database URL that cannot be parsed)";
  }
  if (parsed.password !== "") parsed.password = "***";
  const secrets = [...parsed.searchParams.keys()].filter((key) => SECRET_PARAMETERS.has(key));
  for (const key of secrets) parsed.searchParams.set(key, "***");
  return parsed.toString();
}
