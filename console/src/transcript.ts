import { h, replace } from "./dom.js";
import { errorText, finishedText, prettyJson, resultStateText, usageText } from "./format.js";
import {
  type ContentBlock,
  FinishedReason,
  type Msg,
  Role,
  type ServerEvent,
  type WebClient,
} from "./parkway.js";

/** The elements of one reply as its events build it. */
interface LiveReply {
  el: HTMLElement;
  blocks: Map<string, HTMLElement>;
  /** False for a reply that started while watched, until its user message is shown. */
  userShown: boolean;
}

function blockView(block: ContentBlock): HTMLElement | null {
  const b = block.block;
  switch (b.case) {
    case "text":
      return h("p", { class: "text" }, b.value.text);
    case "thinking":
      return h(
        "details",
        { class: "thinking" },
        h("summary", {}, "Thinking"),
        h("p", {}, b.value.thinking),
      );
    case "toolCall":
      return h(
        "div",
        { class: "tool-call" },
        h("strong", {}, "Tool call "),
        h("code", {}, b.value.name),
        h("pre", {}, prettyJson(b.value.input)),
      );
    case "toolResult": {
      const text = b.value.output
        .map((o) =>
          o.block.case === "text" ? o.block.value.text : `[${o.block.value?.mediaType ?? "data"}]`,
        )
        .join("\n");
      return h(
        "div",
        { class: "tool-result" },
        h("strong", {}, "Result of "),
        h("code", {}, b.value.name),
        ` · ${resultStateText(b.value.state)}`,
        text ? h("pre", {}, text) : null,
      );
    }
    case "data":
      return h("p", { class: "muted" }, `[${b.value.mediaType}]`);
    default:
      return null;
  }
}

function messageView(msg: Msg): HTMLElement {
  const user = msg.role === Role.USER;
  return h(
    "article",
    { class: `msg ${user ? "user" : "assistant"}` },
    h("h3", {}, user ? "User" : msg.name || "Assistant"),
    msg.content.map(blockView),
    msg.role === Role.ASSISTANT
      ? h(
          "p",
          { class: "muted meta" },
          msg.finishedReason === FinishedReason.UNSPECIFIED
            ? "in progress"
            : finishedText(msg.finishedReason),
          msg.usage ? ` · ${usageText(msg.usage)}` : "",
          msg.error ? ` · ${msg.error.code}: ${msg.error.message}` : "",
        )
      : null,
  );
}

/**
 * A session's transcript: its messages (ListMessages, oldest first), then the live events of Watch
 * after the session's last seq: text, thinking, tool calls and results, parks and usage.
 */
