import type { ParkwayClient, ParkwaySession } from "../../client/index.js";
import { confirmCall, type Position } from "./approval.js";
import { askUser } from "./ask-user.js";
import { type ChatControl, commandRunner } from "./commands.js";
import { watchConnection } from "./connection.js";
import { executeExternal, type Handlers } from "./external.js";
import { callSummary } from "./format.js";
import { type Input, isCtrl } from "./input.js";
import { type Outcome, type PromptContext, showRefusal } from "./prompt-context.js";
import { Renderer } from "./renderer.js";
import type { Screen } from "./screen.js";
import { Spinner } from "./spinner.js";
import { MARK } from "./style.js";
import {
  type ServerEvent,
  type Session,
  SessionStatus,
  statusName,
  type ToolCallBlock,
} from "./wire.js";

/** A call the parked reply waits for, and which answer it needs. */
interface Pending {
  call: ToolCallBlock;
  kind: "confirm" | "external";
}

/** A second Ctrl-C within this many ms quits. */
const QUIT_WINDOW_MS = 3000;

/** Events that belong to a reply in progress. */
const REPLY_EVENTS = new Set([
  "modelCallStart",
  "modelCallEnd",
  "textBlockStart",
  "textBlockDelta",
  "textBlockEnd",
  "thinkingBlockStart",
  "thinkingBlockDelta",
  "thinkingBlockEnd",
  "toolCallStart",
  "toolCallDelta",
  "toolCallEnd",
  "toolResultStart",
  "toolResultTextDelta",
  "toolResultDataDelta",
]);

/**
 * One chat: a session's event stream rendered as it arrives, and one input loop that reads the
 * user's messages and slash commands while the session is idle, waits while a reply runs, and asks
 * for every pending call while the reply is parked (all of them listed first, then one by one).
 * Pending calls are tracked from REQUIRE_* events, including the ones a re-attach announces again
 * (seq 0), and dropped when their result arrives, so a call answered elsewhere closes its prompt.
 */
export class ChatApp implements ChatControl {
  private session!: ParkwaySession;
  private info!: Session;
  private readonly pending = new Map<string, Pending>();
  private readonly overviewShown = new Set<string>();
  private readonly renderer: Renderer;
  private readonly runCommand: (line: string) => Promise<void>;
  private readonly history: string[] = [];
  private running = false;
  private parked = false;
  private later = false;
  private settled = 0;
  private quitting = false;
  private lastCtrlC = 0;
  private step: AbortController | undefined;
  private answering: string | undefined;
  private wake: (() => void) | undefined;
  private connection: { stop(): void } | undefined;

  constructor(
    readonly client: ParkwayClient,
    readonly screen: Screen,
    private readonly input: Input,
    private readonly handlers: Handlers | undefined,
  ) {
    this.renderer = new Renderer(screen, new Spinner(screen));
    this.runCommand = commandRunner(this);
    input.setBaseHandler((key) => {
      if (isCtrl(key, "c")) this.ctrlC();
      else if (isCtrl(key, "o")) this.expand();
    });
  }

  get sessionId(): string {
    return this.info.id;
  }

  /** Attaches to `info`'s session after its last stored event; pending calls are announced again. */
  async open(info: Session): Promise<void> {
    const session = await this.client.attach(info.id, { afterSeq: info.lastSeq });
    const old = this.session as ParkwaySession | undefined;
    this.session = session;
    this.info = info;
    old?.close();
    this.pending.clear();
    this.overviewShown.clear();
    // The calls pending at GetSession time; the attach announces them again (seq 0) as well.
    for (const call of info.pendingToolCalls) {
      const kind = call.state === ToolCallState.SUBMITTED ? "external" : "confirm";
      this.pending.set(call.id, { call, kind });
    }
    this.running = info.status === SessionStatus.RUNNING;
    this.parked = this.pending.size > 0;
    this.later = false;
    this.settled++;
    this.step?.abort();
    this.notify();
    void this.pump(session);
    this.connection ??= watchConnection(this.client, {
      lost: () =>
        this.screen.line(this.screen.c.yellow(`${MARK.warn} lost the connection; reconnecting…`)),
      back: () =>
        this.screen.line(
          this.screen.c.green(
            `${MARK.ok} reconnected; resuming after event ${this.session.lastSeq}`,
          ),
        ),
    });
  }

