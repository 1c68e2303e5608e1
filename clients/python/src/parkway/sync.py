"""The blocking Parkway client.

Attached sessions (:class:`parkway.Session`, in :mod:`parkway.sync_session`) drive their ``Chat``
stream over grpcio's blocking API, read on the caller's thread, with the session logic of the
asyncio client (:mod:`parkway.session_core`). The unary calls and ``watch`` run the matching
:class:`parkway.AsyncClient` method on a private event loop thread and wait for it, so the two
clients share one implementation of them (deadlines, error decoding) and cannot drift apart; only
the signatures are repeated here. The blocking objects may be used from any thread, one call at a
time per session.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import (
    AsyncIterator,
    Callable,
    Coroutine,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from concurrent.futures import Future
from typing import Any, TypeVar

import grpc

from parkway import inputs
from parkway.client import AsyncClient, SessionStatusName
from parkway.credentials import channel_credentials
from parkway.keepalive import Keepalive
from parkway.session_core import ReconnectPolicy
from parkway.sync_session import Session, close_sessions
from parkway.v1 import (
    agent_service_pb2,
    agent_service_pb2_grpc,
    audit_pb2,
    content_pb2,
    events_pb2,
    permission_pb2,
)

__all__ = ["Client", "Session"]

T = TypeVar("T")


async def _anext(agen: AsyncIterator[T]) -> T:
    return await agen.__anext__()


class _LoopThread:
    """An event loop running forever in a daemon thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self.loop.run_forever, name="parkway-client-loop", daemon=True
        )
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Runs a coroutine on the loop and returns its result (or raises its exception). If the
        caller is interrupted (KeyboardInterrupt), the coroutine is cancelled."""
        if threading.current_thread() is self._thread:
            coro.close()
            raise RuntimeError("a blocking Parkway call cannot be made from its own event loop")
        future: Future[T] = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result()
        except BaseException:
            future.cancel()
            raise

    def iterate(self, agen: AsyncIterator[T]) -> Iterator[T]:
        """Iterates an async iterator on the loop; closing the iterator closes it there."""
        try:
            while True:
                try:
                    item = self.run(_anext(agen))
                except StopAsyncIteration:
                    return
                yield item
        finally:
            aclose = getattr(agen, "aclose", None)
            if aclose is not None and self.loop.is_running():
                self.run(aclose())

    def stop(self) -> None:
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(10)
        if not self.loop.is_running():
            self.loop.close()


class Client:
    """The blocking twin of :class:`parkway.AsyncClient`: same arguments, same methods, results
    and errors; each call blocks until done. Close it (or use ``with``) to stop its loop thread."""

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
        # Checked here so that a bad combination raises before the loop thread starts.
        credentials = channel_credentials(
            credentials, root_certificates, certificate_chain, private_key
        )
        self._loop = _LoopThread()

        async def make() -> AsyncClient:  # the aio channel must be created on its loop
            return AsyncClient(
                target,
                token,
                credentials,
                timeout,
                options=options,
                reconnect=reconnect,
                keepalive=keepalive,
                call_metadata=call_metadata,
            )

        #: The asyncio client this one drives (use it only on :attr:`loop`).
        self.aio = self._loop.run(make())
        self._reconnect = reconnect or ReconnectPolicy()
        # The attached sessions' streams use a blocking channel of their own (same target,
        # credentials and options); it connects on the first attach.
        options = self.aio.channel_options
        self._channel = (
            grpc.secure_channel(target, credentials, options)
            if credentials is not None
            else grpc.insecure_channel(target, options)
        )
        stub: Any = agent_service_pb2_grpc.AgentServiceStub(self._channel)  # type: ignore[no-untyped-call]
        self._chat: Callable[..., Any] = stub.Chat
        self._sessions: weakref.WeakSet[Session] = weakref.WeakSet()
        self._closed = False

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The event loop the client runs on (for ``asyncio.run_coroutine_threadsafe``)."""
        return self._loop.loop

    @property
    def target(self) -> str:
        return self.aio.target

    @property
    def timeout(self) -> float:
        return self.aio.timeout

    def create_session(
        self,
        agent_id: str,
        *,
        external_tools: Iterable[agent_service_pb2.ExternalTool | Mapping[str, Any]] = (),
        permission_mode: inputs.PermissionModeName | int | None = None,
        working_directories: Iterable[str] = (),
        metadata: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> agent_service_pb2.Session:
        """See :meth:`AsyncClient.create_session`."""
        return self._loop.run(
            self.aio.create_session(
                agent_id,
                external_tools=external_tools,
                permission_mode=permission_mode,
                working_directories=working_directories,
                metadata=metadata,
                timeout=timeout,
            )
        )

    def get_session(
        self, session_id: str, *, timeout: float | None = None
    ) -> agent_service_pb2.Session:
        """See :meth:`AsyncClient.get_session`."""
        return self._loop.run(self.aio.get_session(session_id, timeout=timeout))

    def send(
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
        """See :meth:`AsyncClient.send`."""
        return self._loop.run(
            self.aio.send(
                session_id,
                message,
                confirm=confirm,
                results=results,
                interrupt=interrupt,
                reply_id=reply_id,
                request_id=request_id,
                timeout=timeout,
            )
        )

    def watch(self, session_id: str, after_seq: int = 0) -> Iterator[events_pb2.ServerEvent]:
        """See :meth:`AsyncClient.watch`: iterates until the loop stops (close the iterator to
        end the stream). Closing it early cancels the call, and each cancel counts against the
        server's rate limit on stream resets (see :data:`parkway.session_core.CLOSE_GRACE_S`)."""
        return self._loop.iterate(self.aio.watch(session_id, after_seq))

    def list_messages(
        self,
        session_id: str,
        *,
        page_size: int = 0,
        page_token: str = "",
        timeout: float | None = None,
    ) -> agent_service_pb2.ListMessagesResponse:
        """See :meth:`AsyncClient.list_messages`."""
        return self._loop.run(
            self.aio.list_messages(
                session_id, page_size=page_size, page_token=page_token, timeout=timeout
            )
        )

    def list_sessions(
        self,
        *,
        status: SessionStatusName | int | None = None,
        agent_id: str = "",
        page_size: int = 0,
        page_token: str = "",
        timeout: float | None = None,
    ) -> agent_service_pb2.ListSessionsResponse:
        """See :meth:`AsyncClient.list_sessions`."""
        return self._loop.run(
            self.aio.list_sessions(
                status=status,
                agent_id=agent_id,
                page_size=page_size,
                page_token=page_token,
                timeout=timeout,
            )
        )

    def delete_session(self, session_id: str, *, timeout: float | None = None) -> None:
        """See :meth:`AsyncClient.delete_session`."""
        self._loop.run(self.aio.delete_session(session_id, timeout=timeout))

    def list_agents(self, *, timeout: float | None = None) -> list[agent_service_pb2.Agent]:
        """See :meth:`AsyncClient.list_agents`."""
        return self._loop.run(self.aio.list_agents(timeout=timeout))

    def list_rules(
        self,
        session_id: str = "",
        *,
        agent_id: str = "",
        scope: inputs.ScopeName | int | None = None,
        timeout: float | None = None,
    ) -> list[permission_pb2.PermissionRule]:
        """See :meth:`AsyncClient.list_rules`."""
        return self._loop.run(
            self.aio.list_rules(session_id, agent_id=agent_id, scope=scope, timeout=timeout)
        )

    def list_audit_records(
        self,
        session_id: str = "",
        *,
        tool_call_id: str = "",
        page_size: int = 0,
        page_token: str = "",
        timeout: float | None = None,
    ) -> audit_pb2.ListAuditRecordsResponse:
        """See :meth:`AsyncClient.list_audit_records`."""
        return self._loop.run(
            self.aio.list_audit_records(
                session_id,
                tool_call_id=tool_call_id,
                page_size=page_size,
                page_token=page_token,
                timeout=timeout,
            )
        )

    def list_dead_letters(
        self, *, page_size: int = 0, page_token: str = "", timeout: float | None = None
    ) -> audit_pb2.ListDeadLettersResponse:
        """See :meth:`AsyncClient.list_dead_letters`."""
        return self._loop.run(
            self.aio.list_dead_letters(page_size=page_size, page_token=page_token, timeout=timeout)
        )

    def reply(
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
        """See :meth:`AsyncClient.reply`."""
        return self._loop.run(
            self.aio.reply(
                session_id,
                message,
                confirm=confirm,
                results=results,
                interrupt=interrupt,
                reply_id=reply_id,
                request_id=request_id,
                timeout=timeout,
            )
        )

    def attach(
        self,
        session_id: str,
        after_seq: int = 0,
        *,
        reconnect: ReconnectPolicy | None = None,
        timeout: float | None = None,
    ) -> Session:
        """See :meth:`AsyncClient.attach`."""
        session = Session(
            self,
            session_id,
            after_seq=after_seq,
            reconnect=reconnect or self._reconnect,
            timeout=self.aio.timeout if timeout is None else timeout,
        )
        session._start()
        self._sessions.add(session)
        return session

    def close(self) -> None:
        """Closes the sessions, the channels and the loop thread. Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            close_sessions(list(self._sessions))
            self._channel.close()
            self._loop.run(self.aio.close())
        finally:
            self._loop.stop()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
