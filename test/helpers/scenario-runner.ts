import { readFile } from "node:fs/promises";
import path from "node:path";
import { expect } from "vitest";
import { type ParkwayClient, ParkwayClientError } from "../../src/client/index.js";
import { SessionStatus } from "../../src/generated/parkway/v1/agent_service.js";
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import type { PermissionRule } from "../../src/generated/parkway/v1/permission.js";
import type { ScriptedModelServer } from "../../src/model/scripted/index.js";
import { CallAliases, type Scenario, shapeAgainst, type Step, stepInput } from "./scenario.js";
import { SessionWatcher } from "./session-watcher.js";
import { type ScenarioStream, WatchSendStream } from "./watch-send-stream.js";
import type { WebProtocol } from "./web-client.js";
import { WebWatchSendStream } from "./web-stream.js";

/** Where a scenario runs: one node or several sharing their data, each reached by its client. */
export interface ScenarioHost {
  clients: readonly ParkwayClient[];
  model: Pick<ScriptedModelServer, "requests">;
  /** The agent's working directory. */
  workdir: string;
  /** Every node stops gracefully and starts again on the same address and data. */
  restart(): Promise<void>;
  /** Every node is killed with SIGKILL and started again likewise. */
  crash?(): Promise<void>;
  /** The web port of each node (`http://HOST:PORT`), for the web transports. */
  webUrls?: readonly string[];
}

export interface RunOptions {
  /**
   * The node that step `index` goes to (default: node 0). Before the step, the session's stream
   * moves there: a new stream attached after the last seq read.
   */
  nodeFor?: (index: number) => number;
  /**
   * A node on which a watcher follows every session from seq 0 for the whole scenario; it must see
   * each seq once, without gaps, with the event ids the runner's own streams read.
   */
  watchOn?: number;
  /**
   * How the runner talks to the session: one Chat stream (default), or Watch for the events and
   * Send for each input, held to the same expected events and errors; the web transports do the
   * same on the web port, over the Connect protocol (JSON or binary) or gRPC-web.
   */
  transport?: "chat" | "watch-send" | WebProtocol;
}

/** Plays one scenario (see test/scenarios/README.md) and checks what it expects. */
export class ScenarioRunner {
  private chat!: ScenarioStream;
  private node = 0;
  private sessionId = "";
  /** The last seq the runner read from its streams, and each seq's event id. */
  private lastRead = 0;
  private readonly read = new Map<number, string>();
  /** The REQUIRE_* calls read (kind and id); a new stream announces pending ones again. */
  private readonly announced = new Set<string>();
  private readonly suggested = new Map<string, PermissionRule[]>();
  private readonly aliases = new CallAliases();
  private watcher: SessionWatcher | undefined;

  constructor(
    private readonly h: ScenarioHost,
    private readonly scenario: Scenario,
    private readonly options: RunOptions = {},
  ) {}

  private get client(): ParkwayClient {
    return this.h.clients[this.node]!;
  }

  async run(): Promise<void> {
    const nodeFor = this.options.nodeFor ?? (() => 0);
    try {
      this.node = nodeFor(0);
      await this.open();
      for (const [index, step] of this.scenario.steps.entries()) {
        await this.moveTo(nodeFor(index));
        const where = this.h.clients.length > 1 ? ` (node ${this.node})` : "";
        await this.step(step, `${this.scenario.name}: step ${index + 1}${where}`);
      }
      await this.checkWatched();
      await this.checkFinal();
    } finally {
      this.chat?.close();
      this.watcher?.close();
    }
  }

  private async open(): Promise<void> {
    const session = await this.client.createSession({ agentId: "test" });
    this.sessionId = session.id;
    this.lastRead = 0;
    this.read.clear();
    this.chat = await this.stream(0);
    const watchOn = this.options.watchOn;
    if (watchOn !== undefined)
      this.watcher = new SessionWatcher(this.h.clients[watchOn]!, session.id);
  }

  /** A stream of the session on the current node, after `afterSeq`, over the chosen transport. */
  private async stream(afterSeq: number): Promise<ScenarioStream> {
    const transport = this.options.transport ?? "chat";
    if (transport === "watch-send") {
      return new WatchSendStream(this.client, this.sessionId, afterSeq);
    }
    if (transport !== "chat") {
      const url = this.h.webUrls?.[this.node];
      if (!url) throw new Error(`transport ${transport} needs the node's web port`);
      return new WebWatchSendStream(url, transport, this.sessionId, afterSeq);
    }
    return this.client.attach(this.sessionId, { afterSeq });
  }

  /** Moves the session's stream to `node`, resuming after the last seq read. */
  private async moveTo(node: number): Promise<void> {
    if (node === this.node) return;
    this.chat.close();
    this.node = node;
    this.chat = await this.stream(this.lastRead);
  }

