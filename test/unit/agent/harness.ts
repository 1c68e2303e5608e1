import { writeFile } from "node:fs/promises";
import path from "node:path";
import type { AgentDefinition } from "../../../src/agent/agent.js";
import type { EventBody, EventType } from "../../../src/agent/events.js";
import type { PermissionState } from "../../../src/agent/gate.js";
import type { ReplyEnv } from "../../../src/agent/reply-env.js";
import type {
  DecisionInfo,
  Msg,
  Rule,
  ToolCallBlock,
  ToolResultBlock,
} from "../../../src/agent/types.js";
import type { PermissionMode } from "../../../src/permissions/index.js";
import { askUserTool } from "../../../src/tools/ask-user.js";
import { externalTool } from "../../../src/tools/external-tool.js";
import { readTool, writeTool, type Tool } from "../../../src/tools/index.js";
import { FakeModel, type Turn } from "../session/core.js";
import { sandbox } from "../tools/tool-context.js";

/**
 * The agent tier without a session: `runReply` and `processToolCalls` driven with a ReplyEnv built
 * here, as the session actor builds it, over a fake model that records its requests.
 */

/** The client-executed tool of the test agent. */
export const deployTool = externalTool({
  name: "Deploy",
  description: "Deploys a service (run by the client).",
  inputSchema: {
    type: "object",
    properties: { service: { type: "string" } },
    required: ["service"],
  },
});

/** One call of the `decided` hook, with how many events had been emitted before it. */
export interface Decided {
  callId: string;
  name: string;
  decision: DecisionInfo;
  eventsBefore: number;
}

export interface Harness {
  env: ReplyEnv;
  model: FakeModel;
  /** Every event body the reply emitted, in order. */
  events: EventBody[];
  decisions: Decided[];
  /** Aborts `env.signal` (user_interrupt). */
  controller: AbortController;
  /** Aborts `env.toolSignal`. */
  tools: AbortController;
  /** The permission state every decision reads; tests may change its rules and mode. */
  permissions: PermissionState;
  /** The working directory (a real path). */
  work: string;
  /** Resolves at the next event of this type (or at once if one was already emitted). */
  next(type: EventType): Promise<EventBody>;
  cleanup(): Promise<void>;
}

export interface HarnessOptions {
  mode?: PermissionMode;
  rules?: Rule[];
  maxIters?: number;
  maxReplyBytes?: number;
  confirmTimeoutMs?: number;
  /** Tools besides Read, Write, AskUser and Deploy. */
  extraTools?: Tool[];
  /** Files to create in the working directory: name → content. */
  files?: Record<string, string>;
}

export async function harness(turns: Turn[], options: HarnessOptions = {}): Promise<Harness> {
  const box = await sandbox();
  for (const [name, content] of Object.entries(options.files ?? {})) {
    await writeFile(path.join(box.work, name), content);
  }
  const model = new FakeModel(turns);
  const list: Tool[] = [
    readTool,
    writeTool,
    askUserTool,
    deployTool,
    ...(options.extraTools ?? []),
  ];
  const tools = new Map(list.map((t) => [t.name, t]));
  const agent: AgentDefinition = {
    id: "a",
    description: "the test agent",
    systemPrompt: "You are a test agent.",
    model,
    tools,
    permissionMode: options.mode ?? "default",
    workingDirectories: [box.work],
    shareWorkingDirectories: true,
    maxIters: options.maxIters ?? 10,
    ...(options.confirmTimeoutMs === undefined
      ? {}
      : { confirmTimeoutMs: options.confirmTimeoutMs }),
    expiryPolicy: "deny",
    maxToolOutputBytes: 100_000,
    ...(options.maxReplyBytes === undefined ? {} : { maxReplyBytes: options.maxReplyBytes }),
    rules: [],
  };
  const now = new Date().toISOString();
  const history: Msg[] = [
    {
      id: "msg-user",
      role: "user",
      name: "user",
      content: [{ type: "text", id: "blk-user", text: "please help" }],
      createdAt: now,
    },
  ];
  const events: EventBody[] = [];
  const decisions: Decided[] = [];
  const waiters: { type: EventType; resolve: (e: EventBody) => void }[] = [];
  const controller = new AbortController();
  const toolController = new AbortController();
  const permissions: PermissionState = {
    mode: agent.permissionMode,
    rules: options.rules ?? [],
    workingDirectories: [box.work],
    homeDir: path.join(box.root, "home"),
  };
  const env: ReplyEnv = {
    agent,
    history,
    message: { id: "reply-1", role: "assistant", name: agent.id, content: [], createdAt: now },
    progress: { iteration: 0 },
    signal: controller.signal,
    toolSignal: toolController.signal,
    emit: (body) => {
      events.push(body);
      for (const w of waiters.filter((w) => w.type === body.type)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(body);
      }
    },
    permissions: () => permissions,
    decided: (call, decision) =>
      decisions.push({ callId: call.id, name: call.name, decision, eventsBefore: events.length }),
  };
  return {
    env,
    model,
    events,
    decisions,
    controller,
    tools: toolController,
    permissions,
    work: box.work,
    next(type) {
      const seen = events.find((e) => e.type === type);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => waiters.push({ type, resolve }));
    },
    cleanup: box.cleanup,
  };
}

/** The events of one type, narrowed. */
export function ofType<T extends EventType>(
  events: readonly EventBody[],
  type: T,
): Extract<EventBody, { type: T }>[] {
  return events.filter((e): e is Extract<EventBody, { type: T }> => e.type === type);
}

export const typesOf = (events: readonly EventBody[]): EventType[] => events.map((e) => e.type);

export function callsOf(message: Msg): ToolCallBlock[] {
  return message.content.filter((b): b is ToolCallBlock => b.type === "tool_call");
}

export function resultsOf(message: Msg): ToolResultBlock[] {
  return message.content.filter((b): b is ToolResultBlock => b.type === "tool_result");
}

/** The result of the call the model named `modelId`. */
export function resultOf(message: Msg, modelId: string): ToolResultBlock | undefined {
  const call = callsOf(message).find((c) => c.modelId === modelId);
  return resultsOf(message).find((r) => r.id === call?.id);
}

export function callOf(message: Msg, modelId: string): ToolCallBlock {
  const call = callsOf(message).find((c) => c.modelId === modelId);
  if (!call) throw new Error(`no call ${modelId}`);
  return call;
}

/** What the session does with a confirmation: the asking call becomes allowed. */
export function confirm(call: ToolCallBlock): void {
  call.state = "allowed";
  delete call.expiresAt;
}

/** What the session does with a client's result of a submitted call. */
export function clientResult(message: Msg, call: ToolCallBlock, output: string): void {
  call.state = "finished";
  delete call.expiresAt;
  message.content.push({
    type: "tool_result",
    id: call.id,
    name: call.name,
    output,
    state: "success",
  });
}

/** A tool call as a model turn streams it, for `processToolCalls` tests. */
export function pendingCall(id: string, name: string, input: object): ToolCallBlock {
  return {
    type: "tool_call",
    id: `call-${id}`,
    modelId: id,
    name,
    input: JSON.stringify(input),
    state: "pending",
  };
}
