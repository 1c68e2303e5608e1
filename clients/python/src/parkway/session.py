"""A Chat stream attached to one session, with automatic reconnect (asyncio).

:class:`AsyncSession` holds the session's state, and its lifecycle (attach, close); the rest comes
from the parts it is built from, each a base class of the next: :mod:`parkway.session_attach`
(opening the stream), :mod:`parkway.session_reader` (reading it, re-attaching after a break),
:mod:`parkway.session_inputs` (inputs and their acknowledgement) and
:mod:`parkway.session_events` (the events, to the consumer).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import grpc

from parkway.errors import Cancelled
from parkway.events import Event
from parkway.session_core import (
    CLOSE_GRACE_S,
    End,
    ReconnectPolicy,
    SessionCore,
    reconnectable,
)
from parkway.session_events import SessionEvents
from parkway.session_reader import _IDLE_WATCH
from parkway.v1 import content_pb2, events_pb2

if TYPE_CHECKING:
    from parkway.client import AsyncClient

__all__ = ["AsyncSession", "ReconnectPolicy"]

_reconnectable = reconnectable  # the name the tests and older imports use


class AsyncSession(SessionEvents):
    """One ``Chat`` stream attached to a session; obtain it with :meth:`AsyncClient.attach`.

    Events arrive in seq order and are consumed with :meth:`events`, :meth:`until_settled` or
    :meth:`send` (one consumer at a time: they share one queue). Inputs (``send_message``,
    ``confirm``, ``deny``, ``submit_result``, ``answer``, ``interrupt``, ...) return once the server
    has acknowledged them with an ``input_ack``, and raise :class:`parkway.ParkwayError` (e.g.
    ``FailedPrecondition``, ``InvalidArgument`` with field violations) when it refused them, in
    which case nothing changed on the server.

    Reconnect: when the stream breaks (see :class:`ReconnectPolicy`), the session re-attaches by
    itself with ``after_seq`` = :attr:`last_seq`; the server replays what was missed (those events
    carry ``replayed=True``), so the consumer sees every logged event exactly once. Events with a seq
    at or below :attr:`last_seq` are dropped as duplicates. After replay the server re-announces the
    REQUIRE_* events of a parked reply (seq 0, ``replayed=True``); this session **drops** a
    re-announced call it already delivered (same reply, same kind, same call id) and surfaces only
    calls it has not delivered, so a consumer is asked once per call. The same rule makes a fresh
    ``attach(id)`` from seq 0 show each pending call once (in the replayed history), while a fresh
    ``attach(id, after_seq=n)`` past the REQUIRE_* events surfaces the re-announcement: that is
    how a frontend that lost its state learns what is pending.

    Inputs sent while reconnecting wait for the new stream (within their timeout), and an input
    whose acknowledgement was lost in the break is sent again with the same ``request_id``: the
    server applies an input once per request id, so the helper still returns the input's real
    outcome.

    Reading: a task iterating the events without a timeout reads the stream itself, as a caller of
    the raw stub would; once its iteration ends, while it stops iterating for longer than a moment
    (50 to 100 ms), or while an input waits for its acknowledgement, the session's own reader task
    reads instead (so the events keep coming in and a broken stream is noticed). grpc cancels the
    stream when a task is cancelled in the middle of a read: the session then attaches again at
    once from :attr:`last_seq` (not counted in :attr:`reconnects`), and the missed events come
    replayed, each still delivered once.
    """

    def __init__(
        self,
        client: AsyncClient,
        session_id: str,
        *,
        after_seq: int = 0,
        reconnect: ReconnectPolicy | None = None,
        timeout: float,
    ) -> None:
        self._client = client
        self._id = session_id
        self._core = SessionCore(session_id, after_seq)
        self._policy = reconnect or ReconnectPolicy()
        self._timeout = timeout
        # Events received and not read yet, in order.
        self._unread: deque[Event] = deque()
        # Set once the stream ended for good: readers get it after the events received before.
        self._end: End | None = None
        # Readers waiting for the next event.
        self._waiters: list[asyncio.Future[None]] = []
        # Inputs written but not acknowledged yet, in order: resent after a re-attach.
        self._acks: dict[str, tuple[events_pb2.ClientEvent, asyncio.Future[None]]] = {}
        self._call: grpc.aio.StreamStreamCall[Any, Any] | None = None
        self._ready = asyncio.Event()
        self._closed = False
        self._reader: asyncio.Task[None] | None = None
        # Who reads the call (one read at a time). Normally the reader task (_read_loop): it puts
        # the events in _unread for next_event. While _direct is set, the task iterating the
        # events reads the call itself in next_event (as a caller of the raw stub would: no hand-off
        # per event) and the reader task waits; it takes over again when that task stops reading
        # for a while (_IDLE_WATCH, see parkway.idle_watch), an input waits for its acknowledgement,
        # or the stream broke.
        self._loop: asyncio.AbstractEventLoop | None = None
        self._direct = False
        # A read in next_event is in progress; how many have been started (a mark for _IDLE_WATCH,
        # also moved on by _set_direct).
        self._direct_reading = False
        self._direct_reads = 0
        # Readers waiting in next_event to read the call themselves.
        self._want_direct = 0
        # How a read in next_event ended the stream, for the reader task: grpc.aio.EOF, the
        # AioRpcError, a CancelledError (the call was cancelled underneath), or _LOCAL_CANCEL.
        self._broken: object = None
        # The reader task waits on this while next_event reads.
        self._parked: asyncio.Future[None] | None = None

    # ---- state ----

    @property
    def id(self) -> str:
        """The session's id."""
        return self._id

    @property
    def last_seq(self) -> int:
        """The seq of the last logged event received (the ``after_seq`` of the next re-attach)."""
        return self._core.last_seq

    @property
    def pending(self) -> Mapping[str, content_pb2.ToolCallBlock]:
        """Calls announced by REQUIRE_* events that have no result yet, by id, as this stream has
        seen them (the server's view is ``AsyncClient.get_session(...).pending_tool_calls``)."""
        return self._core.pending

    @property
    def reconnects(self) -> int:
        """How many times this session re-attached after a broken stream."""
        return self._core.reconnects

    @property
    def closed(self) -> bool:
        return self._closed

    # ---- lifecycle ----

    async def _start(self) -> None:
        """Attaches (once, without retries) and starts reading; raises the attach error."""
        self._call = await self._attach(self._timeout)
        self._ready.set()
        self._loop = asyncio.get_running_loop()
        self._reader = self._loop.create_task(
            self._run_reader(), name=f"parkway-session-{self._id}"
        )

    async def close(self) -> None:
        """Ends the stream. Pending inputs fail with ``Cancelled``; iterators stop after the events
        already received. Idempotent.

        The stream is half-closed, which the server ends at once (OK) when the session runs no
        reply; a stream still open after :data:`parkway.session_core.CLOSE_GRACE_S` (a reply is
        running) is cancelled, so close() takes up to that long. A cancel resets the stream, and
        servers limit how fast a client may reset streams (see there): closing by half-close lets
        a client close any number of sessions without losing its connection."""
        if self._closed:
            return
        attached = self._ready.is_set()  # not re-attaching: the call is the live stream
        self._closed = True
        self._ready.clear()
        self._fail_acks(Cancelled("the session was closed"))
        self._finish(None)
        call, reader = self._call, self._reader
        try:
            if attached and call is not None and reader is not None and not reader.done():
                if not self._direct_reading:
                    self._end_direct()  # the reader task reads the call to its end
                # else the read in next_event hands the reading over once it returns
                try:
                    await asyncio.wait_for(self._end_call(call, reader), CLOSE_GRACE_S)
                except asyncio.TimeoutError:
                    pass
        finally:
            self._direct = False
            _IDLE_WATCH.unwatch(self)
            if call is not None:
                call.cancel()  # a no-op once the call ended
            if reader is not None:
                reader.cancel()
                try:
                    await reader
                except (asyncio.CancelledError, Exception):
                    pass

    @staticmethod
    async def _end_call(
        call: grpc.aio.StreamStreamCall[Any, Any], reader: asyncio.Task[None]
    ) -> None:
        """Half-closes ``call`` and waits until the reader task has read it to its end (the
        server's status arrives once every message before it was read)."""
        try:
            await call.done_writing()
        except Exception:  # the call ended or failed meanwhile: the reader task sees it end
            pass
        await asyncio.wait((reader,))

    async def __aenter__(self) -> AsyncSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
