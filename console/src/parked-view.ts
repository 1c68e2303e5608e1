import { h, replace, uid } from "./dom.js";
import { pendingCallCard } from "./pending-call.js";
import { statusText, timeText } from "./format.js";
import {
  type SendInput,
  type Session,
  SessionStatus,
  type ToolCallBlock,
  ToolCallState,
} from "./parkway.js";

/** What the parked view does on the page. */
export interface ParkedViewHooks {
  send: (session: Session, input: SendInput, requestId: string) => Promise<unknown>;
  openTranscript: (sessionId: string) => void;
  announce: (text: string) => void;
}

interface CardEntry {
  card: HTMLElement;
  call: ToolCallBlock;
  session: Session;
}

interface SessionEntry {
  el: HTMLElement;
  status: HTMLElement;
  calls: HTMLElement;
  cards: Map<string, CardEntry>;
}

/** How many "answered elsewhere" notes the view keeps; older ones go. */
const MAX_NOTES = 20;

const PARKED = new Set([SessionStatus.AWAITING_PERMISSION, SessionStatus.AWAITING_EXTERNAL_RESULT]);

/** A card per call and state: an allowed external call gets a new card for its result. */
function cardKey(session: Session, call: ToolCallBlock): string {
  return `${session.replyId}/${call.id}/${call.state}`;
}

function waiting(call: ToolCallBlock): boolean {
  return call.state === ToolCallState.ASKING || call.state === ToolCallState.SUBMITTED;
}

/**
 * The sessions whose reply is parked, each with a card per pending call, and the other sessions.
 * `update` reconciles by session and call id, so a card being filled in stays as it is while the
 * list refreshes; a call that is new since the last update is announced. A card whose call stops
 * waiting without an answer from this page (another person or client answered it, or it expired)
 * leaves a note that says so, with the refusal of an answer this page sent too late; a card whose
 * answer is still being sent stays until the server has said how it went.
 */
