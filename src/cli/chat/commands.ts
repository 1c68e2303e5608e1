import type { ParkwayClient } from "../../client/index.js";
import { ruleText } from "./format.js";
import { showRefusal } from "./prompt-context.js";
import type { Screen } from "./screen.js";
import { MARK } from "./style.js";
import {
  behaviorName,
  modeName,
  PERMISSION_MODES,
  type PermissionRule,
  scopeName,
  sourceName,
  statusName,
} from "./wire.js";

/** What the slash commands act on. */
export interface ChatControl {
  readonly client: ParkwayClient;
  readonly screen: Screen;
  readonly sessionId: string;
  /** Stops the current reply; resolves with whether the server accepted the interrupt. */
  interrupt(): Promise<boolean>;
  /** Switches the chat to another session. */
  attach(sessionId: string): Promise<void>;
  /** Prints the last tool call and its result in full. */
  expand(): void;
  /** Ends the chat. */
  quit(): void;
}

export const HELP = [
  "/rules              the rules in effect for this session, numbered",
  "/rules revoke N     removes rule N",
  "/mode [MODE]        shows or sets the permission mode: " +
    Object.keys(PERMISSION_MODES).join(", "),
  "/interrupt          stops the running or parked reply",
  "/sessions           your sessions with their status and pending calls",
  "/attach ID          switches to another session",
  "/expand             the last tool call and its result in full (also ctrl-o)",
  "/help               this list",
  "/quit               ends the chat (the session stays on the server)",
  "Ctrl-C interrupts the running reply; a second Ctrl-C quits.",
];

/** What the commands remember: the rules listed by the last `/rules`, so N names what was seen. */
interface CommandState {
  listed: PermissionRule[];
}

async function rules(ctl: ChatControl, state: CommandState, args: string[]): Promise<void> {
  const { screen, client } = ctl;
  const c = screen.c;
  if (args[0] === "revoke" || args[0] === "rm") {
    const n = Number(args[1]);
    const rule = Number.isInteger(n) ? state.listed[n - 1] : undefined;
    if (!rule) {
      screen.line(c.red(`${MARK.fail} no rule ${args[1] ?? ""}: run /rules and give its number`));
      return;
    }
    if (!rule.id) {
      screen.line(c.red(`${MARK.fail} rule ${n} comes from the server's configuration`));
      return;
    }
    const removed = await client.removeRule(rule.id);
    screen.line(`${c.green(MARK.ok)} revoked ${ruleText(removed)} (${scopeName(removed.scope)})`);
    return;
  }
  const listed = await client.listRules({ sessionId: ctl.sessionId });
  state.listed = listed;
  if (listed.length === 0) {
    screen.line(c.dim("no rules in effect for this session"));
    return;
  }
  screen.line(
    c.bold("rules in effect for this session:"),
    ...listed.map((r, i) => {
      const by = r.createdBy ? ` by ${r.createdBy}` : "";
      return `  ${i + 1}. ${behaviorName(r.behavior)} ${c.bold(ruleText(r))}  ${c.dim(`${scopeName(r.scope)} · ${sourceName(r.source)}${by}`)}`;
    }),
    c.dim("  /rules revoke N removes one"),
  );
}

async function mode(ctl: ChatControl, args: string[]): Promise<void> {
  const { screen, client } = ctl;
  const c = screen.c;
  const name = args[0]?.toLowerCase().replace("-", "_");
  if (!name) {
    const session = await client.getSession(ctl.sessionId);
    if (session.permissionMode) {
      screen.line(`permission mode: ${c.bold(modeName(session.permissionMode))}`);
      return;
    }
    const agent = (await client.listAgents()).find((a) => a.id === session.agentId);
    screen.line(
      `permission mode: ${c.bold(modeName(agent?.permissionMode ?? 0))} ${c.dim(`(agent ${session.agentId}'s)`)}`,
    );
    return;
  }
  const value = PERMISSION_MODES[name];
  if (value === undefined) {
    screen.line(
      c.red(
        `${MARK.fail} unknown mode ${name}; modes: ${Object.keys(PERMISSION_MODES).join(", ")}`,
      ),
    );
    return;
  }
  const now = await client.setMode(ctl.sessionId, value);
  screen.line(`${c.green(MARK.ok)} permission mode: ${c.bold(modeName(now))}`);
}

async function sessions(ctl: ChatControl): Promise<void> {
  const { screen, client } = ctl;
  const c = screen.c;
  const res = await client.listSessions({ pageSize: 50 });
  if (res.sessions.length === 0) {
    screen.line(c.dim("no sessions"));
    return;
  }
  screen.line(
    c.bold("sessions (newest first):"),
    ...res.sessions.map((s) => {
      const here = s.id === ctl.sessionId ? c.cyan(MARK.pointer) : " ";
      const n = s.pendingToolCalls.length;
      const pending = n > 0 ? c.yellow(`${n} pending`) : c.dim("0 pending");
      return `${here} ${s.id}  ${s.agentId}  ${statusName(s.status)}  ${pending}`;
    }),
    ...(res.nextPageToken ? [c.dim("  … more sessions not shown")] : []),
    c.dim("  /attach ID switches to one"),
  );
}

/**
 * Makes the runner of slash command lines (`/name args…`). Unknown commands and server refusals
 * are shown; the chat goes on.
 */
export function commandRunner(ctl: ChatControl): (line: string) => Promise<void> {
  const state: CommandState = { listed: [] };
  return (line) => runCommand(ctl, state, line);
}

async function runCommand(ctl: ChatControl, state: CommandState, line: string): Promise<void> {
  const [name = "", ...args] = line.slice(1).trim().split(/\s+/);
  const c = ctl.screen.c;
  try {
    switch (name.toLowerCase()) {
      case "help":
      case "?":
        ctl.screen.line(...HELP.map((l) => `  ${l}`));
        return;
      case "rules":
        return await rules(ctl, state, args);
      case "mode":
        return await mode(ctl, args);
      case "interrupt":
        await ctl.interrupt();
        return;
      case "sessions":
        return await sessions(ctl);
      case "attach":
        if (!args[0]) {
          ctl.screen.line(c.red(`${MARK.fail} /attach needs a session id (see /sessions)`));
          return;
        }
        return await ctl.attach(args[0]);
      case "expand":
        return ctl.expand();
      case "quit":
      case "exit":
        return ctl.quit();
      default:
        ctl.screen.line(c.red(`${MARK.fail} unknown command /${name}; /help lists them`));
    }
  } catch (err) {
    showRefusal(ctl.screen, err);
  }
}
