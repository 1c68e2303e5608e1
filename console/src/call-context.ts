import { errorText } from "./format.js";
import type { SendInput, Session, ToolCallBlock } from "./parkway.js";

/** Sends one input of a parked reply; rejects with the server's refusal. */
export type SendFn = (input: SendInput) => Promise<unknown>;

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
    await ctx.send(built);
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
