import { callSummary, firstLine, inputLines, oneLine } from "./format.js";
import type { Screen } from "./screen.js";
import type { Spinner } from "./spinner.js";
import { StreamWrap } from "./stream-wrap.js";
import { MARK, truncate } from "./style.js";
import {
  FinishedReason,
  type ServerEvent,
  ToolResultState,
  type ToolResultStateValue,
} from "./wire.js";

/** What the transcript knows about one tool call, for the one-line view and its expansion. */
interface ToolRecord {
  id: string;
  name: string;
  input: string;
  output: string;
  state?: ToolResultStateValue;
  answers?: string;
}

/** Widest one-line entry when the output is not a terminal. */
const PIPED_WIDTH = 200;

/**
 * Writes a session's events to the transcript: text as it streams, thinking dimmed, each tool call
 * and each result on one line (the last one expands on request), how a reply ended, and the spinner
 * while the agent works.
 */
export class Renderer {
  private readonly tools = new Map<string, ToolRecord>();
  private last: ToolRecord | undefined;
  private readonly text: StreamWrap;
  private readonly thinking: StreamWrap;

  constructor(
    private readonly screen: Screen,
    private readonly spinner: Spinner,
  ) {
    const width = () => this.screen.width - 1;
    const lineStart = () => this.screen.lineStart;
    this.text = new StreamWrap(width, (t) => this.screen.write(t), lineStart);
    const c = this.screen.c;
    this.thinking = new StreamWrap(width, (t) => this.screen.write(c.dim(c.italic(t))), lineStart);
  }

  /** Writes the words held back by the wrappers. */
  private flush(): void {
    this.text.flush();
    this.thinking.flush();
  }

  private get width(): number {
    return Math.min(this.screen.width, PIPED_WIDTH);
  }

  private record(id: string, name = ""): ToolRecord {
    let rec = this.tools.get(id);
    if (!rec) {
      rec = { id, name, input: "", output: "" };
      this.tools.set(id, rec);
    }
    if (name) rec.name = name;
    return rec;
  }

  render(event: ServerEvent): void {
    const body = event.event;
    if (!body) return;
    const c = this.screen.c;
    if (body.$case !== "textBlockDelta" && body.$case !== "thinkingBlockDelta") this.flush();
    switch (body.$case) {
      case "replyStart":
        this.tools.clear();
        this.spinner.start("thinking");
        break;
      case "modelCallStart":
        this.spinner.start("thinking");
        break;
      case "textBlockStart":
        this.screen.endLine();
        this.text.start();
        break;
      case "textBlockDelta":
        this.text.push(body.value.delta);
        break;
      case "textBlockEnd":
      case "thinkingBlockEnd":
        this.screen.endLine();
        this.spinner.start("working");
        break;
      case "thinkingBlockStart":
        this.screen.endLine();
        this.screen.write(c.dim(`${MARK.thinking} `));
        this.thinking.start(2);
        break;
      case "thinkingBlockDelta":
        this.thinking.push(body.value.delta);
        break;
      case "toolCallStart":
        this.record(body.value.toolCallId, body.value.toolCallName);
        this.spinner.start(`preparing ${body.value.toolCallName}`);
        break;
      case "toolCallDelta":
        this.record(body.value.toolCallId).input += body.value.delta;
        break;
      case "toolCallEnd": {
        const rec = this.record(body.value.toolCallId);
        rec.input = body.value.input;
        this.last = rec;
        this.screen.line(this.callLine(rec));
        this.spinner.start("working");
        break;
      }
      case "toolResultStart": {
        const rec = this.record(body.value.toolCallId, body.value.toolCallName);
        rec.output = "";
        this.spinner.start(`running ${rec.name}`);
        break;
      }
      case "toolResultTextDelta":
        this.record(body.value.toolCallId).output += body.value.delta;
        break;
      case "toolResultEnd": {
        const rec = this.record(body.value.toolCallId);
        rec.state = body.value.state;
        const answers = body.value.askUser?.answers ?? [];
        if (answers.length > 0) {
          rec.answers = answers
            .map((a) => {
              const picks = [...a.selected, ...(a.other !== undefined ? [`"${a.other}"`] : [])];
              return `${a.question} ${picks.join(", ")}`;
            })
            .join("; ");
        }
        this.last = rec;
        this.screen.line(this.resultLine(rec));
        this.spinner.start("thinking");
        break;
      }
      case "replyParked":
        this.spinner.stop();
        break;
      case "replyEnd": {
        this.spinner.stop();
        const { finishedReason, error } = body.value;
        const why = error?.message ? `: ${error.message}` : "";
        if (finishedReason === FinishedReason.INTERRUPTED) {
          this.screen.line(c.yellow(`${MARK.stop} interrupted${why}`));
        } else if (finishedReason === FinishedReason.ERROR) {
          this.screen.line(c.red(`${MARK.fail} the reply failed${why}`));
        } else if (finishedReason === FinishedReason.EXCEED_MAX_ITERS) {
          this.screen.line(c.yellow(`${MARK.warn} stopped: the agent reached its limit of steps`));
        }
        break;
      }
      case "error":
        this.screen.line(c.yellow(`${MARK.warn} ${body.value.code}: ${body.value.message}`));
        break;
      case "custom":
        this.screen.line(c.dim(`• ${body.value.name} ${JSON.stringify(body.value.value ?? null)}`));
        break;
      default:
        break;
    }
  }

