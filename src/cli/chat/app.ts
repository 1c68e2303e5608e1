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
import { type Pending, ReplyState } from "./reply-state.js";
import type { Screen } from "./screen.js";
import { Spinner } from "./spinner.js";
import { MARK } from "./style.js";
import { type ServerEvent, type Session, statusName } from "./wire.js";

/** A second Ctrl-C within this many ms quits. */
const QUIT_WINDOW_MS = 3000;

/**
 * One chat: a session's event stream rendered as it arrives, and one input loop that reads the
 * user's messages and slash commands while the session is idle, waits while a reply runs, and asks
 * for every pending call while the reply is parked (all of them listed first, then one by one).
 * A prompt closes when its call stops waiting (answered elsewhere, the reply ended); the idle
 * prompt gives way when a reply starts or asks. Exit code 0, or 1 when the session's stream is lost.
 */
export class ChatApp implements ChatControl {
  private session!: ParkwaySession;
  private info!: Session;
  private readonly state = new ReplyState();
  private readonly overviewShown = new Set<string>();
  private readonly renderer: Renderer;
  private readonly runCommand: (line: string) => Promise<void>;
  private readonly history: string[] = [];
  private quitting = false;
  private exitCode = 0;
  private closed = false;
  private lastCtrlC = 0;
  private step: AbortController | undefined;
  private answering: string | undefined;
  /** Why the open prompt was closed by the session's events: its call stopped waiting. */
  private withdrawn: { callId: string; ended: boolean } | undefined;
  /** Aborts the pause after a withdrawn prompt when the chat quits. */
  private pause: AbortController | undefined;
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
      if (isCtrl(key, "c")) void this.ctrlC();
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
    this.overviewShown.clear();
    this.state.reset(info);
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
      const why = err instanceof Error ? `: ${err.message}` : "";
      this.screen.line(this.screen.c.red(`${MARK.fail} lost the session's stream${why}`));
      this.exitCode = 1;
      return this.quit();
    }
    if (session !== this.session || this.quitting) return;
    this.screen.line(this.screen.c.red(`${MARK.fail} the session's stream ended`));
    this.exitCode = 1;
    this.quit();
  }

  private onEvent(event: ServerEvent): void {
    this.renderer.render(event);
    const resolved = this.state.apply(event);
    const ended = event.event?.$case === "replyEnd";
    if (this.answering && (ended || resolved === this.answering)) {
      this.withdrawn = { callId: this.answering, ended };
      this.step?.abort();
    }
    // The idle prompt gives way to a reply that runs or asks.
    if (this.step && !this.answering && (this.state.running || this.state.asking)) {
      this.step.abort();
    }
    this.notify();
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
      if (this.state.asking) await this.answerAll();
      else if (this.state.running) await this.changed();
      else await this.idle();
    }
    this.close();
    const c = this.screen.c;
    const n = this.state.pending.size;
    const waiting = n > 0 ? `${n} call(s) still wait there; ` : "";
    this.screen.line(
      c.dim(
        `session ${this.info.id}: ${waiting}resume with npx parkway chat --session ${this.info.id}`,
      ),
    );
    return this.exitCode;
  }

  private promptText(): string {
    const c = this.screen.c;
    const n = this.state.pending.size;
    if (n === 0) return `${c.cyan(MARK.pointer)} `;
    return `${c.yellow(`${MARK.park} ${n} waiting (enter to answer)`)} ${c.cyan(MARK.pointer)} `;
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
    if (result.kind === "interrupt") {
      await this.ctrlC();
      return;
    }
    if (result.kind !== "line") return;
    const text = result.text.trim();
    if (text === "") {
      this.state.later = false;
      return;
    }
    if (this.history[0] !== text) this.history.unshift(text);
    if (text.startsWith("/")) return this.runCommand(text);
    if (this.state.pending.size > 0) {
      this.screen.line(
        this.screen.c.yellow(
          `${MARK.park} the reply waits for ${this.state.pending.size} answer(s): press enter to answer, or /interrupt`,
        ),
      );
      return;
    }
    await this.send(text);
  }

  private async send(text: string): Promise<void> {
    const before = this.state.settled;
    try {
      await this.session.send({ $case: "userMessage", value: { text, content: [] } });
    } catch (err) {
      showRefusal(this.screen, err);
      return;
    }
    if (this.state.settled === before) this.state.running = true;
  }

  /** Lists the pending calls not listed yet, then asks for each in turn. */
  private async answerAll(): Promise<void> {
    this.renderer.quiet();
    const calls = [...this.state.pending.values()];
    if (calls.some((p) => !this.overviewShown.has(p.call.id))) this.overview(calls);
    const before = this.state.settled;
    for (const [index, entry] of calls.entries()) {
      if (!this.state.pending.has(entry.call.id) || this.quitting) continue;
      const outcome = await this.answer(entry, { index, total: calls.length });
      if (outcome === "answered") {
        this.state.answered(entry);
        continue;
      }
      if (outcome === "gone") return this.resync();
      if (outcome === "later") {
        this.state.later = true;
        this.screen.line(
          this.screen.c.dim(
            "  the reply stays parked: press enter to answer, /interrupt to stop it",
          ),
        );
        return;
      }
      if (outcome === "interrupt") {
        // Ask again only if the interrupt was refused: its events end the prompts otherwise.
        const settled = this.state.settled;
        if (await this.ctrlC()) {
          while (!this.quitting && this.state.settled === settled) await this.changed();
        }
        return;
      }
      if (outcome === "eof") return this.quit();
      // Cancelled: the state changed, look again; first, when the call stopped waiting while it
      // was asked, say so and let the keys typed for it go nowhere.
      if (this.withdrawn?.callId === entry.call.id) await this.promptWithdrawn(entry);
      return;
    }
    if (!this.quitting) this.state.resumed(before);
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

  /**
   * Tells that the call `entry` was being asked about stopped waiting (answered by another client or
   * person, expired, or its reply ended) and that nothing was sent from here. On a terminal the chat then
   * waits for Enter before it asks anything else: keys typed for the closed prompt (a "y", a deny
   * reason) would otherwise answer the next call's prompt, or be sent to the model as a message.
   */
  private async promptWithdrawn(entry: Pending): Promise<void> {
    const ended = this.withdrawn?.ended === true;
    this.withdrawn = undefined;
    const c = this.screen.c;
    const what = `${entry.call.name} ${callSummary(entry.call.name, entry.call.input)}`;
    this.screen.line(
      c.yellow(
        ended
          ? `${MARK.warn} the reply ended while ${what} was asked: nothing was sent from here`
          : `${MARK.warn} ${what} no longer waits (answered elsewhere, or expired): nothing was sent from here`,
      ),
    );
    if (!this.input.keys || this.quitting) return;
    const pause = new AbortController();
    this.pause = pause;
    const result = await this.input.readLine(c.dim("  press enter to go on "), {
      signal: pause.signal,
    });
    this.pause = undefined;
    if (result.kind === "eof") this.quit();
    else if (result.kind === "interrupt") await this.ctrlC();
  }

  private async answer(entry: Pending, at: Position): Promise<Outcome> {
    const step = new AbortController();
    this.step = step;
    this.answering = entry.call.id;
    this.withdrawn = undefined;
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

  /**
   * Ctrl-C: interrupts the running or parked reply; a second one within 3 s quits. Resolves with
   * whether an interrupt was sent and accepted.
   */
  async ctrlC(): Promise<boolean> {
    const now = Date.now();
    if (now - this.lastCtrlC < QUIT_WINDOW_MS) {
      this.quit();
      return false;
    }
    this.lastCtrlC = now;
    const c = this.screen.c;
    if (this.state.running || this.state.pending.size > 0) {
      this.screen.line(c.yellow(`${MARK.stop} interrupting… (ctrl-c again to quit)`));
      return this.interrupt();
    }
    this.screen.line(c.dim("press ctrl-c again to quit"));
    return false;
  }

  async interrupt(): Promise<boolean> {
    try {
      await this.session.interrupt();
      return true;
    } catch (err) {
      showRefusal(this.screen, err);
      return false;
    }
  }

  /**
   * Reads the session again after the server refused an answer because the call no longer waits
   * for it, so the prompts show what really waits (or nothing, and the input prompt returns).
   */
  private async resync(): Promise<void> {
    try {
      this.state.reset(await this.client.getSession(this.info.id));
    } catch (err) {
      showRefusal(this.screen, err);
      this.state.later = true;
    }
  }

  async attach(sessionId: string): Promise<void> {
    const info = await this.client.getSession(sessionId);
    await this.open(info);
    this.banner(info);
  }

  /** Prints which session the chat is attached to, and where its files are. */
  banner(info: Session): void {
    const c = this.screen.c;
    const n = info.pendingToolCalls.length;
    const dirs = info.workingDirectories;
    this.screen.line(
      `${c.bold("parkway chat")} ${c.dim("·")} agent ${c.bold(info.agentId)} ${c.dim("·")} session ${info.id} ${c.dim(`· ${statusName(info.status)}${n > 0 ? `, ${n} pending` : ""}`)}`,
      ...(dirs.length > 0
        ? [c.dim(`working ${dirs.length === 1 ? "directory" : "directories"}: ${dirs.join(", ")}`)]
        : []),
    );
  }

  expand(): void {
    this.renderer.expandLast();
  }

  /** Ends the session's stream and the connection watch; idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.connection?.stop();
    this.renderer.quiet();
    (this.session as ParkwaySession | undefined)?.close();
  }

  quit(): void {
    this.quitting = true;
    this.step?.abort();
    this.pause?.abort();
    this.notify();
  }
}
