"""A Chat stream attached to one session, with automatic reconnect (asyncio)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

import grpc

from parkway import inputs
from parkway.errors import (
    Cancelled,
    DeadlineExceeded,
    Internal,
    ParkwayError,
    Unavailable,
    from_rpc_error,
    from_rpc_status,
)
from parkway.events import EVENT_KINDS, Event
from parkway.idle_watch import IdleWatch
from parkway.session_core import (
    _STATE_KINDS,
    CLOSE_GRACE_S,
    End,
    Reattach,
    ReconnectPolicy,
    SessionCore,
    reconnectable,
    unacknowledged,
)
from parkway.v1 import content_pb2, events_pb2

if TYPE_CHECKING:
    from parkway.client import AsyncClient

__all__ = ["AsyncSession", "ReconnectPolicy"]

log = logging.getLogger("parkway")

# The events SessionCore.accept passes as they are, with no state to update.
_PLAIN_KINDS = EVENT_KINDS - _STATE_KINDS
_SETTLING_KINDS = frozenset(("reply_end", "reply_parked"))
# A read in next_event was cancelled with its task (grpc cancels the call with a pending read).
_LOCAL_CANCEL = object()
_EOF = grpc.aio.EOF
# How long the task iterating the events may leave the call unread (between two of its reads)
# before the reader task takes the reading back (after one to two periods).
_DIRECT_IDLE_S = 0.05
_IDLE_WATCH = IdleWatch(_DIRECT_IDLE_S)


def _cancelling() -> bool | None:
    """Whether the current task is being cancelled; None on Python 3.10, which cannot tell."""
    task = asyncio.current_task()
    cancelling = getattr(task, "cancelling", None)
    return None if cancelling is None else bool(cancelling())


_reconnectable = reconnectable  # the name the tests and older imports use


class AsyncSession:
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

    async def _attach(
        self, timeout: float, *, wait_for_ready: bool = False
    ) -> grpc.aio.StreamStreamCall[Any, Any]:
        """Opens a Chat stream, sends attach with after_seq = last_seq, and waits for its ack.
        With `wait_for_ready`, a channel that is (re)connecting is waited for within `timeout`
        instead of failing at once."""
        call: grpc.aio.StreamStreamCall[Any, Any] = self._client.agent_service.Chat(
            metadata=self._client.metadata(), wait_for_ready=wait_for_ready
        )
        hello = self._core.hello()
        try:
            await asyncio.wait_for(self._attach_handshake(call, hello), timeout)
        except ParkwayError:
            call.cancel()
            raise
        except asyncio.TimeoutError:
            call.cancel()
            raise DeadlineExceeded(
                f"attach to {self._id} was not acknowledged within {timeout:g}s"
            ) from None
        except BaseException:
            call.cancel()
            raise
        return call

    @staticmethod
    async def _attach_handshake(
        call: grpc.aio.StreamStreamCall[Any, Any], hello: events_pb2.ClientEvent
    ) -> None:
        try:
            await call.write(hello)
            first = await call.read()
        except grpc.aio.AioRpcError as err:
            raise from_rpc_error(err) from None
        SessionCore.check_attached(hello, None if first is grpc.aio.EOF else first)

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

    # ---- reading ----

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

    async def _reattach(self, error: ParkwayError) -> grpc.aio.StreamStreamCall[Any, Any]:
        """Re-attaches with backoff per the policy; raises the last error when it gives up."""
        attempt = Reattach(self._policy, self._id, error)
        while True:
            await asyncio.sleep(attempt.delay())
            try:
                return await self._attach(
                    attempt.attempt_timeout(self._timeout), wait_for_ready=True
                )
            except ParkwayError as err:
                if attempt.failed(err) == "lower":
                    try:
                        self._core.lower_last_seq(await self._server_last_seq())
                    except ParkwayError as lookup:
                        attempt.last = lookup

    async def _server_last_seq(self) -> int:
        session = await self._client.get_session(self._id)
        log.warning(
            "parkway: session %s: the server's last seq is %d but this client saw %d; "
            "resuming from the server's",
            self._id,
            session.last_seq,
            self._core.last_seq,
        )
        return session.last_seq

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

    # ---- inputs ----

    async def send_input(
        self, event: events_pb2.ClientEvent, *, timeout: float | None = None
    ) -> None:
        """Sends one input (its ``session_id`` and ``request_id`` are filled in when empty) and
        waits for the server's acknowledgement; raises the refusal as a ``ParkwayError``.

        While the session re-attaches, the input waits for the new stream; an input the old stream
        did not acknowledge is sent again with the same ``request_id`` (the server applies it once).
        ``DeadlineExceeded`` after ``timeout`` seconds (default: the client's timeout) without an
        acknowledgement: the input may or may not have been applied, and it is not sent again.
        ``Unavailable`` when the session could not re-attach; ``Cancelled`` when it was closed.
        """
        wait = self._timeout if timeout is None else timeout
        deadline = time.monotonic() + wait
        message = self._core.prepare(event)
        self._raise_if_over()
        try:
            await asyncio.wait_for(self._ready.wait(), wait)
        except asyncio.TimeoutError:
            raise DeadlineExceeded(
                f"session {self._id} did not reconnect within {wait:g}s; the input was not sent"
            ) from None
        self._raise_if_over()
        call = self._call
        assert call is not None
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._acks[message.request_id] = (message, future)
        try:
            await call.write(message)
        except (grpc.aio.AioRpcError, asyncio.InvalidStateError, grpc.aio.UsageError):
            pass  # the stream broke: the reader re-attaches and sends it again (or fails it)
        if self._direct and not self._direct_reading:
            self._end_direct()  # nobody reads in next_event: the reader task reads the ack
        try:
            await asyncio.wait_for(asyncio.shield(future), max(0.0, deadline - time.monotonic()))
        except ParkwayError:
            raise
        except asyncio.TimeoutError:
            self._acks.pop(message.request_id, None)
            raise DeadlineExceeded(
                f"the server did not acknowledge the input within {wait:g}s; "
                "it may or may not have been applied"
            ) from None

    def _raise_if_over(self) -> None:
        if self._closed:
            raise Cancelled("the session was closed")
        if self._end is not None:
            if self._end.error is not None:
                raise self._end.error
            raise Unavailable("the server ended the stream")

    async def send_message(self, text: str, *, timeout: float | None = None) -> None:
        """Sends a user message (starting a reply) without reading events: read them with
        :meth:`until_settled` or :meth:`events`. Refused with ``FailedPrecondition`` while a reply
        runs or is parked."""
        await self.send_input(self._core.message(text), timeout=timeout)

    async def confirm(
        self,
        call: inputs.CallRef,
        rule: Literal["suggested"] | inputs.RuleSpec | Sequence[inputs.RuleSpec] | None = None,
        *,
        edited_input: Mapping[str, Any] | str | None = None,
        scope: inputs.ScopeName | int = "session",
        timeout: float | None = None,
    ) -> None:
        """Allows a call awaiting confirmation (see :func:`parkway.inputs.confirmation` for
        ``rule``, ``edited_input`` and ``scope``; a call id this session has seen resolves to its
        announced ToolCallBlock, so ``rule="suggested"`` works with ids too). Raises
        ``FailedPrecondition`` / ``NotFound`` when the call is not awaiting confirmation."""
        await self.send_input(self._core.confirm(call, rule, edited_input, scope), timeout=timeout)

    async def deny(
        self, call: inputs.CallRef, reason: str = "", *, timeout: float | None = None
    ) -> None:
        """Denies a call awaiting confirmation; the model sees ``reason``."""
        await self.send_input(self._core.deny(call, reason), timeout=timeout)

    async def confirm_all(
        self,
        results: Iterable[events_pb2.ConfirmResult],
        *,
        reply_id: str = "",
        timeout: float | None = None,
    ) -> None:
        """Answers several confirmations in one input (build them with
        :func:`parkway.inputs.confirmation` / :func:`parkway.inputs.denial`); unanswered calls stay
        pending. All or nothing: a refusal changes nothing."""
        await self.send_input(self._core.confirm_all(results, reply_id), timeout=timeout)

    async def submit_result(
        self,
        call: inputs.CallRef,
        output: str | Iterable[str | content_pb2.ToolOutputBlock | content_pb2.TextBlock] = "",
        state: inputs.ResultStateName | str | int = "success",
        metadata: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
    ) -> None:
        """Sends the result of an external call (see :func:`parkway.inputs.tool_result`). Raises
        ``InvalidArgument`` naming the field when the metadata fails the tool's schema."""
        await self.send_input(
            self._core.submit_result(call, output, state, metadata), timeout=timeout
        )

    async def answer(
        self, call: inputs.CallRef, answers: inputs.Answers, *, timeout: float | None = None
    ) -> None:
        """Answers an AskUser call: ``{question: label | [labels] | Other(text)}`` or a list of
        answer objects. Raises ``InvalidArgument`` naming the field (e.g.
        ``execution_results[0].ask_user.answers[0].selected[0]`` for an unknown label)."""
        await self.send_input(self._core.answer(call, answers), timeout=timeout)

    async def submit_results(
        self,
        results: Iterable[content_pb2.ToolResultBlock],
        *,
        reply_id: str = "",
        timeout: float | None = None,
    ) -> None:
        """Sends several external results in one input (build them with
        :func:`parkway.inputs.tool_result` / :func:`parkway.inputs.ask_user_result`)."""
        await self.send_input(self._core.submit_results(results, reply_id), timeout=timeout)

    async def interrupt(self, reply_id: str = "", *, timeout: float | None = None) -> None:
        """Stops the running or parked reply (a no-op on an idle session); its REPLY_END
        (INTERRUPTED) follows as an event."""
        await self.send_input(self._core.interrupt(reply_id), timeout=timeout)
