import type { ElicitRequestFormParams, ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../../common/logger.js";
import type { ToolAnswer, ToolQuestion } from "../tool-question.js";
import { formQuestion } from "./mcp-elicitation.js";

/** How a call asks the person what its server asks (an elicitation). */
export type Asker = (question: ToolQuestion, signal: AbortSignal) => Promise<ToolAnswer>;

/** How each call under way asks the person, for the forms its server sends. */
export class FormAskers {
  private readonly askers = new Set<Asker>();

  constructor(private readonly log: Logger) {}

  add(ask: Asker): void {
    this.askers.add(ask);
  }

  delete(ask: Asker): void {
    this.askers.delete(ask);
  }

  /**
   * A form the server asks for (elicitation, form mode), asked by the call under way. The protocol
   * does not say which call a request belongs to: with several calls of this server running, the
   * form is cancelled rather than shown to the wrong person.
   */
  async ask(params: ElicitRequestFormParams, signal: AbortSignal): Promise<ElicitResult> {
    const askers = [...this.askers];
    if (askers.length !== 1) {
      this.log.warn(
        { calls: askers.length },
        "MCP form cancelled: it can be asked only while exactly one call of its server runs",
      );
      return { action: "cancel" };
    }
    const form = formQuestion(params);
    const answer = await askers[0]!(form.question, signal);
    switch (answer.state) {
      case "success":
        return { action: "accept", content: form.content(answer.answers) };
      case "denied":
        return { action: "decline" };
      default:
        return { action: "cancel" };
    }
  }
}
