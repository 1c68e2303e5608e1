/**
 * Whether `url` carries credentials (`http://user:pass@host/`). Parkway's requests cannot be sent
 * to such a URL (fetch refuses it), and the URL is logged and shown, so the config refuses it.
 */
export function hasCredentials(url: string): boolean {
  if (!URL.canParse(url)) return false;
  const parsed = new URL(url);
  return parsed.username !== "" || parsed.password !== "";
}
