import { pino } from "pino";

/** The logging surface Parkway uses; a pino logger satisfies it. */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  child(bindings: Record<string, unknown>): Logger;
}

/** A logger that drops everything. */
export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child() {
    return silentLogger;
  },
};

/** Parkway's own logger: JSON lines (pino) on standard output at `level`. */
export function jsonLogger(level: string): Logger {
  return pino({ level, base: { service: "parkway" } });
}
