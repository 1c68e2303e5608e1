import type { AgentDefinition } from "./agent.js";
import type { EventBody } from "./events.js";
import type { PermissionState } from "./gate.js";
import type { ReplyPolicy } from "./policy-client.js";
import type { ToolQuestion } from "../tools/tool-question.js";
import type {
  DecisionInfo,
  Failure,
  FinishedReason,
  Msg,
  ToolCallBlock,
  ToolResultBlock,
} from "./types.js";

/** Everything one reply runs with. `message` and `progress` are mutated as the reply advances. */
export interface ReplyEnv {
  agent: AgentDefinition;
  /** The conversation before this reply, ending with the user message that started it. */
  history: readonly Msg[];
  /** The reply's assistant message (id = reply id), accumulated across iterations and resumes. */
  message: Msg;
  /** Model calls made so far in this reply. */
  progress: { iteration: number };
  /**
   * Aborted by user_interrupt or by shutdown: the model call stops and no further tool starts. An
   * `InterruptReason` gives the text the interrupted calls' results carry.
   */
  signal: AbortSignal;
  /**
   * The signal the server tools run with; default `signal`. Aborted later than `signal` when tools
   * that are running may finish first (a shutdown's grace).
   */
  toolSignal?: AbortSignal;
  emit: (body: EventBody) => void;
  /**
   * Settles once what started the reply is stored; no tool runs before. A reply's first model call
   * may leave while its start is being written (a crash then loses nothing a tool did).
   */
  stored?: Promise<unknown>;
  /** The session's permission state, read at each decision (rules change as people accept them). */
  permissions: () => PermissionState;
  /**
   * The external policy decision point asked before the engine's ALLOW (or ASK) takes effect; none
   * = the engine alone decides, synchronously.
   */
  policy?: ReplyPolicy;
  /**
   * Told of each decision the permission engine makes on its own (allow, deny, or ask with a prompt),
   * right before the first event that shows it is emitted, so the session can store a record of it
   * with that event. Not called for a call held behind another one (it is decided again later).
   */
  decided?: (call: ToolCallBlock, decision: DecisionInfo) => void;
  /**
   * The W3C `traceparent` the model call about to start carries onward (read right after its
   * MODEL_CALL_START is emitted); absent or undefined when the reply is not traced.
   */
  modelTrace?: () => string | undefined;
  /**
   * Parks the running reply on `question`, an AskUser a running tool asks (already in the message
   * and announced by REQUIRE_EXTERNAL_EXECUTION), and resolves with its result once an answer is
   * stored (the session puts the result into the message); resolves undefined when `signal` aborts
   * before an answer came. Absent where nobody can be asked: tools then get no `ask`.
   */
  ask?: (
    question: ToolCallBlock,
    check: ToolQuestion["check"],
    signal: AbortSignal,
  ) => Promise<ToolResultBlock | undefined>;
}

/** How `runReply` returned: finished (the owner emits REPLY_END) or parked (waiting for answers). */
export type ReplyOutcome =
  { kind: "finished"; finishedReason: FinishedReason; error?: Failure } | { kind: "parked" };
