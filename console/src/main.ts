import "./styles.css";
import { createAuditView } from "./audit-view.js";
import { sleep } from "./dom.js";
import { errorText } from "./format.js";
import { createParkedView } from "./parked-view.js";
import { Code, ConnectError, createWebClient, type Session } from "./parkway.js";
import { createRulesView } from "./rules-view.js";
import { createTranscript } from "./transcript.js";

const TOKEN_KEY = "parkway.token";
const POLL_MS = 500;
const AUDIT_POLL_MS = 2000;

type View = "parked" | "rules" | "audit";

const client = createWebClient({
  baseUrl: window.location.origin,
  token: () => sessionStorage.getItem(TOKEN_KEY) || undefined,
});

const announcer = document.getElementById("announcer")!;
/** Says `text` through the polite live region. */
function announce(text: string) {
  announcer.textContent = "";
  window.setTimeout(() => (announcer.textContent = text), 50);
}

const connection = document.getElementById("connection")!;
const signOut = document.getElementById("sign-out") as HTMLButtonElement;
const signInSection = document.getElementById("sign-in")!;
const signInForm = document.getElementById("sign-in-form") as HTMLFormElement;
const tokenInput = document.getElementById("token") as HTMLInputElement;
const signInError = document.getElementById("sign-in-error")!;
const app = document.getElementById("app")!;
const mainHeading = document.getElementById("main-heading")!;
const parkedCount = document.getElementById("parked-count")!;

let latest: Session[] = [];

const transcript = createTranscript(client);
const parked = createParkedView({
  send: (session, input, requestId) => client.send(session.id, input, requestId),
  openTranscript: (id) => transcript.open(id),
  announce,
});
const rules = createRulesView(
  client,
  () => {
    const ids = latest.slice(0, 20).map((s) => s.id);
    const open = transcript.sessionId();
    return open && !ids.includes(open) ? [...ids, open] : ids;
  },
  announce,
);
const audit = createAuditView(client);

document.getElementById("view-parked")!.append(parked.el);
document.getElementById("view-rules")!.append(rules.el);
document.getElementById("view-audit")!.append(audit.el);
document.getElementById("side")!.append(transcript.el);

let view: View = "parked";
function show(next: View) {
  view = next;
  for (const name of ["parked", "rules", "audit"] as const) {
    document.getElementById(`view-${name}`)!.hidden = name !== next;
    document.getElementById(`tab-${name}`)!.setAttribute("aria-current", String(name === next));
  }
  mainHeading.textContent = {
    parked: "Waiting for you",
    rules: "Rules in force",
    audit: "Audit trail",
  }[next];
  if (next === "rules") void rules.load();
  if (next === "audit") void audit.poll();
}
for (const name of ["parked", "rules", "audit"] as const) {
  document.getElementById(`tab-${name}`)!.addEventListener("click", () => show(name));
}

let polling: AbortController | undefined;

async function pollSessions(signal: AbortSignal) {
  let lastAudit = 0;
  while (!signal.aborted) {
    try {
      const { sessions } = await client.agent.listSessions({ pageSize: 100 }, { signal });
      latest = sessions;
      parked.update(sessions);
      const n = parked.count();
      parkedCount.textContent = n > 0 ? String(n) : "";
      connection.textContent = "Connected";
      connection.className = "ok";
    } catch (err) {
      if (signal.aborted) return;
      if (err instanceof ConnectError && err.code === Code.Unauthenticated) {
        sessionStorage.removeItem(TOKEN_KEY);
        requireSignIn(
          tokenWasGiven
            ? "The token was refused; sign in again."
            : "This server needs a tenant token.",
        );
        return;
      }
      connection.textContent = `Disconnected: ${errorText(err)}`;
      connection.className = "bad";
    }
    if (view === "audit" && Date.now() - lastAudit >= AUDIT_POLL_MS) {
      lastAudit = Date.now();
      void audit.poll();
    }
    await sleep(POLL_MS, signal);
  }
}

let tokenWasGiven = false;

function start() {
  tokenWasGiven = Boolean(sessionStorage.getItem(TOKEN_KEY));
  signInSection.hidden = true;
  app.hidden = false;
  signOut.hidden = false;
  polling?.abort();
  polling = new AbortController();
  void pollSessions(polling.signal);
}

function requireSignIn(message: string) {
  polling?.abort();
  transcript.close();
  app.hidden = true;
  signInSection.hidden = false;
  signOut.hidden = true;
  signInError.textContent = message;
  connection.textContent = "Signed out";
  connection.className = "";
  tokenInput.focus();
}

signInForm.addEventListener("submit", (event) => {
  event.preventDefault();
  // An empty token signs in to a server without tenants. The page starts afresh for the new
  // principal: nothing another tenant's token showed stays on it.
  sessionStorage.setItem(TOKEN_KEY, tokenInput.value.trim());
  window.location.reload();
});

signOut.addEventListener("click", () => {
  polling?.abort();
  sessionStorage.removeItem(TOKEN_KEY);
  window.location.reload();
});

show("parked");
if (sessionStorage.getItem(TOKEN_KEY) === null) requireSignIn("");
else start();
