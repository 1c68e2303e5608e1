"""The reading side of :class:`parkway.AsyncSession`: who reads its ``Chat`` stream, when, and what
becomes of what is read.

The session's reader task reads the stream: it queues the events for the consumer, settles the
inputs' acknowledgements and, when the stream breaks, re-attaches (per the session's
:class:`ReconnectPolicy`) or ends the session. While a task iterates the events without a timeout,
the reader task leaves the reading to it (that task reads the call itself, see
:mod:`parkway.session_events`) and takes the reading back once that iteration ends, while it stops
reading for a while (noticed by :mod:`parkway.idle_watch`), while an input waits for its
acknowledgement, and when the stream broke.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from typing import Any, cast

import grpc

from parkway.errors import (
    Cancelled,
    Internal,
    ParkwayError,
    Unavailable,
    from_rpc_error,
    from_rpc_status,
)
from parkway.events import Event
from parkway.idle_watch import IdleWatch
from parkway.session_attach import SessionAttach
from parkway.session_core import End, reconnectable, unacknowledged
from parkway.v1 import events_pb2

__all__ = ["SessionReader"]

log = logging.getLogger("parkway")

# A read in next_event was cancelled with its task (grpc cancels the call with a pending read).
_LOCAL_CANCEL = object()
# How long the task iterating the events may leave the call unread (between two of its reads)
# before the reader task takes the reading back (after one to two periods).
_DIRECT_IDLE_S = 0.05
_IDLE_WATCH = IdleWatch(_DIRECT_IDLE_S)


def _cancelling() -> bool | None:
    """Whether the current task is being cancelled; None on Python 3.10, which cannot tell."""
    task = asyncio.current_task()
    cancelling = getattr(task, "cancelling", None)
    return None if cancelling is None else bool(cancelling())


class SessionReader(SessionAttach):
    """The reader task, the hand-over of the reading to the task iterating the events and back,
    and the delivery of what is read (events queued, inputs acknowledged, the end)."""

    # The session's state used here (set and described in AsyncSession.__init__).
    _unread: deque[Event]
    _end: End | None
    _waiters: list[asyncio.Future[None]]
    _acks: dict[str, tuple[events_pb2.ClientEvent, asyncio.Future[None]]]
    _call: grpc.aio.StreamStreamCall[Any, Any] | None
    _ready: asyncio.Event
    _closed: bool
    _loop: asyncio.AbstractEventLoop | None
    _direct: bool
    _direct_reading: bool
    _direct_reads: int
    _want_direct: int
    _broken: object
    _parked: asyncio.Future[None] | None

    # ---- the reader task ----

    async def _run_reader(self) -> None:
        """Runs the read loop; whatever way it ends, the consumer is told (never left waiting)."""
        try:
            await self._read_loop()
        except asyncio.CancelledError:
            if not self._closed:  # the call or the channel was cancelled underneath us
                self._fail_acks(Cancelled("the stream was cancelled"))
                self._finish(Cancelled("the stream was cancelled"))
            raise
        except Exception as err:  # a bug must not hang the consumer: surface it
            log.exception("parkway: session %s reader failed", self._id)
            failure = Internal(f"the client's stream reader failed: {err!r}")
            self._fail_acks(failure)
            self._finish(failure)

    async def _read_loop(self) -> None:
        while True:
            broken = self._broken
            if broken is None:
                if self._want_direct and not self._direct and not self._closed:
                    # A reader waits in next_event: leave the reading to it.
                    self._set_direct()
                    self._wake()
                if self._direct:
                    await self._park()
                    continue
                call = self._call
                assert call is not None
                try:
                    message = await call.read()
                except grpc.aio.AioRpcError as err:
                    broken = err
                else:
                    if message is not grpc.aio.EOF:
                        if not self._closed:  # else close() waits for the call's end
                            self._dispatch(cast(events_pb2.ServerEvent, message))
                        continue
                    broken = grpc.aio.EOF
            self._broken = None
            if self._closed:
                return  # the call's end after close(), whatever it was
            if isinstance(broken, BaseException) and not isinstance(broken, grpc.aio.AioRpcError):
                # A read in next_event found the call cancelled underneath (or failed otherwise):
                # as if the reader task's own read had raised it.
                raise broken
            self._ready.clear()
            if broken is _LOCAL_CANCEL:
                # A task reading in next_event was cancelled, and grpc cancelled the call with
                # its read: attach again at once (the missed events come replayed).
                log.debug("parkway: session %s: read cancelled; re-attaching", self._id)
                try:
                    call = await self._attach(self._timeout, wait_for_ready=True)
                except ParkwayError as err:
                    if not (self._policy.enabled and reconnectable(err)):
                        self._fail_acks(unacknowledged(err))
                        self._finish(err)
                        return
                    try:
                        call = await self._reattach(err)
                    except ParkwayError as final:
                        self._fail_acks(unacknowledged(final))
                        self._finish(final)
                        return
                    self._core.reconnects += 1
            else:
                error = from_rpc_error(broken) if isinstance(broken, grpc.aio.AioRpcError) else None
                if error is None:
                    # The server ended the stream without an error: nothing more will come.
                    self._fail_acks(Unavailable("the server ended the stream"))
                    self._finish(None)
                    return
                if not (self._policy.enabled and reconnectable(error)):
                    self._fail_acks(unacknowledged(error))
                    self._finish(error)
                    return
                log.info("parkway: session %s stream broke (%s); reconnecting", self._id, error)
                try:
                    call = await self._reattach(error)
                except ParkwayError as final:
                    self._fail_acks(unacknowledged(final))
                    self._finish(final)
                    return
                self._core.reconnects += 1
            self._call = call
            # Inputs the old stream did not acknowledge go out again with their request ids: the
            # server applies an input once per request id and acknowledges a repeat as applied.
            for message, _ in list(self._acks.values()):
                try:
                    await call.write(message)
                except (grpc.aio.AioRpcError, asyncio.InvalidStateError, grpc.aio.UsageError):
                    break  # broke again: the read below fails and the next re-attach resends
            self._ready.set()

    # ---- who reads ----

    def _set_direct(self) -> None:
        """Leaves the reading to next_event (the reader task parks) and starts watching whether it
        goes on reading."""
        self._direct = True
        self._direct_reads += 1
        assert self._loop is not None
        _IDLE_WATCH.watch(self, self._loop)

    def _read_mark(self) -> int | None:
        """For _IDLE_WATCH (on its thread): None while next_event reads, else the reads so far
        (read before the flag, which a read sets first: a read starting in between shows)."""
        reads = self._direct_reads
        return None if self._direct_reading else reads

    def _on_idle(self, mark: int) -> None:
        """From _IDLE_WATCH: next_event started no read for a while (since ``mark``). The reader
        task takes the reading back (the events keep coming in, an input's acknowledgement or a
        broken stream is noticed while nobody iterates), unless a read started meanwhile."""
        if not self._direct:
            return
        if self._direct_reading or self._direct_reads != mark:
            assert self._loop is not None
            _IDLE_WATCH.watch(self, self._loop)
            return
        self._end_direct()

    def _end_direct(self) -> None:
        """The reader task takes the reading back (no read in next_event is in progress)."""
        self._direct = False
        _IDLE_WATCH.unwatch(self)
        parked = self._parked
        if parked is not None and not parked.done():
            parked.set_result(None)

    async def _park(self) -> None:
        assert self._loop is not None
        parked = self._parked = self._loop.create_future()
        try:
            await parked
        finally:
            self._parked = None

    def _read_failed(self, err: BaseException) -> None:
        """A read in next_event raised ``err``: the stream is over (re-raises a cancellation of
        the task, and what is not the call's)."""
        if isinstance(err, grpc.aio.AioRpcError):
            self._broke(err)
            return
        if not isinstance(err, asyncio.CancelledError):
            self._broke(err)  # not the call's end: the reader task fails the session with it
            return
        cancelling = _cancelling()
        if cancelling is None:  # Python 3.10: a closed session's call, else the task
            cancelling = not self._closed
        if cancelling:
            # grpc cancelled the call with the read: the reader task attaches again (unless the
            # session is closed).
            self._broke(_LOCAL_CANCEL)
            raise err
        # The call was cancelled underneath (the session ends Cancelled), or by close().
        self._broke(err)

    def _after_direct_read(self) -> None:
        """After next_event read an event: other readers are woken (one may read on), and the
        reader task reads while an input waits for its acknowledgement."""
        self._wake()
        if self._acks:
            self._end_direct()

    def _broke(self, how: object) -> None:
        """A read in next_event ended the stream: the reader task takes it from here (once the
        session is closed, it ends there)."""
        self._broken = how
        self._end_direct()

    # ---- what is read ----

    def _accept(self, message: events_pb2.ServerEvent) -> Event | None:
        """The event to deliver for a received message; None for an input_ack (it settles the
        input's future) and for a message the core drops."""
        kind = message.WhichOneof("event")
        if kind == "input_ack":
            ack = message.input_ack
            entry = self._acks.pop(ack.request_id, None)
            future = entry[1] if entry is not None else None
            if future is not None and not future.done():
                if ack.status.code == 0:
                    future.set_result(None)
                else:
                    future.set_exception(from_rpc_status(ack.status))
            return None
        return self._core.accept(message, kind)

    def _dispatch(self, message: events_pb2.ServerEvent) -> None:
        event = self._accept(message)
        if event is None:
            return
        self._unread.append(event)
        if self._waiters:
            self._wake()

    def _wake(self) -> None:
        """Wakes the readers waiting for an event (on the loop)."""
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def _fail_acks(self, error: ParkwayError) -> None:
        acks, self._acks = self._acks, {}
        for _, future in acks.values():
            if not future.done():
                future.set_exception(error)

    def _finish(self, error: ParkwayError | None) -> None:
        if self._end is None:
            self._end = End(error)
            self._wake()
            # Inputs waiting for a stream stop waiting: they raise the end (``Cancelled`` once
            # closed), not ``DeadlineExceeded`` when their timeout is up.
            self._ready.set()
