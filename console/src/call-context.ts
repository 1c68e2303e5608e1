import { errorText, unreachable } from "./format.js";
import { newRequestId, type SendInput, type Session, type ToolCallBlock } from "./parkway.js";

/**
 * Sends one input of a parked reply under `requestId` (a retry with the same id is applied once);
 * rejects with the server's refusal.
 */
export type SendFn = (input: SendInput, requestId: string) => Promise<unknown>;

/** Waits before each new attempt when the server could not be reached: about 6 s in all. */
const RETRY_WAITS_MS = [250, 500, 1000, 2000, 2000];

/**
 * Sends `input`, and sends it again with the same request id while the server cannot be reached:
 * an attempt whose answer was lost on the way back may have been applied, and the server applies
 * an id once and answers its retries with the first outcome.
 */
async function sendOnce(send: SendFn, input: SendInput, waiting: () => void): Promise<void> {
  const requestId = newRequestId();
  for (let attempt = 0; ; attempt++) {
    try {
      await send(input, requestId);
      return;
    } catch (err) {
      const wait = RETRY_WAITS_MS[attempt];
      if (!unreachable(err) || wait === undefined) throw err;
      waiting();
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

/** What a card needs to answer its call. */
export interface CallContext {
  session: Session;
  call: ToolCallBlock;
  send: SendFn;
  /** Says something to screen readers (the page's live region). */
  announce: (text: string) => void;
}

/**
 * Runs `action` with every control of `card` disabled; shows the refusal in the card's alert and
 * enables the controls again when it fails, or says that the answer was sent. The card is marked
 * `data-sending` meanwhile.
 */
export async function submitFrom(
  card: HTMLElement,
  ctx: CallContext,
  what: string,
  input: () => SendInput,
): Promise<void> {
  const alert = card.querySelector<HTMLElement>(".call-alert");
  const controls = [
    ...card.querySelectorAll<HTMLButtonElement | HTMLInputElement>(
      "button, input, select, textarea",
    ),
  ];
  let built: SendInput;
  try {
    built = input();
  } catch (err) {
    if (alert) alert.textContent = err instanceof Error ? err.message : String(err);
    return;
  }
  for (const c of controls) c.disabled = true;
  if (alert) alert.textContent = "";
  // While it is set, the parked view keeps the card even when its call no longer waits.
  card.dataset.sending = "true";
  try {
    await sendOnce(ctx.send, built, () => {
      if (alert) alert.textContent = `${what}: the server could not be reached; sending again…`;
    });
    if (alert) alert.textContent = "";
    card.classList.add("answered");
    const status = card.querySelector<HTMLElement>(".call-status");
    if (status) status.textContent = `${what}: sent.`;
    ctx.announce(`${what}: ${ctx.call.name} in session ${ctx.session.id}.`);
  } catch (err) {
    for (const c of controls) c.disabled = false;
    if (alert) alert.textContent = `${what} failed: ${errorText(err)}`;
  } finally {
    delete card.dataset.sending;
  }
}
