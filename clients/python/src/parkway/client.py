"""The asyncio Parkway client (``grpc.aio``)."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, TypeVar, cast

import grpc
from google.protobuf import struct_pb2

from parkway import inputs
from parkway.credentials import channel_credentials
from parkway.errors import from_rpc_error
from parkway.keepalive import Keepalive
from parkway.session import AsyncSession, ReconnectPolicy
from parkway.v1 import (
    agent_service_pb2,
    agent_service_pb2_grpc,
    audit_pb2,
    audit_pb2_grpc,
    content_pb2,
    events_pb2,
    permission_pb2,
    permission_pb2_grpc,
)

__all__ = ["DEFAULT_REPLY_TIMEOUT", "DEFAULT_TIMEOUT", "AsyncClient", "SessionStatusName"]

#: Seconds a call or an input acknowledgement may take when the client sets no timeout.
DEFAULT_TIMEOUT = 30.0
#: Seconds the unary ``Reply`` may take by default (it runs the model until the reply settles).
DEFAULT_REPLY_TIMEOUT = 600.0

#: Channel options set unless `options` overrides them: reconnect to a restarted server within
#: about a second instead of gRPC's default backoff that grows to two minutes. gRPC core reads
#: ``grpc.min_reconnect_backoff_ms`` as the least time a connection attempt (TCP and the server's
#: HTTP/2 SETTINGS) may take before it counts as failed: 5 s, as in the Go client, so that a busy
#: server is not taken for an unreachable one.
_CHANNEL_DEFAULTS: dict[str, Any] = {
    "grpc.initial_reconnect_backoff_ms": 100,
    "grpc.min_reconnect_backoff_ms": 5000,
    "grpc.max_reconnect_backoff_ms": 1000,
}

SessionStatusName = Literal["idle", "running", "awaiting_permission", "awaiting_external_result"]

Res = TypeVar("Res")


def _status(value: SessionStatusName | int | None) -> agent_service_pb2.SessionStatus:
    if value is None:
        return agent_service_pb2.SESSION_STATUS_UNSPECIFIED
    if isinstance(value, int):
        return cast("agent_service_pb2.SessionStatus", value)
    name = f"SESSION_STATUS_{value.upper()}"
    return cast("agent_service_pb2.SessionStatus", agent_service_pb2.SessionStatus.Value(name))


def _set_input(
    request: agent_service_pb2.ReplyRequest | agent_service_pb2.SendRequest,
    method: str,
    message: str | None,
    confirm: Iterable[events_pb2.ConfirmResult] | None,
    results: Iterable[content_pb2.ToolResultBlock] | None,
    interrupt: bool,
    reply_id: str,
) -> None:
    """Sets the one input of a ``Reply`` or ``Send`` request."""
    given = [message is not None, confirm is not None, results is not None, interrupt]
    if sum(given) != 1:
        raise ValueError(f"{method}() takes exactly one of message, confirm, results, interrupt")
    if message is not None:
        request.user_message.CopyFrom(events_pb2.UserMessage(text=message))
    elif confirm is not None:
        request.user_confirm_result.CopyFrom(
            events_pb2.UserConfirmResult(reply_id=reply_id, confirm_results=list(confirm))
        )
    elif results is not None:
        request.external_execution_result.CopyFrom(
            events_pb2.ExternalExecutionResult(reply_id=reply_id, execution_results=list(results))
        )
    else:
        request.user_interrupt.CopyFrom(events_pb2.UserInterrupt(reply_id=reply_id))


class AsyncClient:
    """A Parkway client for asyncio: sessions, replies, agents, and the generated stubs.

    Every unary call has a deadline (``timeout`` seconds, per call or the client's default) and
    raises :class:`parkway.ParkwayError` (a subclass per status code, with the google.rpc details
    decoded from ``grpc-status-details-bin``) when it fails. Use it from one event loop; close it
    with :meth:`close` or ``async with``.

    Args:
        target: ``"HOST:PORT"`` of the server.
        token: a bearer token sent as ``authorization: Bearer <token>`` on every call.
        credentials: ``grpc.ChannelCredentials`` for TLS / mTLS (e.g.
            ``grpc.ssl_channel_credentials()`` for the system's roots); insecure (loopback) when
            None and none of the PEM arguments below is given.
        timeout: default deadline in seconds of unary calls and of input acknowledgements;
            None means :data:`DEFAULT_TIMEOUT`. ``reply`` defaults to :data:`DEFAULT_REPLY_TIMEOUT`.
        options: extra gRPC channel options (reconnect backoff is capped at 1 s, and a connection
            attempt may take 5 s, unless these set ``grpc.max_reconnect_backoff_ms`` and
            ``grpc.min_reconnect_backoff_ms``); they win over ``keepalive``'s.
        keepalive: the HTTP/2 keepalive pings sent while a call is open (default
            :class:`Keepalive`: every 30 s, 20 s timeout; ``Keepalive(enabled=False)`` sends none).
        reconnect: how attached sessions re-attach after a broken stream (default
            :class:`ReconnectPolicy`; ``ReconnectPolicy(enabled=False)`` to turn it off).
        root_certificates: PEM bytes of the CA the server's certificate must chain to; setting it
            (or the two below) connects over TLS. None trusts the system's roots.
        certificate_chain: PEM bytes of a client certificate, for a server that requires one
            (mTLS); needs ``private_key``.
        private_key: PEM bytes of the client certificate's private key.
        call_metadata: extra metadata for each call, called when the call starts (for example
            ``lambda: {"traceparent": current_traceparent()}``, so the server traces the call and
            the reply it starts under the caller's span).

    Raises:
        ValueError: when ``credentials`` is combined with the PEM arguments, or only one of
            ``certificate_chain`` and ``private_key`` is given.
    """

    def __init__(
        self,
        target: str,
        token: str | None = None,
        credentials: grpc.ChannelCredentials | None = None,
        timeout: float | None = None,
        *,
        options: Sequence[tuple[str, Any]] | None = None,
        reconnect: ReconnectPolicy | None = None,
        keepalive: Keepalive | None = None,
        root_certificates: bytes | None = None,
        certificate_chain: bytes | None = None,
        private_key: bytes | None = None,
        call_metadata: Callable[[], Mapping[str, str]] | None = None,
    ) -> None:
        credentials = channel_credentials(
            credentials, root_certificates, certificate_chain, private_key
        )
        self.target = target
        self.timeout = DEFAULT_TIMEOUT if timeout is None else timeout
        self._token = token
        self._call_metadata = call_metadata
        self._reconnect = reconnect or ReconnectPolicy()
        self._sessions: weakref.WeakSet[AsyncSession] = weakref.WeakSet()
        #: The keepalive pings this client's channel sends.
        self.keepalive = keepalive or Keepalive()
        #: The channel options the channel was created with (later entries win).
        self.channel_options: list[tuple[str, Any]] = [
            *_CHANNEL_DEFAULTS.items(),
            *self.keepalive.channel_options(),
            *(options or ()),
        ]
        self.channel: grpc.aio.Channel = (
            grpc.aio.secure_channel(target, credentials, self.channel_options)
            if credentials is not None
            else grpc.aio.insecure_channel(target, self.channel_options)
        )
        #: The generated AgentService stub on this client's channel (no default metadata/deadline).
        self.agent_service: Any = agent_service_pb2_grpc.AgentServiceStub(self.channel)  # type: ignore[no-untyped-call]
        #: The generated PermissionService stub on this client's channel.
        self.permission_service: Any = permission_pb2_grpc.PermissionServiceStub(self.channel)  # type: ignore[no-untyped-call]
        #: The generated AuditService stub on this client's channel.
        self.audit_service: Any = audit_pb2_grpc.AuditServiceStub(self.channel)  # type: ignore[no-untyped-call]

    def metadata(self) -> tuple[tuple[str, str], ...]:
        """Call metadata: ``call_metadata()``'s entries (read per call: for example the current W3C
        ``traceparent``, so the server's spans and the reply join the caller's trace), then the
        bearer token, if any."""
        extra = tuple(self._call_metadata().items()) if self._call_metadata else ()
        token = (("authorization", f"Bearer {self._token}"),) if self._token else ()
        return extra + token

    async def unary(
        self,
        method: Callable[..., Awaitable[Res]],
        request: Any,
        *,
        timeout: float | None = None,
    ) -> Res:
        """Runs a unary method of one of the stubs with this client's metadata and deadline;
        raises :class:`parkway.ParkwayError` on failure. E.g.
        ``await client.unary(client.permission_service.ListRules, ListRulesRequest(session_id=id))``.
        """
        try:
            return await method(
                request,
                timeout=self.timeout if timeout is None else timeout,
                metadata=self.metadata(),
            )
        except grpc.aio.AioRpcError as err:
            raise from_rpc_error(err) from None

    async def create_session(
        self,
        agent_id: str,
        *,
        external_tools: Iterable[agent_service_pb2.ExternalTool | Mapping[str, Any]] = (),
        permission_mode: inputs.PermissionModeName | int | None = None,
        working_directories: Iterable[str] = (),
        metadata: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> agent_service_pb2.Session:
        """Creates a session of an agent.

        Args:
            external_tools: tools this client executes, as ``ExternalTool`` messages or mappings
                ``{"name", "description", "input_schema", "metadata_schema"}`` (schemas as dicts).
            permission_mode: ``"default"``, ``"accept_edits"``, ``"explore"``, ``"bypass"``,
                ``"dont_ask"`` (or a ``PermissionMode``); None uses the agent's.
            working_directories: each absolute and inside one of the agent's, for an agent that
                shares its working directories; empty uses the agent's. Any other agent gives each
                session a directory of its own and refuses a non-empty list (INVALID_ARGUMENT).
            metadata: free-form data stored with the session.
        """
        request = agent_service_pb2.CreateSessionRequest(
            agent_id=agent_id,
            external_tools=[inputs.external_tool(t) for t in external_tools],
            permission_mode=inputs.permission_mode(permission_mode),
            working_directories=list(working_directories),
        )
        if metadata is not None:
            data = struct_pb2.Struct()
            data.update(metadata)
            request.metadata.CopyFrom(data)
        response: agent_service_pb2.CreateSessionResponse = await self.unary(
            self.agent_service.CreateSession, request, timeout=timeout
        )
        return response.session

    async def get_session(
        self, session_id: str, *, timeout: float | None = None
    ) -> agent_service_pb2.Session:
        """A session's status, pending tool calls, last seq and token usage (``.usage``, summed over
        its replies). ``NotFound`` when unknown."""
        response: agent_service_pb2.GetSessionResponse = await self.unary(
            self.agent_service.GetSession,
            agent_service_pb2.GetSessionRequest(session_id=session_id),
            timeout=timeout,
        )
        return response.session

    async def list_sessions(
        self,
        *,
        status: SessionStatusName | int | None = None,
        agent_id: str = "",
        page_size: int = 0,
        page_token: str = "",
        timeout: float | None = None,
    ) -> agent_service_pb2.ListSessionsResponse:
        """One page of sessions, newest first (``.sessions``, ``.next_page_token``: empty on the
        last page), optionally only those with ``status`` or of ``agent_id``."""
        response: agent_service_pb2.ListSessionsResponse = await self.unary(
            self.agent_service.ListSessions,
            agent_service_pb2.ListSessionsRequest(
                status=_status(status),
                agent_id=agent_id,
                page_size=page_size,
                page_token=page_token,
            ),
            timeout=timeout,
        )
        return response

    async def delete_session(self, session_id: str, *, timeout: float | None = None) -> None:
        """Deletes a session, its events and its session-scoped rules; interrupts a running reply."""
        await self.unary(
            self.agent_service.DeleteSession,
            agent_service_pb2.DeleteSessionRequest(session_id=session_id),
            timeout=timeout,
        )

    async def list_agents(self, *, timeout: float | None = None) -> list[agent_service_pb2.Agent]:
        """The configured agents."""
        response: agent_service_pb2.ListAgentsResponse = await self.unary(
            self.agent_service.ListAgents, agent_service_pb2.ListAgentsRequest(), timeout=timeout
        )
        return list(response.agents)

    async def list_rules(
        self,
        session_id: str = "",
        *,
        agent_id: str = "",
        scope: inputs.ScopeName | int | None = None,
        timeout: float | None = None,
    ) -> list[permission_pb2.PermissionRule]:
        """The permission rules in effect for a session (its own, its agent's and its tenant's), or
        of one scope."""
        request = permission_pb2.ListRulesRequest(session_id=session_id, agent_id=agent_id)
        if scope is not None:
            request.scope = inputs.rule_scope(scope)
        response: permission_pb2.ListRulesResponse = await self.unary(
            self.permission_service.ListRules, request, timeout=timeout
        )
        return list(response.rules)

    async def list_audit_records(
        self,
        session_id: str = "",
        *,
        tool_call_id: str = "",
        page_size: int = 0,
        page_token: str = "",
        timeout: float | None = None,
    ) -> audit_pb2.ListAuditRecordsResponse:
        """One page of the tenant's audit trail, oldest first (``.records``, ``.next_page_token``:
        empty on the last page): every permission decision and answer, who made it, when, for which
        tool call and by which rule; optionally only those of ``session_id`` or ``tool_call_id``."""
        response: audit_pb2.ListAuditRecordsResponse = await self.unary(
            self.audit_service.ListAuditRecords,
            audit_pb2.ListAuditRecordsRequest(
                session_id=session_id,
                tool_call_id=tool_call_id,
                page_size=page_size,
                page_token=page_token,
            ),
            timeout=timeout,
        )
        return response

    async def list_dead_letters(
        self, *, page_size: int = 0, page_token: str = "", timeout: float | None = None
    ) -> audit_pb2.ListDeadLettersResponse:
        """One page of the tenant's dead letters, oldest first (``.dead_letters``,
        ``.next_page_token``): park notifications given up after their last attempt, each with its
        receiver, body and last error."""
        response: audit_pb2.ListDeadLettersResponse = await self.unary(
            self.audit_service.ListDeadLetters,
            audit_pb2.ListDeadLettersRequest(page_size=page_size, page_token=page_token),
            timeout=timeout,
        )
        return response

    async def reply(
        self,
        session_id: str,
        message: str | None = None,
        *,
        confirm: Iterable[events_pb2.ConfirmResult] | None = None,
        results: Iterable[content_pb2.ToolResultBlock] | None = None,
        interrupt: bool = False,
        reply_id: str = "",
        request_id: str = "",
        timeout: float | None = None,
    ) -> agent_service_pb2.ReplyResponse:
        """The unary ``Reply``: exactly one input (a user ``message``, ``confirm`` results,
        external ``results``, or ``interrupt``), then waits until the reply finishes or parks.

        Returns the response: ``.message`` is the final message (``finished_reason`` set) or the
        waiting notice of a parked reply (unset), ``.pending_tool_calls`` what awaits an answer,
        ``.status`` the session's status. Refusals raise like the stream's inputs do. The deadline
        defaults to :data:`DEFAULT_REPLY_TIMEOUT`.
        """
        request = agent_service_pb2.ReplyRequest(session_id=session_id, request_id=request_id)
        _set_input(request, "reply", message, confirm, results, interrupt, reply_id)
        response: agent_service_pb2.ReplyResponse = await self.unary(
            self.agent_service.Reply,
            request,
            timeout=DEFAULT_REPLY_TIMEOUT if timeout is None else timeout,
        )
        return response

    async def send(
        self,
        session_id: str,
        message: str | None = None,
        *,
        confirm: Iterable[events_pb2.ConfirmResult] | None = None,
        results: Iterable[content_pb2.ToolResultBlock] | None = None,
        interrupt: bool = False,
        reply_id: str = "",
        request_id: str = "",
        timeout: float | None = None,
    ) -> agent_service_pb2.SendResponse:
        """The unary ``Send``, for programs without a bidi stream: exactly one input (as for
        :meth:`reply`), applied as a ``Chat`` input is, without waiting for the reply. Returns the
        acknowledgement (``.request_id``, ``.reply_id``: the reply the input started or acted on);
        a refusal raises what the stream's acknowledgement would. A retry with the same
        ``request_id`` is applied once. Read the events with :meth:`watch`.
        """
        request = agent_service_pb2.SendRequest(session_id=session_id, request_id=request_id)
        _set_input(request, "send", message, confirm, results, interrupt, reply_id)
        response: agent_service_pb2.SendResponse = await self.unary(
            self.agent_service.Send, request, timeout=timeout
        )
        return response

    async def watch(
        self, session_id: str, after_seq: int = 0
    ) -> AsyncIterator[events_pb2.ServerEvent]:
        """The server-streaming ``Watch``: the stored events with seq > ``after_seq``, the
        re-announced pending calls of a parked reply (seq 0), then live events, as :meth:`attach`
        replays them, until the loop stops. Raises :class:`parkway.ParkwayError` when the server
        refuses or ends the stream (``NotFound`` for an unknown session, ``Unavailable`` when it
        shuts down: watch again after the last seq read). It does not reconnect by itself.

        Stopping the loop early cancels the call: a server-streaming call has no other way to end
        before the server ends it. Each cancel resets the stream, which counts against the
        server's rate limit on resets (see :data:`parkway.session_core.CLOSE_GRACE_S`); a client
        that starts and stops many watches in a row may have its connection closed (GOAWAY)."""
        call = self.agent_service.Watch(
            agent_service_pb2.WatchRequest(session_id=session_id, after_seq=after_seq),
            metadata=self.metadata(),
        )
        try:
            async for event in call:
                yield event
        except grpc.aio.AioRpcError as err:
            raise from_rpc_error(err) from None
        finally:
            call.cancel()

    async def list_messages(
        self,
        session_id: str,
        *,
        page_size: int = 0,
        page_token: str = "",
        timeout: float | None = None,
    ) -> agent_service_pb2.ListMessagesResponse:
        """One page of the session's messages, newest first (``.messages``, ``.next_page_token``:
        empty on the last page): user messages, each finished reply's final message (also of
        replies whose events were compacted) and the active reply's message so far."""
        response: agent_service_pb2.ListMessagesResponse = await self.unary(
            self.agent_service.ListMessages,
            agent_service_pb2.ListMessagesRequest(
                session_id=session_id, page_size=page_size, page_token=page_token
            ),
            timeout=timeout,
        )
        return response

    async def attach(
        self,
        session_id: str,
        after_seq: int = 0,
        *,
        reconnect: ReconnectPolicy | None = None,
        timeout: float | None = None,
    ) -> AsyncSession:
        """Opens a ``Chat`` stream attached to a session and waits until the server accepted it.

        The server replays every stored event with seq > ``after_seq`` (``replayed=True``), then
        re-announces what a parked reply awaits, then streams live events. Raises ``NotFound`` for an
        unknown session and ``InvalidArgument`` when ``after_seq`` is beyond the session's last seq.
        """
        session = AsyncSession(
            self,
            session_id,
            after_seq=after_seq,
            reconnect=reconnect or self._reconnect,
            timeout=self.timeout if timeout is None else timeout,
        )
        await session._start()
        self._sessions.add(session)
        return session

    async def close(self) -> None:
        """Closes every session attached through this client (together: each may wait up to
        :data:`parkway.session_core.CLOSE_GRACE_S` for its stream to end), then the channel."""
        await asyncio.gather(*(session.close() for session in list(self._sessions)))
        await self.channel.close()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
