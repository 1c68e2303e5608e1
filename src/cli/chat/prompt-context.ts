import { ParkwayClientError, type ParkwaySession } from "../../client/index.js";
import type { Input } from "./input.js";
import type { LineResult } from "./input.js";
import type { Screen } from "./screen.js";
import type { SelectResult } from "./select.js";
import { MARK } from "./style.js";

/** What a prompt for one pending call works with. */
export interface PromptContext {
  screen: Screen;
  input: Input;
  session: ParkwaySession;
  agentId: string;
  /** Aborts when the call stops waiting (answered elsewhere, reply ended, session switched). */
  signal: AbortSignal;
}

/**
 * How a prompt for one call ended: `answered` (the server applied the answer); `gone` (the call no
 * longer waits); `later` (the user put it off with Escape); `interrupt` (Ctrl-C); `eof` (input
 * ended); `cancel` (the signal aborted).
 */
export type Outcome = "answered" | "gone" | "later" | "interrupt" | "eof" | "cancel";

/** The outcome of a list or line read that picked nothing. */
export function unanswered(
  result: Exclude<SelectResult | LineResult, { indices: number[] }>,
): Outcome {
  if (result.kind === "interrupt") return "interrupt";
  if (result.kind === "eof") return "eof";
  return "later";
}

const FAILED_PRECONDITION = 9;
const NOT_FOUND = 5;
const INVALID_ARGUMENT = 3;

/**
 * Shows why the server refused an answer. Returns `gone` when the call no longer waits (state or
 * id no longer fit), `retry` when the answer itself was invalid and may be given again, `later`
 * otherwise (the connection failed: the call still waits on the server).
 */
export function showRefusal(screen: Screen, err: unknown): "gone" | "retry" | "later" {
  const c = screen.c;
  if (!(err instanceof ParkwayClientError)) {
    screen.line(c.red(`${MARK.fail} ${err instanceof Error ? err.message : String(err)}`));
    return "later";
  }
  const details = [
    ...err.fieldViolations.map((v) => `${v.field}: ${v.description}`),
    ...err.preconditionViolations.map((v) => `${v.subject}: ${v.description}`),
  ];
  screen.line(
    c.red(`${MARK.fail} the server refused it (${err.codeName}): ${err.message}`),
    ...details.filter((d) => !err.message.includes(d)).map((d) => c.dim(`    ${d}`)),
  );
  if (err.code === FAILED_PRECONDITION || err.code === NOT_FOUND) return "gone";
  if (err.code === INVALID_ARGUMENT) return "retry";
  return "later";
}

/** Sends an answer; maps a refusal as `showRefusal` does. */
export async function submit(
  screen: Screen,
  send: () => Promise<void>,
): Promise<"answered" | "gone" | "retry" | "later"> {
  try {
    await send();
    return "answered";
  } catch (err) {
    return showRefusal(screen, err);
  }
}
