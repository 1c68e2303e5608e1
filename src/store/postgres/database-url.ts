/**
 * A PostgreSQL connection URL as it may be shown: in logs, messages and `Store.location`. The
 * password, when there is one, is replaced by `***`; everything else (user, host, port, database,
 * parameters) stays, so an operator can tell which database a server uses.
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
  return parsed.toString();
}
