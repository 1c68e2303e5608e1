"""Consuming an :class:`parkway.AsyncSession`'s events: ``next_event`` and the iterators ``events``,
``until_settled`` and ``send``.

They take the events the reader task queued or, with nothing queued and the reading left to them
(no timeout, see :mod:`parkway.session_reader`), read the stream themselves, as a caller of the
raw stub would. This is the client's per-event path: the iterators have that read inlined (one
generator and no coroutine per event).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import grpc

from parkway.errors import DeadlineExceeded
from parkway.events import _SETTLING_KINDS, Event
from parkway.session_core import _PLAIN_KINDS, End
from parkway.session_inputs import SessionInputs

__all__ = ["SessionEvents"]

_EOF = grpc.aio.EOF


class SessionEvents(SessionInputs):
    """Delivers the session's events to its consumer (one consumer at a time)."""

    async def next_event(self, timeout: float | None = None) -> Event | None:
        """The next event; None once the session is closed or the server ended the stream.
        Raises the error that ended the stream, or ``DeadlineExceeded`` after ``timeout`` seconds."""
        unread = self._unread
        deadline: float | None = None
        while True:
            if unread:
                return unread.popleft()
            if self._end is not None:
                return self._result_of(self._end)
            if timeout is None and self._direct and not self._direct_reading:
                # Nothing unread and the reading left to us: read the call here.
                call = self._call
                assert call is not None
                self._direct_reading = True
                self._direct_reads += 1
                try:
                    message: Any = await call.read()  # a ServerEvent or grpc.aio.EOF
                except (Exception, asyncio.CancelledError) as err:
                    self._direct_reading = False
                    self._read_failed(err)
                    continue
                self._direct_reading = False
                if message is _EOF:
                    self._broke(_EOF)
                    continue
                if self._closed:
                    self._end_direct()  # close() waits for the reader task to read to the end
                    continue
                event = self._accept(message)
                if event is None:
                    continue
                if self._waiters or self._acks:
                    self._after_direct_read()
                return event
            if timeout is not None and deadline is None:
                deadline = time.monotonic() + timeout
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            if deadline is None:
                self._want_direct += 1
                try:
                    await waiter
                finally:
                    self._want_direct -= 1
                continue
            if self._direct and not self._direct_reading:
                self._end_direct()  # the reader task reads for a reader with a deadline
            try:
                await asyncio.wait_for(waiter, max(0.0, deadline - time.monotonic()))
            except asyncio.TimeoutError:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
                if unread or self._end is not None:
                    continue  # it came just as the time ran out
                raise DeadlineExceeded(f"no event within {timeout:g}s") from None

    @staticmethod
    def _result_of(end: End) -> None:
        if end.error is not None:
            raise end.error
        return None

    def events(self) -> AsyncIterator[Event]:
        """Every event, as it arrives, until the session is closed (then the iterator ends) or the
        stream fails for good (then it raises)."""
        return self._iterate(None, False, None)

    def until_settled(self, timeout: float | None = None) -> AsyncIterator[Event]:
        """Events up to and including the next REPLY_END (the reply finished) or REPLY_PARKED (it
        waits for answers announced by the REQUIRE_* events before it).

        Args:
            timeout: overall seconds to wait; ``DeadlineExceeded`` is raised when they pass.
        """
        return self._iterate(timeout, True, None)

    def send(self, text: str, *, timeout: float | None = None) -> AsyncIterator[Event]:
        """Sends a user message and yields the reply's events until it finishes (REPLY_END) or
        parks (REPLY_PARKED). The message is sent when iteration starts; a refusal (e.g.
        ``FailedPrecondition`` while a reply is parked) is raised by the first step.

        Args:
            timeout: seconds for the acknowledgement, and then overall for the events.
        """
        return self._iterate(timeout, True, text)

    async def _iterate(
        self, timeout: float | None, until_settled: bool, text: str | None
    ) -> AsyncIterator[Event]:
        """events(), until_settled() and send() (text: the message sent first). next_event's
        reading inlined: one generator and no coroutine per event."""
        if text is not None:
            await self.send_message(text, timeout=timeout)
        deadline = None if timeout is None else time.monotonic() + timeout
        unread = self._unread
        core = self._core
        try:
            while True:
                if unread:
                    event: Event = unread.popleft()
                elif (
                    deadline is None
                    and self._direct
                    and not self._direct_reading
                    and self._end is None
                ):
                    # next_event's direct read (see there), the common case of its _accept inlined.
                    call = self._call
                    assert call is not None
                    self._direct_reading = True
                    self._direct_reads += 1
                    try:
                        message: Any = await call.read()  # a ServerEvent or grpc.aio.EOF
                    except (Exception, asyncio.CancelledError) as err:
                        self._direct_reading = False
                        self._read_failed(err)
                        continue
                    self._direct_reading = False
                    if message is _EOF:
                        self._broke(_EOF)
                        continue
                    if self._closed:
                        self._end_direct()  # close() waits for the reader task to read to the end
                        continue
                    kind = message.WhichOneof("event")
                    if kind in _PLAIN_KINDS:  # what SessionCore.accept does for them
                        seq = message.seq
                        if seq:
                            if seq <= core.last_seq:
                                continue
                            core.last_seq = seq
                        event = Event(message, kind)
                    else:
                        accepted = self._accept(message)
                        if accepted is None:
                            continue
                        event = accepted
                    if self._waiters or self._acks:
                        self._after_direct_read()
                else:
                    left = None if deadline is None else max(0.0, deadline - time.monotonic())
                    received = await self.next_event(left)
                    if received is None:
                        return
                    event = received
                yield event
                if until_settled and event.kind in _SETTLING_KINDS:
                    return
        finally:
            if self._direct and not self._direct_reading:
                # This iteration is over (finished, closed or dropped): nobody may read the
                # call for a while, so the reader task reads on.
                self._end_direct()
