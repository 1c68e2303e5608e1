"""The blocking Parkway client: the asyncio client run on a private event loop thread.

Every method runs the matching :class:`parkway.AsyncClient` / :class:`parkway.AsyncSession` method
on that loop and waits for it, so the two clients share one implementation (deadlines, error
decoding, reconnect, de-duplication) and cannot drift apart; only the signatures are repeated here.
The blocking objects may be used from any thread, one call at a time per session.
"""

from __future__ import annotations

import asyncio
import threading
import time
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
from typing import Any, Literal, TypeVar

import grpc

from parkway import inputs
from parkway.client import AsyncClient, SessionStatusName
from parkway.credentials import channel_credentials
from parkway.errors import DeadlineExceeded
from parkway.events import Event
from parkway.keepalive import Keepalive
from parkway.session import AsyncSession, ReconnectPolicy
from parkway.v1 import agent_service_pb2, audit_pb2, content_pb2, events_pb2, permission_pb2

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


class Session:
    """The blocking twin of :class:`parkway.AsyncSession` (same semantics, same reconnect and
    de-duplication); obtain it with :meth:`Client.attach`."""

    def __init__(self, loop: _LoopThread, session: AsyncSession) -> None:
        self._loop = loop
        #: The asyncio session this one drives.
        self.aio = session

    @property
    def id(self) -> str:
        return self.aio.id

    @property
    def last_seq(self) -> int:
        return self.aio.last_seq

    @property
    def pending(self) -> Mapping[str, content_pb2.ToolCallBlock]:
        return self.aio.pending

    @property
    def reconnects(self) -> int:
        return self.aio.reconnects

    @property
    def closed(self) -> bool:
        return self.aio.closed

    def next_event(self, timeout: float | None = None) -> Event | None:
        """See :meth:`AsyncSession.next_event`."""
        return self._loop.run(self.aio.next_event(timeout))

    def events(self) -> Iterator[Event]:
        """See :meth:`AsyncSession.events`."""
        return self._iterate(None, settle=False)

    def until_settled(self, timeout: float | None = None) -> Iterator[Event]:
        """See :meth:`AsyncSession.until_settled`."""
        return self._iterate(timeout, settle=True)

    def send(self, text: str, *, timeout: float | None = None) -> Iterator[Event]:
        """See :meth:`AsyncSession.send`: sends when iteration starts, yields until the reply
        finishes or parks."""
        return self._iterate(timeout, settle=True, send=text)

    def _iterate(
        self, timeout: float | None, *, settle: bool, send: str | None = None
    ) -> Iterator[Event]:
        """The session's events, taken on this thread from the session's deque of received events
        (appends and pops are atomic), without a call on the loop per event: this thread sleeps on
        a lock that the session's reader releases when the next event arrives, and then takes every
        event received so far. An event is taken only when it is yielded: what the caller leaves
        unread stays first in line for the next read (any reader, in order)."""
        aio = self.aio
        if send is not None:
            self._loop.run(aio.send_message(send, timeout=timeout))
        deadline = None if timeout is None else time.monotonic() + timeout
        unread = aio._unread
        while True:
            try:
                event = unread.popleft()
            except IndexError:
                if aio._end is not None:
                    if aio._end.error is not None:
                        raise aio._end.error from None
                    return
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                if not aio._wait_in_thread(left):
                    raise DeadlineExceeded(f"no event within {timeout:g}s") from None
                continue
            yield event
            if settle and event.settles:
                return

    def send_input(self, event: events_pb2.ClientEvent, *, timeout: float | None = None) -> None:
        """See :meth:`AsyncSession.send_input`."""
        self._loop.run(self.aio.send_input(event, timeout=timeout))

    def send_message(self, text: str, *, timeout: float | None = None) -> None:
        """See :meth:`AsyncSession.send_message`."""
        self._loop.run(self.aio.send_message(text, timeout=timeout))

    def confirm(
        self,
        call: inputs.CallRef,
        rule: Literal["suggested"] | inputs.RuleSpec | Sequence[inputs.RuleSpec] | None = None,
        *,
        edited_input: Mapping[str, Any] | str | None = None,
        scope: inputs.ScopeName | int = "session",
        timeout: float | None = None,
    ) -> None:
        """See :meth:`AsyncSession.confirm`."""
        self._loop.run(
            self.aio.confirm(call, rule, edited_input=edited_input, scope=scope, timeout=timeout)
        )

    def deny(self, call: inputs.CallRef, reason: str = "", *, timeout: float | None = None) -> None:
        """See :meth:`AsyncSession.deny`."""
        self._loop.run(self.aio.deny(call, reason, timeout=timeout))

    def confirm_all(
        self,
        results: Iterable[events_pb2.ConfirmResult],
        *,
        reply_id: str = "",
        timeout: float | None = None,
    ) -> None:
        """See :meth:`AsyncSession.confirm_all`."""
        self._loop.run(self.aio.confirm_all(results, reply_id=reply_id, timeout=timeout))

    def submit_result(
        self,
        call: inputs.CallRef,
        output: str | Iterable[str | content_pb2.ToolOutputBlock | content_pb2.TextBlock] = "",
        state: inputs.ResultStateName | str | int = "success",
        metadata: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
    ) -> None:
        """See :meth:`AsyncSession.submit_result`."""
        self._loop.run(self.aio.submit_result(call, output, state, metadata, timeout=timeout))

    def answer(
        self, call: inputs.CallRef, answers: inputs.Answers, *, timeout: float | None = None
    ) -> None:
        """See :meth:`AsyncSession.answer`."""
        self._loop.run(self.aio.answer(call, answers, timeout=timeout))

    def submit_results(
        self,
        results: Iterable[content_pb2.ToolResultBlock],
        *,
        reply_id: str = "",
        timeout: float | None = None,
    ) -> None:
        """See :meth:`AsyncSession.submit_results`."""
        self._loop.run(self.aio.submit_results(results, reply_id=reply_id, timeout=timeout))

    def interrupt(self, reply_id: str = "", *, timeout: float | None = None) -> None:
        """See :meth:`AsyncSession.interrupt`."""
        self._loop.run(self.aio.interrupt(reply_id, timeout=timeout))

    def close(self) -> None:
        """See :meth:`AsyncSession.close`."""
        self._loop.run(self.aio.close())

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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
        end the stream)."""
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
        session = self._loop.run(
            self.aio.attach(session_id, after_seq, reconnect=reconnect, timeout=timeout)
        )
        return Session(self._loop, session)

    def close(self) -> None:
        """Closes the sessions, the channel and the loop thread. Idempotent."""
        if self._loop.loop.is_closed():
            return
        try:
            self._loop.run(self.aio.close())
        finally:
            self._loop.stop()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
