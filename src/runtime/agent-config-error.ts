/** Thrown when the configuration names something that does not exist (a tool, a directory). */
export class AgentConfigError extends Error {
  override readonly name = "AgentConfigError";
}