  private async pump(session: ParkwaySession): Promise<void> {
    try {
      for (;;) {
        const event = await session.next();
        if (session !== this.session) return;
        if (!event) break;
        this.onEvent(event);
      }
    } catch (err) {
      if (session !== this.session || this.quitting) return;
      showRefusal(this.screen, err);
    }
    if (session !== this.session || this.quitting) return;
    this.screen.line(this.screen.c.red(`${MARK.fail} the session's stream ended`));
    this.quit();
  }

  private onEvent(event: ServerEvent): void {
    this.renderer.render(event);
    const body = event.event;
    if (!body) return;
    switch (body.$case) {
      case "replyStart":
        this.running = true;
        this.parked = false;
        break;
      case "replyEnd":
        this.running = false;
        this.parked = false;
        this.later = false;
        this.pending.clear();
        this.settled++;
        break;
      case "replyParked":
        this.running = false;
        this.parked = true;
        this.settled++;
        break;
      case "requireUserConfirm":
      case "requireExternalExecution": {
        const kind = body.$case === "requireUserConfirm" ? "confirm" : "external";
        for (const call of body.value.toolCalls) {
          const known = this.pending.get(call.id);
          if (known?.kind === kind) known.call = call;
          else this.pending.set(call.id, { call, kind });
        }
        if (event.seq === 0) {
          // Announced again after an attach or a reconnect: the reply is parked on them.
          this.running = false;
          this.parked = true;
          this.later = false;
        }
        break;
      }
      default:
        break;
    }
    if (body.$case === "toolResultStart" || body.$case === "toolResultEnd") {
      const id = body.value.toolCallId;
      const entry = this.pending.get(id);
      if (entry && (body.$case === "toolResultEnd" || entry.kind === "confirm")) {
        this.pending.delete(id);
        if (this.answering === id) this.step?.abort();
      }
    }
    if (REPLY_EVENTS.has(body.$case) && this.pending.size === 0) {
      this.running = true;
      this.parked = false;
    }
    if (this.pending.size === 0) this.parked = false;
    if (body.$case === "replyEnd" && this.answering) this.step?.abort();
    if (this.step && !this.answering && this.needsScreen()) this.step.abort();
    this.notify();
  }