export function createParkedView(hooks: ParkedViewHooks) {
  const list = h("div", { class: "parked-list" });
  const empty = h("p", { class: "muted empty" }, "No reply is waiting for you.");
  const othersList = h("ul", { class: "other-sessions" });
  const othersCount = h("span", {}, "");
  const others = h(
    "details",
    { class: "others" },
    h("summary", {}, "Other sessions ", othersCount),
    othersList,
  );
  const notes = h("ul", { class: "settled", "aria-label": "Answered elsewhere" });
  const entries = new Map<string, SessionEntry>();
  const el = h("div", {}, notes, empty, list, others);
  let first = true;
  let othersKey = "";

  function entryFor(session: Session): SessionEntry {
    let entry = entries.get(session.id);
    if (entry) return entry;
    const headingId = uid("session");
    const status = h("span", { class: "badge" });
    const calls = h("div", { class: "calls" });
    const article = h(
      "article",
      { class: "session", "aria-labelledby": headingId, "data-session-id": session.id },
      h(
        "header",
        {},
        h("h2", { id: headingId }, "Session ", h("code", {}, session.id)),
        h("p", { class: "muted" }, `agent ${session.agentId} · `, status),
        h(
          "button",
          { type: "button", onclick: () => hooks.openTranscript(session.id) },
          "Transcript",
        ),
      ),
      calls,
    );
    entry = { el: article, status, calls, cards: new Map() };
    entries.set(session.id, entry);
    return entry;
  }

  function removeCard(entry: SessionEntry, id: string, card: HTMLElement) {
    const hadFocus = card.contains(document.activeElement);
    card.remove();
    entry.cards.delete(id);
    if (hadFocus) {
      const next = list.querySelector<HTMLElement>(".call button, .call input");
      (next ?? document.getElementById("main-heading"))?.focus();
    }
  }

  /** A note that the call of `item` stopped waiting without this page's answer. */
  function noteAnsweredElsewhere(item: CardEntry): HTMLButtonElement {
    const { call, session, card } = item;
    const refusal = card.querySelector(".call-alert")?.textContent?.trim() ?? "";
    const li = h("li", { class: "note", "data-call-id": call.id });
    const dismiss = h(
      "button",
      {
        type: "button",
        "aria-label": `Dismiss the note on ${call.name} in session ${session.id}`,
        onclick: () => {
          const hadFocus = li.contains(document.activeElement);
          li.remove();
          if (hadFocus) document.getElementById("main-heading")?.focus();
        },
      },
      "Dismiss",
    );
    li.append(
      h(
        "p",
        {},
        h("strong", {}, "Answered elsewhere: "),
        h("code", {}, call.name),
        " in session ",
        h("code", {}, session.id),
        " no longer waits for you (another person or client answered it, or it expired). ",
        refusal ? `Your answer was not applied: ${refusal}` : "Nothing was sent from here.",
      ),
      dismiss,
    );
    notes.prepend(li);
    while (notes.children.length > MAX_NOTES) notes.lastElementChild?.remove();
    hooks.announce(
      `${call.name} in session ${session.id} was answered elsewhere; ${
        refusal ? "your answer was not applied" : "nothing was sent from here"
      }.`,
    );
    return dismiss;
  }

  /**
   * Takes away the card of a call that no longer waits: quietly when this page answered it, with a
   * note otherwise. Keeps it (returns false) while its answer is being sent.
   */
  function retire(entry: SessionEntry, id: string, item: CardEntry): boolean {
    const { card } = item;
    if (card.dataset.sending === "true") return false;
    if (card.classList.contains("answered")) {
      removeCard(entry, id, card);
      return true;
    }
    const hadFocus = card.contains(document.activeElement);
    card.remove();
    entry.cards.delete(id);
    const dismiss = noteAnsweredElsewhere(item);
    if (hadFocus) dismiss.focus();
    return true;
  }

  function update(sessions: Session[]): void {
    const parked = sessions.filter((s) => PARKED.has(s.status));
    const seen = new Set<string>();
    for (const session of parked) {
      seen.add(session.id);
      const entry = entryFor(session);
      entry.status.textContent = statusText(session.status);
      if (entry.el.parentElement !== list) list.append(entry.el);
      const calls = session.pendingToolCalls.filter(waiting);
      const ids = new Set(calls.map((c) => cardKey(session, c)));
      for (const [id, item] of entry.cards) if (!ids.has(id)) retire(entry, id, item);
      for (const call of calls) {
        const id = cardKey(session, call);
        if (entry.cards.has(id)) continue;
        const card = pendingCallCard({
          session,
          call,
          send: (input, requestId) => hooks.send(session, input, requestId),
          announce: hooks.announce,
        });
        entry.cards.set(id, { card, call, session });
        entry.calls.append(card);
        if (!first) hooks.announce(`New: ${call.name} in session ${session.id} waits for you.`);
      }
    }
    for (const [id, entry] of entries) {
      if (seen.has(id)) continue;
      for (const [callId, item] of entry.cards) retire(entry, callId, item);
      if (entry.cards.size > 0) continue; // an answer still being sent: its outcome shows first
      entry.el.remove();
      entries.delete(id);
    }
    empty.hidden = parked.length > 0;
    const rest = sessions.filter((s) => !PARKED.has(s.status));
    othersCount.textContent = `(${rest.length})`;
    const key = rest.map((s) => `${s.id}:${s.status}:${timeText(s.updatedAt)}`).join(",");
    if (key !== othersKey) {
      othersKey = key;
      replace(
        othersList,
        rest.map((s) =>
          h(
            "li",
            {},
            h("code", {}, s.id),
            ` · ${s.agentId} · ${statusText(s.status)} · ${timeText(s.updatedAt)} `,
            h(
              "button",
              { type: "button", onclick: () => hooks.openTranscript(s.id) },
              "Transcript",
            ),
          ),
        ),
      );
    }
    first = false;
  }

  return { el, update, count: () => list.querySelectorAll(".call:not(.answered)").length };
}
