"""The blocking session: a ``Chat`` stream over grpcio's blocking API, with automatic reconnect.

It keeps the same state and makes the same decisions as :class:`parkway.AsyncSession` (both use
:class:`parkway.session_core.SessionCore`); only the I/O differs: the stream is read on the
caller's thread (see :mod:`parkway.sync_reader`) and re-attached by the thread that read it break.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from parkway import inputs
from parkway.chat_stream import ChatStream, open_attached
from parkway.errors import Cancelled, DeadlineExceeded, ParkwayError, Unavailable
from parkway.events import Event
from parkway.session_core import (
    CLOSE_GRACE_S,
    Reattach,
    ReconnectPolicy,
    SessionCore,
    reconnectable,
    unacknowledged,
)
from parkway.sync_reader import Ack, Reader
from parkway.v1 import content_pb2, events_pb2

if TYPE_CHECKING:
    from parkway.sync import Client

__all__ = ["Session", "close_sessions"]

log = logging.getLogger("parkway")


def close_sessions(sessions: Iterable[Session]) -> None:
    """Closes ``sessions`` (see :meth:`Session.close`) together: every stream is half-closed
    first, then each is waited for within one grace period (:data:`CLOSE_GRACE_S` in all) and
    cancelled if it is still running then."""
    streams = [stream for session in sessions if (stream := session._shut()) is not None]
    deadline = time.monotonic() + CLOSE_GRACE_S
    for stream in streams:
        if not stream.wait_ended(deadline - time.monotonic()):
            stream.close()


class Session:
    """The blocking twin of :class:`parkway.AsyncSession` (same semantics, same reconnect and
    de-duplication); obtain it with :meth:`Client.attach`. It may be used from any thread, one
    call at a time."""

    def __init__(
        self,
        client: Client,
        session_id: str,
        *,
        after_seq: int = 0,
        reconnect: ReconnectPolicy | None = None,
        timeout: float,
    ) -> None:
        self._client = client
        self._core = SessionCore(session_id, after_seq)
        self._policy = reconnect or ReconnectPolicy()
        self._timeout = timeout
        self._reader = Reader(self._core, self._broke)
        self._closed = False
        self._stop = threading.Event()  # set by close(): cuts a re-attach's backoff short

    @property
    def id(self) -> str:
        """The session's id."""
        return self._core.id

    @property
    def last_seq(self) -> int:
        """See :attr:`AsyncSession.last_seq`."""
        return self._core.last_seq

    @property
    def pending(self) -> Mapping[str, content_pb2.ToolCallBlock]:
        """See :attr:`AsyncSession.pending`."""
        return self._core.pending

    @property
    def reconnects(self) -> int:
        """See :attr:`AsyncSession.reconnects`."""
        return self._core.reconnects

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._closed

    # ---- lifecycle ----

    def _open(self, timeout: float, wait_for_ready: bool) -> ChatStream:
        client = self._client
        return open_attached(
            client._chat, client.aio.metadata(), self._core, timeout, wait_for_ready=wait_for_ready
        )

    def _start(self) -> None:
        """Attaches (once, without retries); raises the attach error."""
        stream = self._open(self._timeout, False)
        with self._reader.cond:
            self._reader.set_stream(stream)

    def _broke(self, stream: ChatStream, error: ParkwayError | None) -> None:
        """The reader's ``on_break`` (lock held): re-attaches per the policy (the lock released
        meanwhile, the reading turn kept) or ends the session."""
        reader = self._reader
        stream.close()
        if self._closed:
            return
        reader.stream = None
        if error is None:
            # The server ended the stream without an error: nothing more will come.
            reader.fail_acks(Unavailable("the server ended the stream"))
            reader.finish(None)
            return
        if not (self._policy.enabled and reconnectable(error)):
            reader.fail_acks(unacknowledged(error))
            reader.finish(error)
            return
        log.info("parkway: session %s stream broke (%s); reconnecting", self.id, error)
        reader.cond.release()
        try:
            fresh = self._reattach(error)
        except ParkwayError as final:
            reader.cond.acquire()
            reader.fail_acks(unacknowledged(final))
            reader.finish(final)
            return
        except BaseException:
            reader.cond.acquire()
            reader.fail_acks(Cancelled("the session's re-attach was interrupted"))
            reader.finish(Cancelled("the session's re-attach was interrupted"))
            raise
        reader.cond.acquire()
        if self._closed:
            fresh.close()
            return
        self._core.reconnects += 1
        # Inputs the old stream did not acknowledge go out again with their request ids: the
        # server applies an input once per request id and acknowledges a repeat as applied.
        for entry in reader.acks.values():
            fresh.write(entry.message)
        reader.set_stream(fresh)

    def _reattach(self, error: ParkwayError) -> ChatStream:
        """Re-attaches with backoff per the policy; raises the last error when it gives up."""
        attempt = Reattach(self._policy, self.id, error)
        while True:
            if self._stop.wait(attempt.delay()):
                raise Cancelled("the session was closed")
            try:
                return self._open(attempt.attempt_timeout(self._timeout), True)
            except ParkwayError as err:
                if attempt.failed(err) == "lower":
                    try:
                        self._core.lower_last_seq(self._server_last_seq())
                    except ParkwayError as lookup:
                        attempt.last = lookup

    def _server_last_seq(self) -> int:
        session = self._client.get_session(self.id)
        log.warning(
            "parkway: session %s: the server's last seq is %d but this client saw %d; "
            "resuming from the server's",
            self.id,
            session.last_seq,
            self._core.last_seq,
        )
        return session.last_seq

    def close(self) -> None:
        """See :meth:`AsyncSession.close`: half-closes the stream and waits (blocking) up to
        :data:`parkway.session_core.CLOSE_GRACE_S` for the server to end it, then cancels it."""
        close_sessions((self,))

    def _shut(self) -> ChatStream | None:
        """The first half of :meth:`close`: marks the session closed (pending inputs fail, readers
        stop after the events received) and half-closes its stream, which it returns (None when
        there is none, or when the session was closed already) for the caller to end. A thread
        reading the stream sees its end (or CANCELLED), which ends its turn."""
        reader = self._reader
        with reader.cond:
            if self._closed:
                return None
            self._closed = True
            self._stop.set()
            stream = reader.stream
            reader.fail_acks(Cancelled("the session was closed"))
            reader.finish(None)
        if stream is not None:
            stream.half_close()
        return stream

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- reading ----

    def _next(self, deadline: float | None, timeout: float | None) -> Event | None:
        """The next event, waiting for it; None at the end of the stream (or raises its error)."""
        reader = self._reader
        with reader.lock:
            if deadline is None:
                event = reader.take()
                if event is not None:
                    return event
            elif not reader.wait(reader.has_news, deadline):
                raise DeadlineExceeded(f"no event within {timeout:g}s")
            elif reader.unread:
                return reader.unread.popleft()
            assert reader.end is not None
            if reader.end.error is not None:
                raise reader.end.error
            return None

    def next_event(self, timeout: float | None = None) -> Event | None:
        """See :meth:`AsyncSession.next_event`."""
        try:
            return self._reader.unread.popleft()
        except IndexError:
            pass
        return self._next(None if timeout is None else time.monotonic() + timeout, timeout)

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
        """The session's events, taken from its queue of received events (read from the stream
        on this thread when it is empty). An event is taken only when it is yielded: what the
        caller leaves unread stays first in line for the next read (any reader, in order)."""
        if send is not None:
            self.send_message(send, timeout=timeout)
        deadline = None if timeout is None else time.monotonic() + timeout
        unread = self._reader.unread
        while True:
            if unread:
                event = unread.popleft()
            else:
                got = self._next(deadline, timeout)
                if got is None:
                    return
                event = got
            yield event
            if settle and event.settles:
                return

    # ---- inputs ----

    def send_input(self, event: events_pb2.ClientEvent, *, timeout: float | None = None) -> None:
        """See :meth:`AsyncSession.send_input`."""
        wait = self._timeout if timeout is None else timeout
        deadline = time.monotonic() + wait
        message = self._core.prepare(event)
        reader = self._reader
        with reader.cond:
            self._raise_if_over()
            if not reader.wait(reader.stream_ready, deadline):
                raise DeadlineExceeded(
                    f"session {self.id} did not reconnect within {wait:g}s; the input was not sent"
                )
            self._raise_if_over()
            assert reader.stream is not None
            entry = Ack(message)
            reader.acks[message.request_id] = entry
            reader.stream.write(message)  # if it broke meanwhile, the re-attach sends it again
            if not reader.wait(entry.is_done, deadline):
                reader.acks.pop(message.request_id, None)
                raise DeadlineExceeded(
                    f"the server did not acknowledge the input within {wait:g}s; "
                    "it may or may not have been applied"
                )
        if entry.error is not None:
            raise entry.error

    def _raise_if_over(self) -> None:
        if self._closed:
            raise Cancelled("the session was closed")
        end = self._reader.end
        if end is not None:
            if end.error is not None:
                raise end.error
            raise Unavailable("the server ended the stream")

    def send_message(self, text: str, *, timeout: float | None = None) -> None:
        """See :meth:`AsyncSession.send_message`."""
        self.send_input(self._core.message(text), timeout=timeout)

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
        self.send_input(self._core.confirm(call, rule, edited_input, scope), timeout=timeout)

    def deny(self, call: inputs.CallRef, reason: str = "", *, timeout: float | None = None) -> None:
        """See :meth:`AsyncSession.deny`."""
        self.send_input(self._core.deny(call, reason), timeout=timeout)

    def confirm_all(
        self,
        results: Iterable[events_pb2.ConfirmResult],
        *,
        reply_id: str = "",
        timeout: float | None = None,
    ) -> None:
        """See :meth:`AsyncSession.confirm_all`."""
        self.send_input(self._core.confirm_all(results, reply_id), timeout=timeout)

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
        self.send_input(self._core.submit_result(call, output, state, metadata), timeout=timeout)

    def answer(
        self, call: inputs.CallRef, answers: inputs.Answers, *, timeout: float | None = None
    ) -> None:
        """See :meth:`AsyncSession.answer`."""
        self.send_input(self._core.answer(call, answers), timeout=timeout)

    def submit_results(
        self,
        results: Iterable[content_pb2.ToolResultBlock],
        *,
        reply_id: str = "",
        timeout: float | None = None,
    ) -> None:
        """See :meth:`AsyncSession.submit_results`."""
        self.send_input(self._core.submit_results(results, reply_id), timeout=timeout)

    def interrupt(self, reply_id: str = "", *, timeout: float | None = None) -> None:
        """See :meth:`AsyncSession.interrupt`."""
        self.send_input(self._core.interrupt(reply_id), timeout=timeout)
