import { type Input, isCtrl, type Key } from "./input.js";
import type { Screen } from "./screen.js";
import { MARK } from "./style.js";

/** One choice of a list. */
export interface Choice {
  label: string;
  /** Shown after the label, dimmed. */
  description?: string;
  /** Shown below the list while the choice is highlighted (code, a mockup). */
  preview?: string;
  /** A letter that picks the choice at once (single-select). */
  shortcut?: string;
}

export interface SelectRequest {
  /** Lines shown above the choices; kept in the transcript afterwards. */
  title: string[];
  choices: Choice[];
  /** Several choices may be picked (space toggles; enter confirms). */
  multi?: boolean;
  /** Escape cancels: "answer later". */
  escapable?: boolean;
  /** Aborting it cancels the list. */
  signal?: AbortSignal;
  /**
   * The choice an empty answer picks (Enter at once on a terminal, an empty line from a pipe);
   * without it a pipe must name a choice, and Enter picks the highlighted one.
   */
  preset?: number;
}

/** How a list ended: the picked choices (indices, ascending), or why nothing was picked. */
export type SelectResult =
  | { kind: "chosen"; indices: number[] }
  | { kind: "cancel" }
  | { kind: "interrupt" }
  | { kind: "eof" };

const PREVIEW_LINES = 12;

/**
 * Shows a list and waits for a pick. On a terminal: ↑/↓ (or j/k) move, digits pick, enter confirms,
 * space toggles in a multi-select, shortcut letters pick; Escape cancels when allowed; Ctrl-C
 * interrupts; Ctrl-O goes to the base handler (it expands the last tool call above the list).
 * From a pipe: the choices are numbered and one line answers ("2", "1,3", a label or a shortcut
 * letter). The title and the answer stay in the transcript.
 */
export function select(
  screen: Screen,
  input: Input,
  request: SelectRequest,
): Promise<SelectResult> {
  return input.keys
    ? selectWithKeys(screen, input, request)
    : selectWithLines(screen, input, request);
}

function answerLine(screen: Screen, request: SelectRequest, indices: number[]): string {
  const labels = indices.map((i) => request.choices[i]?.label ?? "").join(", ");
  return `  ${screen.c.cyan(MARK.pointer)} ${labels}`;
}

