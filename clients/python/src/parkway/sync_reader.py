"""The reading side of the blocking :class:`parkway.Session`: who reads its ``Chat`` stream, when.

No reader thread runs by default. A caller that needs the next event or an acknowledgement and has
no deadline reads the stream itself, on its own thread, one response at a time (as a raw grpcio
stub is read: ``next(responses)``). A caller with a deadline cannot block in ``next()``: it waits on
a condition while a helper thread (a daemon, started then) reads; the helper reads on until a
caller without a deadline waits (which then reads itself) or the stream ends. One thread reads at a
time; what it reads is dispatched under the lock (events queued, inputs acknowledged) and the
waiters are woken. A stream that breaks is re-attached by the thread that read the break.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from typing import cast

from parkway.chat_stream import ChatStream
from parkway.errors import ParkwayError, from_rpc_status
from parkway.events import Event
from parkway.session_core import End, SessionCore
from parkway.v1 import events_pb2

__all__ = ["Ack", "Reader"]


class Ack:
    """An input written and not acknowledged yet."""

    __slots__ = ("done", "error", "message")

    def __init__(self, message: events_pb2.ClientEvent) -> None:
        self.message = message
        self.done = False
        self.error: ParkwayError | None = None

    def is_done(self) -> bool:
        """True once acknowledged or failed (see :attr:`error`)."""
        return self.done


class Reader:
    """The lock, the queue of received events and the pending acknowledgements of one blocking
    session, and the reading of its stream. Everything but :attr:`unread` is used with
    :attr:`cond` held; :attr:`unread` may be popped without it (deque pops are atomic)."""

    def __init__(
        self, core: SessionCore, on_break: Callable[[ChatStream, ParkwayError | None], None]
    ) -> None:
        self.core = core
        #: Held to change or read the state below (``with lock`` is the cheaper ``with cond``).
        self.lock = threading.Lock()
        #: The condition on :attr:`lock` that waiters wait on.
        self.cond = threading.Condition(self.lock)
        #: Events received and not read yet, in order.
        self.unread: deque[Event] = deque()
        #: Set once the stream ended for good: readers get it after the events received before.
        self.end: End | None = None
        #: Inputs written and not acknowledged yet, by request id, in order.
        self.acks: dict[str, Ack] = {}
        #: The attached stream; None before the attach and while re-attaching.
        self.stream: ChatStream | None = None
        # Called (lock held) with the stream and its error (None: ended with OK) when it ended.
        self._on_break = on_break
        self._reading = False  # a thread is reading the stream (or re-attaching it)
        self._waiting = 0  # threads in cond.wait()
        self._untimed = 0  # callers waiting without a deadline
        self._helping = False  # the helper thread runs

    def has_news(self) -> bool:
        """An event to read or the end of the stream."""
        return bool(self.unread) or self.end is not None

    def stream_ready(self) -> bool:
        """A stream to write on, or the end."""
        return self.stream is not None or self.end is not None

    def wait(self, ready: Callable[[], bool], deadline: float) -> bool:
        """With :attr:`cond` held: True once ``ready()``, False once ``deadline`` (a
        ``time.monotonic()`` value) has passed first. This thread does not read the stream (it
        could not stop at the deadline): the helper thread does, unless someone else reads."""
        while not ready():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            if not (self._helping or self._reading or self.stream is None):
                self._helping = True
                threading.Thread(
                    target=self._help, name="parkway-session-reader", daemon=True
                ).start()
            self._sleep(left)
        return True

    def take(self) -> Event | None:
        """With :attr:`cond` held, without a deadline: the next event, read from the stream on
        this thread when none was received and nobody else reads; None once the stream ended and
        every event was taken."""
        unread = self.unread
        self._untimed += 1
        try:
            while True:
                if unread:
                    return unread.popleft()
                if self.end is not None:
                    return None
                if self._reading or self.stream is None:
                    self._sleep(None)
                else:
                    self.read_one()
        finally:
            self._untimed -= 1

    def _sleep(self, timeout: float | None) -> None:
        self._waiting += 1
        try:
            self.cond.wait(timeout)
        finally:
            self._waiting -= 1

    def read_one(self) -> None:
        """With :attr:`cond` held and nobody reading: reads one response (the lock released
        meanwhile) and dispatches it, or hands the stream's end to ``on_break``."""
        stream = cast(ChatStream, self.stream)
        self._reading = True
        cond = self.cond
        cond.release()
        message: events_pb2.ServerEvent | None = None
        error: ParkwayError | None = None
        try:
            message = stream.read()
        except ParkwayError as err:
            error = err
        except BaseException:  # e.g. KeyboardInterrupt on the caller's thread: give the turn up
            cond.acquire()
            self._reading = False
            if self._waiting:
                cond.notify_all()
            raise
        cond.acquire()
        try:
            if message is None:
                self._on_break(stream, error)
            elif self.end is not None:
                pass  # the session was closed during the read: nothing more is delivered
            elif (kind := message.WhichOneof("event")) == "input_ack":
                self._acknowledge(message.input_ack)
            elif (event := self.core.accept(message, kind)) is not None:
                self.unread.append(event)
        finally:
            self._reading = False
            if self._waiting:
                cond.notify_all()

    def dispatch(self, message: events_pb2.ServerEvent) -> None:
        """With :attr:`cond` held: a received message: an acknowledgement settles its input, an
        event the session delivers is queued (as :meth:`read_one` does with what it reads)."""
        kind = message.WhichOneof("event")
        if kind == "input_ack":
            self._acknowledge(message.input_ack)
        elif (event := self.core.accept(message, kind)) is not None:
            self.unread.append(event)

    def _acknowledge(self, ack: events_pb2.InputAck) -> None:
        entry = self.acks.pop(ack.request_id, None)
        if entry is not None:
            if ack.status.code != 0:
                entry.error = from_rpc_status(ack.status)
            entry.done = True

    def fail_acks(self, error: ParkwayError) -> None:
        """Fails every input waiting for its acknowledgement with ``error``."""
        acks, self.acks = self.acks, {}
        for entry in acks.values():
            entry.error = error
            entry.done = True
        if self._waiting:
            self.cond.notify_all()

    def finish(self, error: ParkwayError | None) -> None:
        """Ends the stream for good (``error`` None: closed, or ended by the server with OK)."""
        if self.end is None:
            self.end = End(error)
        self.stream = None
        if self._waiting:
            self.cond.notify_all()

    def set_stream(self, stream: ChatStream) -> None:
        """The (re-)attached stream: inputs waiting for it go on."""
        self.stream = stream
        if self._waiting:
            self.cond.notify_all()

    def _help(self) -> None:
        """The helper thread: reads until a caller without a deadline waits or the stream ended."""
        with self.cond:
            try:
                while self.end is None and not self._untimed:
                    if self._reading or self.stream is None:
                        self._sleep(None)
                    else:
                        self.read_one()
            finally:
                self._helping = False
