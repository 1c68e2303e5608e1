import { createContext, Script, type Context } from "node:vm";

/** Thrown by `RegexBudget.run` when the work took longer than allowed. */
export class RegexTimeoutError extends Error {
  override readonly name = "RegexTimeoutError";
}

const trampoline = new Script("run()");

/**
 * Runs synchronous work (regular-expression matching on untrusted patterns and text) with a time
 * limit. A pattern that backtracks catastrophically would otherwise block the server's event loop
 * for every session; V8 interrupts it when the limit passes (the vm module's watchdog), and `run`
 * throws RegexTimeoutError. One instance per search; not re-entrant.
 */
export class RegexBudget {
  private job: () => unknown = () => undefined;
  private readonly context: Context;

  constructor(readonly timeoutMs: number) {
    this.context = createContext({ run: () => this.job() });
  }

  run<T>(work: () => T): T {
    this.job = work;
    try {
      return trampoline.runInContext(this.context, { timeout: this.timeoutMs }) as T;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ERR_SCRIPT_EXECUTION_TIMEOUT") {
        throw new RegexTimeoutError(`took longer than ${this.timeoutMs} ms`);
      }
      throw err;
    } finally {
      this.job = () => undefined;
    }
  }
}
