import type { Logger } from "../../src/common/logger.js";

/** A logger that records every entry, for asserting on what was logged. */
export function captureLog(): Logger & { entries: { level: string; obj: object; msg?: string }[] } {
  const entries: { level: string; obj: object; msg?: string }[] = [];
  const make = (bindings: object): Logger => {
    const at = (level: string) => (obj: object, msg?: string) =>
      entries.push({ level, obj: { ...bindings, ...obj }, ...(msg === undefined ? {} : { msg }) });
    return {
      debug: at("debug"),
      info: at("info"),
      warn: at("warn"),
      error: at("error"),
      child: (more) => make({ ...bindings, ...more }),
    };
  };
  return Object.assign(make({}), { entries });
}