  private async step(step: Step, label: string): Promise<void> {
    if (!step.error) {
      await this.act(step);
      if (step.expect) {
        const events = await this.settle();
        const end = events.find((e) => e.event?.$case === "replyEnd")?.event;
        const why =
          end?.$case === "replyEnd" && end.value.error ? ` (${end.value.error.code})` : "";
        expect(shapeAgainst(events, step.expect, this.aliases), label + why).toEqual(step.expect);
      }
      return;
    }
    const before = await this.client.getSession(this.sessionId);
    const err = await this.act(step).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err, label).toBeInstanceOf(ParkwayClientError);
    const e = err as ParkwayClientError;
    expect(e.codeName, `${label}: ${e.message}`).toBe(step.error.code);
    if (step.error.field) {
      expect(
        e.fieldViolations.map((v) => v.field),
        label,
      ).toContain(step.error.field);
    }
    if (step.error.message) {
      expect(e.message, label).toMatch(new RegExp(this.aliases.pattern(step.error.message)));
    }
    const after = await this.client.getSession(this.sessionId);
    expect(after.lastSeq, `${label}: nothing changes`).toBe(before.lastSeq);
    expect(after.status, `${label}: nothing changes`).toBe(before.status);
  }

  private async act(step: Step): Promise<void> {
    const input = stepInput(step, this.aliases, (id) => this.suggested.get(id) ?? []);
    if (input) {
      await this.chat.send(input);
    } else if (step.interrupt) {
      await this.chat.interrupt();
    } else if (step.new_session) {
      await this.checkWatched();
      this.chat.close();
      this.watcher?.close();
      await this.open();
    } else if (step.reconnect) {
      this.chat.close();
      this.chat = await this.stream(this.lastRead);
    } else if (step.restart) {
      // The streams notice the shutdown (UNAVAILABLE) and attach again after their last seq.
      await this.h.restart();
    } else if (step.crash) {
      if (!this.h.crash) throw new Error("a crash step needs Parkway in a process of its own");
      await this.h.crash();
    }
  }

  /**
   * The events until the reply finishes or parks, leaving out calls announced again that were read
   * already (a stream attached anew announces the pending calls once more).
   */
  private async settle(): Promise<ServerEvent[]> {
    const events: ServerEvent[] = [];
    const signal = AbortSignal.timeout(20_000);
    for await (const event of this.chat.untilSettled(signal)) {
      const e = event.event;
      if (event.seq > 0) {
        expect(event.seq, "each seq is read once, in order").toBeGreaterThan(this.lastRead);
        this.lastRead = event.seq;
        this.read.set(event.seq, event.id);
      }
      if (e?.$case !== "requireUserConfirm" && e?.$case !== "requireExternalExecution") {
        events.push(event);
        continue;
      }
      const fresh = e.value.toolCalls.filter((c) => !this.announced.has(`${e.$case}:${c.id}`));
      for (const call of fresh) {
        this.announced.add(`${e.$case}:${call.id}`);
        this.suggested.set(call.id, call.suggestedRules);
      }
      if (event.seq > 0) events.push(event);
      else if (fresh.length > 0) {
        events.push({ ...event, event: { ...e, value: { toolCalls: fresh } } });
      }
    }
    return events;
  }

  /**
   * The watcher saw seqs 1..last once each, in order, with the event ids the runner read (events
   * without a seq, re-announcements, are not among them).
   */
  private async checkWatched(): Promise<void> {
    const watcher = this.watcher;
    if (!watcher) return;
    const { lastSeq } = await this.client.getSession(this.sessionId);
    await watcher.reach(lastSeq);
    expect(watcher.problems, "the watcher's stream").toEqual([]);
    const seqs = watcher.events.map((e) => e.seq);
    const all = Array.from({ length: lastSeq }, (_, i) => i + 1);
    expect(
      {
        missing: all.filter((seq) => !seqs.includes(seq)),
        duplicated: seqs.filter((seq, i) => seqs.indexOf(seq) !== i),
      },
      "the watcher sees every seq once",
    ).toEqual({ missing: [], duplicated: [] });
    expect(seqs, "the watcher sees the seqs in order").toEqual(all);
    for (const [seq, id] of this.read) {
      expect(watcher.events[seq - 1]?.id, `the event at seq ${seq}`).toBe(id);
    }
  }

  private async checkFinal(): Promise<void> {
    const final = this.scenario.final;
    if (!final) return;
    if (final.status) {
      const session = await this.client.getSession(this.sessionId);
      expect(SessionStatus[session.status]).toBe(`SESSION_STATUS_${final.status}`);
    }
    for (const text of final.model_saw ?? []) {
      const last = this.h.model.requests[this.h.model.requests.length - 1];
      expect(JSON.stringify(last?.messages)).toContain(text);
    }
    for (const [file, content] of Object.entries(final.files ?? {})) {
      expect(await readFile(path.join(this.h.workdir, file), "utf8")).toBe(content);
    }
    if (final.rules !== undefined) {
      const rules = await this.client.listRules({ sessionId: this.sessionId });
      expect(rules.length, rules.map((r) => `${r.toolName}(${r.ruleContent})`).join(", ")).toBe(
        final.rules,
      );
    }
  }
}