  /** Stops the spinner (the reply settled, or a prompt takes the screen). */
  quiet(): void {
    this.flush();
    this.spinner.stop();
  }

  private callLine(rec: ToolRecord): string {
    const c = this.screen.c;
    return truncate(
      `${c.cyan(MARK.tool)} ${c.bold(rec.name)} ${callSummary(rec.name, rec.input)}`,
      this.width,
    );
  }

  private resultMark(state: ToolResultStateValue | undefined): string {
    const c = this.screen.c;
    if (state === ToolResultState.SUCCESS) return c.green(MARK.ok);
    if (state === ToolResultState.DENIED) return c.yellow(`${MARK.denied} denied`);
    if (state === ToolResultState.INTERRUPTED) return c.yellow(`${MARK.stop} interrupted`);
    return c.red(`${MARK.fail} error`);
  }

  private resultLine(rec: ToolRecord): string {
    const c = this.screen.c;
    const { line, more } = firstLine(rec.output);
    const detail = rec.answers ?? oneLine(line);
    const sep = rec.state === ToolResultState.SUCCESS ? " " : ": ";
    const extra =
      more > 0
        ? c.dim(
            ` (+${more} line${more === 1 ? "" : "s"}, ${this.screen.tty ? "ctrl-o" : "/expand"})`,
          )
        : "";
    const head = `  ${c.dim(MARK.result)} ${this.resultMark(rec.state)}`;
    return `${truncate(`${head}${detail ? `${sep}${detail}` : ""}`, this.width - 30)}${extra}`;
  }

  /** Prints the last tool call and its result in full. */
  expandLast(): void {
    const c = this.screen.c;
    const rec = this.last;
    if (!rec) {
      this.screen.line(c.dim("no tool call yet"));
      return;
    }
    this.screen.line(
      `${c.cyan(MARK.tool)} ${c.bold(rec.name)} ${c.dim(rec.id)}`,
      ...inputLines(rec.input, true).map((l) => `  ${l}`),
      ...(rec.state === undefined
        ? [c.dim("  (no result yet)")]
        : [
            `  ${c.dim(MARK.result)} ${this.resultMark(rec.state)}`,
            ...(rec.answers ? [`    ${rec.answers}`] : []),
            ...rec.output
              .replace(/\n+$/, "")
              .split("\n")
              .map((l) => `    ${l}`),
          ]),
    );
  }
}