  /** True when something should take the screen from the idle prompt. */
  private needsScreen(): boolean {
    return this.running || (this.pending.size > 0 && this.parked && !this.later);
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private changed(): Promise<void> {
    return new Promise((resolve) => (this.wake = resolve));
  }

  /** Runs the input loop until the user quits or the input ends; resolves with the exit code. */
  async run(): Promise<number> {
    while (!this.quitting) {
      if (this.pending.size > 0 && this.parked && !this.later) await this.answerAll();
      else if (this.running) await this.changed();
      else await this.idle();
    }
    this.connection?.stop();
    this.renderer.quiet();
    this.session.close();
    const c = this.screen.c;
    const waiting = this.pending.size > 0 ? `${this.pending.size} call(s) still wait there; ` : "";
    this.screen.line(
      c.dim(
        `session ${this.info.id}: ${waiting}resume with parkway chat --session ${this.info.id}`,
      ),
    );
    return 0;
  }

  private promptText(): string {
    const c = this.screen.c;
    if (this.pending.size === 0) return `${c.cyan(MARK.pointer)} `;
    return `${c.yellow(`${MARK.park} ${this.pending.size} waiting (enter to answer)`)} ${c.cyan(MARK.pointer)} `;
  }

  private async idle(): Promise<void> {
    const step = new AbortController();
    this.step = step;
    const result = await this.input.readLine(this.promptText(), {
      signal: step.signal,
      history: this.history,
    });
    this.step = undefined;
    if (result.kind === "eof") return this.quit();
    if (result.kind === "interrupt") return this.ctrlC();
    if (result.kind !== "line") return;
    const text = result.text.trim();
    if (text === "") {
      this.later = false;
      return;
    }
    if (this.history[0] !== text) this.history.unshift(text);
    if (text.startsWith("/")) return this.runCommand(text);
    if (this.pending.size > 0) {
      this.screen.line(
        this.screen.c.yellow(
          `${MARK.park} the reply waits for ${this.pending.size} answer(s): press enter to answer, or /interrupt`,
        ),
      );
      return;
    }
    await this.send(text);
  }

  private async send(text: string): Promise<void> {
    const before = this.settled;
    try {
      await this.session.send({ $case: "userMessage", value: { text, content: [] } });
    } catch (err) {
      showRefusal(this.screen, err);
      return;
    }
    if (this.settled === before) this.running = true;
  }

  /** Lists the pending calls not listed yet, then asks for each in turn. */
  private async answerAll(): Promise<void> {
    this.renderer.quiet();
    const calls = [...this.pending.values()];
    if (calls.some((p) => !this.overviewShown.has(p.call.id))) this.overview(calls);
    const before = this.settled;
    for (const [index, entry] of calls.entries()) {
      if (!this.pending.has(entry.call.id) || this.quitting) continue;
      const outcome = await this.answer(entry, { index, total: calls.length });
      if (outcome === "answered" || outcome === "gone") {
        if (this.pending.get(entry.call.id) === entry) this.pending.delete(entry.call.id);
        continue;
      }
      if (outcome === "later") {
        this.later = true;
        this.screen.line(
          this.screen.c.dim(
            "  the reply stays parked: press enter to answer, /interrupt to stop it",
          ),
        );
        return;
      }
      if (outcome === "interrupt") return this.ctrlC();
      if (outcome === "eof") return this.quit();
      return; // cancelled: the state changed, look again
    }
    if (this.pending.size === 0 && this.settled === before && !this.quitting) {
      this.running = true;
      this.parked = false;
    }
  }

  private overview(calls: Pending[]): void {
    const c = this.screen.c;
    for (const p of calls) this.overviewShown.add(p.call.id);
    if (calls.length < 2) return;
    this.screen.line(
      `${c.yellow(MARK.park)} ${c.bold(`The agent waits for ${calls.length} answers:`)}`,
      ...calls.map((p, i) => {
        const what =
          p.kind === "confirm"
            ? "approval"
            : p.call.name === "AskUser"
              ? "question"
              : this.handlers?.byName.has(p.call.name)
                ? `handled by ${this.handlers.file}`
                : "result to type";
        return `  ${i + 1}. ${c.bold(p.call.name)} ${callSummary(p.call.name, p.call.input)} ${c.dim(`· ${what}`)}`;
      }),
    );
  }

  private async answer(entry: Pending, at: Position): Promise<Outcome> {
    const step = new AbortController();
    this.step = step;
    this.answering = entry.call.id;
    const ctx: PromptContext = {
      screen: this.screen,
      input: this.input,
      session: this.session,
      agentId: this.info.agentId,
      signal: step.signal,
    };
    try {
      if (entry.kind === "confirm") return await confirmCall(ctx, entry.call, at);
      if (entry.call.name === "AskUser") return await askUser(ctx, entry.call);
      return await executeExternal(ctx, entry.call, at, this.handlers);
    } finally {
      this.step = undefined;
      this.answering = undefined;
    }
  }

  /** Ctrl-C: interrupts the running or parked reply; a second one within 3 s quits. */
  ctrlC(): void {
    const now = Date.now();
    if (now - this.lastCtrlC < QUIT_WINDOW_MS) return this.quit();
    this.lastCtrlC = now;
    const c = this.screen.c;
    if (this.running || this.pending.size > 0) {
      this.screen.line(c.yellow(`${MARK.stop} interrupting… (ctrl-c again to quit)`));
      void this.interrupt();
    } else {
      this.screen.line(c.dim("press ctrl-c again to quit"));
    }
  }

  async interrupt(): Promise<void> {
    try {
      await this.session.interrupt();
    } catch (err) {
      showRefusal(this.screen, err);
    }
  }

  async attach(sessionId: string): Promise<void> {
    const info = await this.client.getSession(sessionId);
    await this.open(info);
    this.banner(info);
  }

  /** Prints which session the chat is attached to. */
  banner(info: Session): void {
    const c = this.screen.c;
    const n = info.pendingToolCalls.length;
    this.screen.line(
      `${c.bold("parkway chat")} ${c.dim("·")} agent ${c.bold(info.agentId)} ${c.dim("·")} session ${info.id} ${c.dim(`· ${statusName(info.status)}${n > 0 ? `, ${n} pending` : ""}`)}`,
    );
  }

  expand(): void {
    this.renderer.expandLast();
  }

  quit(): void {
    this.quitting = true;
    this.step?.abort();
    this.notify();
  }
}
