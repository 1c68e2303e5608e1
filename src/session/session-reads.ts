import { invalidArgument } from "../common/errors.js";
import type { Store } from "../store/store.js";
import type { ActorRegistry } from "./actor-registry.js";
import { listMessages, type MessagePage, type MessagePageRequest } from "./message-list.js";
import { SessionActor } from "./session-actor.js";
import { listSessions, type SessionFilter, type SessionPage } from "./session-list.js";
import type { SessionReader, StoredSession } from "./session-reader.js";
import { type SessionView, sessionView } from "./session-view.js";

/**
 * What the API reads of sessions: from a session's actor when this node holds it, else from the
 * store. A read takes no lease: on several nodes it is not refused while another node serves the
 * session, or while a lease is on its way back after a reply.
 */
export class SessionReads {
  constructor(
    private readonly store: Store,
    private readonly reader: SessionReader,
    private readonly actors: ActorRegistry,
  ) {}

  /** A session's actor when this node holds it, else its records as stored. */
  async peek(tenant: string, sessionId: string): Promise<SessionActor | StoredSession> {
    if (!sessionId) throw invalidArgument([{ field: "session_id", description: "is required" }]);
    const actor = this.actors.cached(sessionId);
    return actor?.tenant === tenant ? actor : this.reader.read(sessionId, tenant);
  }

  /**
   * A session as its actor shows it, answered once the events up to the `lastSeq` it reports are
   * written (a park's REQUIRE_* among them), so that a stream attached after that seq misses none
   * of them. Only that write is waited for, not the ones a reply streaming on makes after it.
   */
  async get(tenant: string, sessionId: string): Promise<SessionView> {
    const found = await this.peek(tenant, sessionId);
    if (!(found instanceof SessionActor)) return sessionView(found.data, found.reply?.message);
    const view = found.view;
    await found.events.settled(view.lastSeq);
    return view;
  }

  /** Sessions newest first, optionally filtered (see `listSessions`). */
  list(tenant: string, filter: SessionFilter): Promise<SessionPage> {
    return listSessions(this.store, tenant, filter, (id) => this.get(tenant, id));
  }

  /** A session's messages newest first (see `listMessages`), read once what it emitted is stored. */
  async messages(
    tenant: string,
    sessionId: string,
    page: MessagePageRequest,
  ): Promise<MessagePage> {
    if (!sessionId) throw invalidArgument([{ field: "session_id", description: "is required" }]);
    await this.actors.cached(sessionId)?.events.settled();
    const { data, reply } = await this.reader.read(sessionId, tenant);
    return listMessages(this.store, data, reply?.message, page);
  }
}