export function createTranscript(client: WebClient) {
  const title = h("h2", { id: "transcript-heading", tabindex: "-1" }, "Transcript");
  const status = h("p", { class: "muted", role: "status" });
  const log = h("div", { class: "log", role: "log", "aria-live": "off" });
  const close = h("button", { type: "button", onclick: () => stop() }, "Close transcript");
  const el = h(
    "section",
    { class: "transcript", "aria-labelledby": "transcript-heading", hidden: true },
    h("header", {}, title, close),
    status,
    log,
  );
  let abort: AbortController | undefined;
  let current: string | undefined;
  const replies = new Map<string, LiveReply>();

  function replyFor(event: ServerEvent): LiveReply {
    let reply = replies.get(event.replyId);
    if (!reply) {
      reply = {
        el: h("article", { class: "msg assistant live" }, h("h3", {}, "Assistant")),
        blocks: new Map(),
        userShown: true,
      };
      replies.set(event.replyId, reply);
      log.append(reply.el);
    }
    return reply;
  }

  function blockIn(reply: LiveReply, key: string, make: () => HTMLElement): HTMLElement {
    let el = reply.blocks.get(key);
    if (!el) {
      el = make();
      reply.blocks.set(key, el);
      reply.el.append(el);
    }
    return el;
  }

  function note(reply: LiveReply, text: string) {
    reply.el.append(h("p", { class: "muted meta" }, text));
  }

  /**
   * Puts the user message that started a live reply before it (Watch carries no user input): read
   * once the reply parks or ends, when ListMessages lists it, just older than the reply's message.
   */
  async function showUserMessage(event: ServerEvent, reply: LiveReply) {
    if (reply.userShown) return;
    reply.userShown = true;
    try {
      const { messages } = await client.agent.listMessages({
        sessionId: event.sessionId,
        pageSize: 3,
      });
      const at = messages.findIndex((m) => m.id === event.replyId);
      const user = at >= 0 ? messages[at + 1] : undefined;
      if (user?.role === Role.USER && reply.el.isConnected) reply.el.before(messageView(user));
    } catch {
      // The transcript still shows the reply itself.
    }
  }

  function apply(event: ServerEvent) {
    const e = event.event;
    if (e.case === undefined || e.case === "inputAck") return;
    const reply = replyFor(event);
    const text = (id: string) => blockIn(reply, `text:${id}`, () => h("p", { class: "text" }));
    switch (e.case) {
      case "replyStart":
        replace(reply.el.querySelector("h3") ?? reply.el, e.value.name || "Assistant");
        reply.userShown = false;
        break;
      case "textBlockStart":
        text(e.value.blockId);
        break;
      case "textBlockDelta":
        text(e.value.blockId).append(e.value.delta);
        break;
      case "thinkingBlockDelta":
        blockIn(reply, `thinking:${e.value.blockId}`, () =>
          h("details", { class: "thinking" }, h("summary", {}, "Thinking"), h("p", {})),
        )
          .querySelector("p")
          ?.append(e.value.delta);
        break;
      case "toolCallStart":
        blockIn(reply, `call:${e.value.toolCallId}`, () =>
          h(
            "div",
            { class: "tool-call" },
            h("strong", {}, "Tool call "),
            h("code", {}, e.value.toolCallName),
            h("pre", {}),
          ),
        );
        break;
      case "toolCallEnd": {
        const pre = reply.blocks.get(`call:${e.value.toolCallId}`)?.querySelector("pre");
        if (pre) pre.textContent = prettyJson(e.value.input);
        break;
      }
      case "toolResultStart":
        blockIn(reply, `result:${e.value.toolCallId}`, () =>
          h(
            "div",
            { class: "tool-result" },
            h("strong", {}, "Result of "),
            h("code", {}, e.value.toolCallName),
            h("span", { class: "state" }),
            h("pre", {}),
          ),
        );
        break;
      case "toolResultTextDelta":
        reply.blocks
          .get(`result:${e.value.toolCallId}`)
          ?.querySelector("pre")
          ?.append(e.value.delta);
        break;
      case "toolResultDataDelta":
        reply.blocks
          .get(`result:${e.value.toolCallId}`)
          ?.querySelector("pre")
          ?.append(`[${e.value.mediaType}]`);
        break;
      case "toolResultEnd": {
        const state = reply.blocks.get(`result:${e.value.toolCallId}`)?.querySelector(".state");
        if (state) state.textContent = ` · ${resultStateText(e.value.state)}`;
        break;
      }
      case "requireUserConfirm":
        note(reply, `Waiting for approval: ${e.value.toolCalls.map((c) => c.name).join(", ")}`);
        break;
      case "requireExternalExecution":
        note(reply, `Waiting for a result: ${e.value.toolCalls.map((c) => c.name).join(", ")}`);
        break;
      case "replyParked":
        note(reply, "Parked");
        void showUserMessage(event, reply);
        break;
      case "modelCallEnd":
        if (e.value.usage) note(reply, `Model call: ${usageText(e.value.usage)}`);
        break;
      case "replyEnd":
        void showUserMessage(event, reply);
        note(
          reply,
          `Finished: ${finishedText(e.value.finishedReason)}${e.value.usage ? ` · ${usageText(e.value.usage)}` : ""}${e.value.error ? ` · ${e.value.error.code}: ${e.value.error.message}` : ""}`,
        );
        break;
      case "error":
        note(reply, `Error ${e.value.code}: ${e.value.message}`);
        break;
      case "custom":
        note(reply, `${e.value.name}: ${JSON.stringify(e.value.value ?? null)}`);
        break;
      default:
        break;
    }
  }

  async function run(sessionId: string, signal: AbortSignal) {
    status.textContent = "Loading…";
    const { session } = await client.agent.getSession({ sessionId }, { signal });
    const { messages } = await client.agent.listMessages({ sessionId, pageSize: 100 }, { signal });
    const ordered = [...messages].reverse();
    const views = ordered.map((msg) => {
      const view = messageView(msg);
      if (msg.role === Role.ASSISTANT && msg.finishedReason === FinishedReason.UNSPECIFIED) {
        replies.set(msg.id, { el: view, blocks: new Map(), userShown: true });
      }
      return view;
    });
    replace(log, views);
    status.textContent = "Live";
    for await (const event of client.watch(sessionId, {
      afterSeq: session?.lastSeq ?? 0n,
      signal,
    })) {
      if (event.replayed && event.seq === 0n) continue;
      apply(event);
    }
  }

  function stop() {
    abort?.abort();
    abort = undefined;
    current = undefined;
    el.hidden = true;
    document.getElementById("main-heading")?.focus();
  }

  function open(sessionId: string) {
    abort?.abort();
    const controller = new AbortController();
    abort = controller;
    current = sessionId;
    replies.clear();
    replace(log);
    replace(title, "Transcript of ", h("code", {}, sessionId));
    el.hidden = false;
    title.focus();
    run(sessionId, controller.signal).catch((err: unknown) => {
      if (!controller.signal.aborted)
        status.textContent = `The transcript stopped: ${errorText(err)}`;
    });
  }

  return { el, open, close: stop, sessionId: () => current };
}
