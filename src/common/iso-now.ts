let lastMs = Number.NaN;
let lastIso = "";

/**
 * Now as an ISO 8601 string (`new Date().toISOString()`), made once per millisecond: a streaming
 * reply stamps every event, many to a millisecond.
 */
export function isoNow(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}
