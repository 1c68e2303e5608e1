import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { REPO_ROOT } from "./spawn-server.js";
import path from "node:path";

/** A scenario file of test/scenarios (see its README). */
export interface Scenario {
  name: string;
  agent?: Record<string, unknown>;
  files?: Record<string, string>;
  script: { turns: unknown[] };
  steps: Step[];
  final?: {
    status?: string;
    model_saw?: string[];
    files?: Record<string, string>;
    rules?: number;
  };
}

export interface Step {
  send?: string;
  confirm?: {
    call: string;
    confirmed: boolean;
    rules?: "suggested" | { tool_name: string; rule_content?: string; scope?: string }[];
    reason?: string;
    input?: unknown;
  }[];
  results?: {
    call: string;
    output?: string;
    state?: string;
    metadata?: Record<string, unknown>;
    answers?: { question: string; selected: string[]; other?: string }[];
  }[];
  interrupt?: boolean;
  wait?: boolean;
  new_session?: boolean;
  reconnect?: boolean;
  restart?: boolean;
  crash?: boolean;
  expect?: string[];
  error?: { code: string; field?: string; message?: string };
}

export const SCENARIO_DIR = fileURLToPath(new URL("../scenarios", import.meta.url));

/** Every scenario, with its file name; `$WORKDIR` and `$REPO` are replaced when it is run. */
export function loadScenarios(): { file: string; text: string }[] {
  return readdirSync(SCENARIO_DIR)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((file) => ({ file, text: readFileSync(path.join(SCENARIO_DIR, file), "utf8") }));
}

/** Parses a scenario with `$WORKDIR` and `$REPO` replaced (JSON-escaped). */
export function instantiate(text: string, workdir: string): Scenario {
  const escaped = (value: string) => JSON.stringify(value).slice(1, -1);
  return JSON.parse(
    text
      .replaceAll("$WORKDIR", escaped(workdir))
      .replaceAll("$REPO", escaped(path.resolve(REPO_ROOT))),
  ) as Scenario;
}

/**
 * The scenario's names for tool calls, bound to the ids the server assigned (see the README): an
 * expectation `tool_call_start X` binds X to its event's call id (again: rebinds it); everywhere
 * else X stands for the id it is bound to. A name never bound stands for itself.
 */
export class CallAliases {
  private readonly ids = new Map<string, string>();

  bind(alias: string, id: string): void {
    this.ids.set(alias, id);
  }

  /** The id `alias` stands for. */
  id(alias: string): string {
    return this.ids.get(alias) ?? alias;
  }

  /** The alias bound to `id` now, else `id` itself. */
  alias(id: string): string {
    for (const [alias, bound] of this.ids) if (bound === id) return alias;
    return id;
  }

  /** An error message pattern with every word that is a bound alias replaced by its id (escaped). */
  pattern(source: string): string {
    return source.replace(/\w+/g, (word) => {
      const id = this.ids.get(word);
      return id === undefined ? word : id.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    });
  }
}