function selectWithKeys(
  screen: Screen,
  input: Input,
  request: SelectRequest,
): Promise<SelectResult> {
  const c = screen.c;
  const { choices } = request;
  let cursor = request.preset ?? 0;
  const checked = new Set<number>();
  const render = (): string[] => {
    const lines = [...request.title];
    choices.forEach((choice, i) => {
      const here = i === cursor;
      const pointer = here ? c.cyan(MARK.pointer) : " ";
      const box = request.multi
        ? `${checked.has(i) ? c.green(MARK.checked) : c.dim(MARK.unchecked)} `
        : "";
      const label = here ? c.bold(choice.label) : choice.label;
      const shortcut = choice.shortcut ? c.dim(` [${choice.shortcut}]`) : "";
      const description = choice.description ? c.dim(` — ${choice.description}`) : "";
      lines.push(`  ${pointer} ${box}${c.dim(`${i + 1}.`)} ${label}${shortcut}${description}`);
    });
    const preview = choices[cursor]?.preview;
    if (preview) {
      const body = preview.split("\n");
      lines.push(`    ${c.dim("┌ preview")}`);
      for (const l of body.slice(0, PREVIEW_LINES)) lines.push(`    ${c.dim("│")} ${l}`);
      if (body.length > PREVIEW_LINES) {
        lines.push(`    ${c.dim(`│ … ${body.length - PREVIEW_LINES} more lines`)}`);
      }
    }
    const letters = request.multi ? [] : choices.flatMap((ch) => ch.shortcut ?? []);
    const keys = [
      "↑↓ move",
      request.multi ? "space toggle · enter confirm" : "enter select",
      `${letters.length > 0 ? `${letters.join("/")} or ` : ""}1-${choices.length} pick`,
      ...(request.escapable ? ["esc later"] : []),
      "ctrl-c interrupt",
    ];
    lines.push(c.dim(`  ${keys.join(" · ")}`));
    return lines;
  };

  return new Promise((resolve) => {
    screen.endLine();
    const finish = (result: SelectResult) => {
      release();
      request.signal?.removeEventListener("abort", onAbort);
      screen.setLive(undefined);
      screen.line(
        ...request.title,
        ...(result.kind === "chosen" ? [answerLine(screen, request, result.indices)] : []),
      );
      resolve(result);
    };
    const pick = (index: number) => {
      if (!request.multi) return finish({ kind: "chosen", indices: [index] });
      if (checked.has(index)) checked.delete(index);
      else checked.add(index);
      cursor = index;
      screen.refresh();
    };
    const onAbort = () => finish({ kind: "cancel" });
    const onKey = (key: Key, text: string | undefined) => {
      if (isCtrl(key, "c")) return finish({ kind: "interrupt" });
      if (isCtrl(key, "d")) return finish({ kind: "eof" });
      if (isCtrl(key, "o")) return input.toBase(key, text);
      if (key.name === "escape" && request.escapable) return finish({ kind: "cancel" });
      if (key.name === "up" || key.name === "k" || (isCtrl(key, "p") && !key.meta)) {
        cursor = (cursor + choices.length - 1) % choices.length;
        return screen.refresh();
      }
      if (key.name === "down" || key.name === "j" || isCtrl(key, "n") || key.name === "tab") {
        cursor = (cursor + 1) % choices.length;
        return screen.refresh();
      }
      if (key.name === "space" && request.multi) return pick(cursor);
      if (key.name === "return" || key.name === "enter") {
        if (!request.multi) return finish({ kind: "chosen", indices: [cursor] });
        const indices = checked.size > 0 ? [...checked].sort((a, b) => a - b) : [cursor];
        return finish({ kind: "chosen", indices });
      }
      const digit = text !== undefined && /^[1-9]$/.test(text) ? Number(text) - 1 : -1;
      if (digit >= 0 && digit < choices.length) return pick(digit);
      if (!request.multi && text !== undefined && !key.ctrl && !key.meta) {
        const shortcut = choices.findIndex((ch) => ch.shortcut === text.toLowerCase());
        if (shortcut >= 0) return finish({ kind: "chosen", indices: [shortcut] });
      }
    };
    const release = input.capture(onKey);
    screen.setLive(render);
    if (request.signal?.aborted) onAbort();
    else request.signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Parses a piped answer: numbers (comma or space separated), labels, or a shortcut letter. */
function parseAnswer(text: string, request: SelectRequest): number[] | undefined {
  const { choices } = request;
  const trimmed = text.trim();
  if (trimmed === "") return request.preset === undefined ? undefined : [request.preset];
  const byLabel = choices.findIndex((ch) => ch.label.toLowerCase() === trimmed.toLowerCase());
  if (byLabel >= 0) return [byLabel];
  const byShortcut = choices.findIndex((ch) => ch.shortcut === trimmed.toLowerCase());
  if (byShortcut >= 0) return [byShortcut];
  const parts = trimmed.split(/[\s,]+/);
  const indices = parts.map((p) => (/^\d+$/.test(p) ? Number(p) - 1 : -1));
  if (indices.some((i) => i < 0 || i >= choices.length)) return undefined;
  if (!request.multi && indices.length !== 1) return undefined;
  return [...new Set(indices)].sort((a, b) => a - b);
}

async function selectWithLines(
  screen: Screen,
  input: Input,
  request: SelectRequest,
): Promise<SelectResult> {
  const lines = [...request.title];
  request.choices.forEach((choice, i) => {
    const shortcut = choice.shortcut ? ` [${choice.shortcut}]` : "";
    const description = choice.description ? ` — ${choice.description}` : "";
    lines.push(`  ${i + 1}. ${choice.label}${shortcut}${description}`);
    for (const l of choice.preview?.split("\n") ?? []) lines.push(`       | ${l}`);
  });
  screen.line(...lines);
  const n = request.choices.length;
  const preset = request.preset === undefined ? "" : `, enter for ${request.preset + 1}`;
  const prompt = request.multi
    ? `  choose one or more of 1-${n} (e.g. 1,3${preset}): `
    : `  choose 1-${n}${preset}: `;
  for (;;) {
    const result = await input.readLine(prompt, {
      ...(request.signal ? { signal: request.signal } : {}),
    });
    if (result.kind !== "line") return result;
    const indices = parseAnswer(result.text, request);
    if (indices) return { kind: "chosen", indices };
    screen.line(`  expected ${request.multi ? "numbers" : "a number"} from 1 to ${n}`);
  }
}
