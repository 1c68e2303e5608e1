"""A Chat stream attached to one session, with automatic reconnect (asyncio)."""

from __future__ import annotations

import asyncio
import logging
import random
import threading
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

import grpc

from parkway import inputs
from parkway.errors import (
    Cancelled,
    DeadlineExceeded,
    Internal,
    InvalidArgument,
    ParkwayError,
    Unavailable,
    from_rpc_error,
    from_rpc_status,
)
from parkway.events import Event
from parkway.v1 import content_pb2, events_pb2

if TYPE_CHECKING:
    from parkway.client import AsyncClient

__all__ = ["AsyncSession", "ReconnectPolicy"]

log = logging.getLogger("parkway")

_REQUIRE_KINDS = ("require_user_confirm", "require_external_execution")
# The events that change what the session tracks (pending calls, announcements).
_STATE_KINDS = frozenset((*_REQUIRE_KINDS, "tool_result_end", "reply_end"))


@dataclass(frozen=True)
class ReconnectPolicy:
    """When and how a session re-attaches after its stream broke.

    A stream that ends with UNAVAILABLE (server restart or shutdown, network failure, a failed
    synced write) or with RESOURCE_EXHAUSTED (the stream fell behind the session's events) is
    re-attached with ``after_seq`` = the last seq seen, after ``initial_delay`` seconds, doubling up
    to ``max_delay`` (with jitter), until an attach succeeds or ``give_up_after`` seconds have
    passed since the break; then the session fails with the last error. Any other error (NOT_FOUND
    after the session was deleted, INVALID_ARGUMENT, ...) fails the session at once.
    """

    enabled: bool = True
    initial_delay: float = 0.05
    max_delay: float = 2.0
    give_up_after: float = 30.0


@dataclass(frozen=True)
class _End:
    """Queued after the last event: the stream ended (error None: closed by this client)."""

    error: ParkwayError | None


def _reconnectable(err: ParkwayError) -> bool:
    if err.code == grpc.StatusCode.UNAVAILABLE:
        return True
    if _transport_internal(err):
        return True
    return err.code == grpc.StatusCode.RESOURCE_EXHAUSTED and err.reason == "STREAM_BACKLOG"


def _transport_internal(err: ParkwayError) -> bool:
    """grpcio's own INTERNAL "Internal error from Core": an operation on a call whose transport
    broke under it (e.g. the attach written to a channel still reconnecting after a server
    restart). Nothing reached the server, so attaching again is safe; the server's own INTERNAL
    errors carry a status and are not retried."""
    return (
        err.code == grpc.StatusCode.INTERNAL
        and err.status is None
        and err.message == "Internal error from Core"
    )


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
        self._last_seq = after_seq
        self._policy = reconnect or ReconnectPolicy()
        self._timeout = timeout
        # Events received and not read yet, in order. A deque, so that the blocking client's
        # thread can take them without a call on the loop (appends and pops are atomic).
        self._unread: deque[Event] = deque()
        # Set once the stream ended for good: readers get it after the events received before.
        self._end: _End | None = None
        # Readers waiting for the next event: asyncio futures, and a blocking reader's lock.
        self._waiters: list[asyncio.Future[None]] = []
        self._sleeper: threading.Lock | None = None
        # Inputs written but not acknowledged yet, in order: resent after a re-attach.
        self._acks: dict[str, tuple[events_pb2.ClientEvent, asyncio.Future[None]]] = {}
        self._call: grpc.aio.StreamStreamCall[Any, Any] | None = None
        self._ready = asyncio.Event()
        self._closed = False
        self._reader: asyncio.Task[None] | None = None
        self._announced: set[tuple[str, str, str]] = set()
        self._pending: dict[str, tuple[str, content_pb2.ToolCallBlock]] = {}
        self._reconnects = 0

    # ---- state ----

    @property
    def id(self) -> str:
        """The session's id."""
        return self._id

    @property
    def last_seq(self) -> int:
        """The seq of the last logged event received (the ``after_seq`` of the next re-attach)."""
        return self._last_seq

    @property
    def pending(self) -> Mapping[str, content_pb2.ToolCallBlock]:
        """Calls announced by REQUIRE_* events that have no result yet, by id, as this stream has
        seen them (the server's view is ``AsyncClient.get_session(...).pending_tool_calls``)."""
        return {cid: call for cid, (_, call) in self._pending.items()}

    @property
    def reconnects(self) -> int:
        """How many times this session re-attached after a broken stream."""
        return self._reconnects

    @property
    def closed(self) -> bool:
        return self._closed

    # ---- lifecycle ----

    async def _start(self) -> None:
        """Attaches (once, without retries) and starts reading; raises the attach error."""
        self._call = await self._attach(self._timeout)
        self._ready.set()
        self._reader = asyncio.get_running_loop().create_task(
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
        request_id = uuid.uuid4().hex
        hello = events_pb2.ClientEvent(
            session_id=self._id,
            request_id=request_id,
            attach=events_pb2.Attach(session_id=self._id, after_seq=self._last_seq),
        )
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
        if first is grpc.aio.EOF:
            raise Unavailable("the server ended the stream before acknowledging attach")
        assert isinstance(first, events_pb2.ServerEvent)
        ack = first.input_ack
        if first.WhichOneof("event") != "input_ack" or ack.request_id != hello.request_id:
            raise Internal(
                f"expected the attach acknowledgement first, got {first.WhichOneof('event')}"
            )
        if ack.status.code != 0:
            raise from_rpc_status(ack.status)

    async def close(self) -> None:
        """Ends the stream. Pending inputs fail with ``Cancelled``; iterators stop after the events
        already received. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._ready.clear()
        if self._call is not None:
            self._call.cancel()
        if self._reader is not None:
            self._reader.cancel()
            try:
                await self._reader
            except (asyncio.CancelledError, Exception):
                pass
        self._fail_acks(Cancelled("the session was closed"))
        self._finish(None)

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
        call = self._call
        assert call is not None
        while True:
            error: ParkwayError | None = None
            try:
                while (message := await call.read()) is not grpc.aio.EOF:
                    self._dispatch(cast(events_pb2.ServerEvent, message))
            except grpc.aio.AioRpcError as err:
                error = from_rpc_error(err)
            if self._closed:
                return
            self._ready.clear()
            if error is None:
                # The server ended the stream without an error: nothing more will come.
                self._fail_acks(Unavailable("the server ended the stream"))
                self._finish(None)
                return
            if not (self._policy.enabled and _reconnectable(error)):
                self._fail_acks(self._unacknowledged(error))
                self._finish(error)
                return
            log.info("parkway: session %s stream broke (%s); reconnecting", self._id, error)
            try:
                call = await self._reattach(error)
            except ParkwayError as final:
                self._fail_acks(self._unacknowledged(final))
                self._finish(final)
                return
            self._call = call
            self._reconnects += 1
            # Inputs the old stream did not acknowledge go out again with their request ids: the
            # server applies an input once per request id and acknowledges a repeat as applied.
            for message, _ in list(self._acks.values()):
                try:
                    await call.write(message)
                except (grpc.aio.AioRpcError, asyncio.InvalidStateError, grpc.aio.UsageError):
                    break  # broke again: the read below fails and the next re-attach resends
            self._ready.set()

    async def _reattach(self, error: ParkwayError) -> grpc.aio.StreamStreamCall[Any, Any]:
        """Re-attaches with backoff per the policy; raises the last error when it gives up."""
        policy = self._policy
        deadline = time.monotonic() + policy.give_up_after
        delay = policy.initial_delay
        last = error
        lowered = False
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Unavailable(
                    f"could not re-attach to session {self._id} within "
                    f"{policy.give_up_after:g}s: {last}"
                )
            await asyncio.sleep(min(left, delay * (0.5 + random.random() / 2)))
            delay = min(delay * 2, policy.max_delay)
            try:
                return await self._attach(
                    max(0.1, min(self._timeout, deadline - time.monotonic())), wait_for_ready=True
                )
            except ParkwayError as err:
                last = err
                if (
                    isinstance(err, InvalidArgument)
                    and "attach.after_seq" in err.fields
                    and not lowered
                ):
                    # Defensive: the server has fewer events than this client received (it lost
                    # unflushed events in a crash, or its data was restored from a backup).
                    # Resume from the server's last seq so the events it logs from now on (which
                    # reuse those seqs) still arrive, rather than failing the session.
                    try:
                        await self._lower_last_seq()
                        lowered = True
                        delay = 0.0
                    except ParkwayError as lookup:
                        last = lookup
                    continue
                if not _reconnectable(err) and err.code != grpc.StatusCode.DEADLINE_EXCEEDED:
                    raise

    async def _lower_last_seq(self) -> None:
        session = await self._client.get_session(self._id)
        log.warning(
            "parkway: session %s: the server's last seq is %d but this client saw %d; "
            "resuming from the server's",
            self._id,
            session.last_seq,
            self._last_seq,
        )
        self._last_seq = session.last_seq

    def _dispatch(self, message: events_pb2.ServerEvent) -> None:
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
            return
        if kind is None:
            return  # an event kind newer than these stubs: skip it
        seq = message.seq
        if seq:
            if seq <= self._last_seq:
                return  # already delivered before a reconnect
            self._last_seq = seq
        if kind not in _STATE_KINDS:
            pass  # most events (the deltas): nothing to track
        elif kind in _REQUIRE_KINDS:
            calls = getattr(message, kind).tool_calls
            if message.seq == 0 and message.replayed:
                fresh = [c for c in calls if (message.reply_id, kind, c.id) not in self._announced]
                if not fresh:
                    return
                if len(fresh) < len(calls):
                    copy = events_pb2.ServerEvent()
                    copy.CopyFrom(message)
                    del getattr(copy, kind).tool_calls[:]
                    getattr(copy, kind).tool_calls.extend(fresh)
                    message, calls = copy, fresh
            for c in calls:
                self._announced.add((message.reply_id, kind, c.id))
                self._pending[c.id] = (message.reply_id, c)
        elif kind == "tool_result_end":
            self._pending.pop(message.tool_result_end.tool_call_id, None)
        elif kind == "reply_end":
            reply = message.reply_id
            self._announced = {k for k in self._announced if k[0] != reply}
            self._pending = {k: v for k, v in self._pending.items() if v[0] != reply}
        self._unread.append(Event(message))
        if self._waiters or self._sleeper is not None:
            self._wake()

    def _wake(self) -> None:
        """Wakes the readers waiting for an event (on the loop)."""
        if self._waiters:
            waiters, self._waiters = self._waiters, []
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(None)
        sleeper = self._sleeper
        if sleeper is not None:
            self._sleeper = None
            sleeper.release()

    def _fail_acks(self, error: ParkwayError) -> None:
        acks, self._acks = self._acks, {}
        for _, future in acks.values():
            if not future.done():
                future.set_exception(error)

    @staticmethod
    def _unacknowledged(error: ParkwayError) -> Unavailable:
        return Unavailable(
            f"the stream ended ({error.code_name}: {error.message}) before the server "
            "acknowledged the input; it may or may not have been applied"
        )

    def _finish(self, error: ParkwayError | None) -> None:
        if self._end is None:
            self._end = _End(error)
            self._wake()

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
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            if timeout is None:
                await waiter
                continue
            if deadline is None:
                deadline = time.monotonic() + timeout
            try:
                await asyncio.wait_for(waiter, max(0.0, deadline - time.monotonic()))
            except asyncio.TimeoutError:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
                if unread or self._end is not None:
                    continue  # it came just as the time ran out
                raise DeadlineExceeded(f"no event within {timeout:g}s") from None

    def _wait_in_thread(self, timeout: float | None) -> bool:
        """For the blocking client, on its caller's thread: waits until an event was received or
        the stream ended (True), or ``timeout`` seconds passed (False), without a call on the
        loop; the reader wakes it when it queues the next event. One such waiter at a time."""
        lock = threading.Lock()
        lock.acquire()
        self._sleeper = lock
        if self._unread or self._end is not None:  # arrived before the lock was in place
            self._sleeper = None
            return True
        if lock.acquire(timeout=-1 if timeout is None else timeout):
            return True
        self._sleeper = None
        return bool(self._unread) or self._end is not None

    @staticmethod
    def _result_of(end: _End) -> None:
        if end.error is not None:
            raise end.error
        return None

    async def events(self) -> AsyncIterator[Event]:
        """Every event, as it arrives, until the session is closed (then the iterator ends) or the
        stream fails for good (then it raises)."""
        while True:
            event = await self.next_event()
            if event is None:
                return
            yield event

    async def until_settled(self, timeout: float | None = None) -> AsyncIterator[Event]:
        """Events up to and including the next REPLY_END (the reply finished) or REPLY_PARKED (it
        waits for answers announced by the REQUIRE_* events before it).

        Args:
            timeout: overall seconds to wait; ``DeadlineExceeded`` is raised when they pass.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            event = await self.next_event(left)
            if event is None:
                return
            yield event
            if event.settles:
                return

    async def send(self, text: str, *, timeout: float | None = None) -> AsyncIterator[Event]:
        """Sends a user message and yields the reply's events until it finishes (REPLY_END) or
        parks (REPLY_PARKED). The message is sent when iteration starts; a refusal (e.g.
        ``FailedPrecondition`` while a reply is parked) is raised by the first step.

        Args:
            timeout: seconds for the acknowledgement, and then overall for the events.
        """
        await self.send_message(text, timeout=timeout)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:  # until_settled's loop, inlined: one generator per event instead of two
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            event = await self.next_event(left)
            if event is None:
                return
            yield event
            if event.settles:
                return

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
        message = events_pb2.ClientEvent()
        message.CopyFrom(event)
        message.session_id = message.session_id or self._id
        message.request_id = message.request_id or uuid.uuid4().hex
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
        await self.send_input(
            events_pb2.ClientEvent(user_message=events_pb2.UserMessage(text=text)), timeout=timeout
        )

    def _call_ref(self, call: inputs.CallRef) -> inputs.CallRef:
        """The announced ToolCallBlock for an id this session has seen, else the id as given."""
        if isinstance(call, str) and call in self._pending:
            return self._pending[call][1]
        return call

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
        result = inputs.confirmation(
            self._call_ref(call), rule, edited_input=edited_input, scope=scope
        )
        await self.confirm_all([result], timeout=timeout)

    async def deny(
        self, call: inputs.CallRef, reason: str = "", *, timeout: float | None = None
    ) -> None:
        """Denies a call awaiting confirmation; the model sees ``reason``."""
        await self.confirm_all([inputs.denial(self._call_ref(call), reason)], timeout=timeout)

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
        await self.send_input(
            events_pb2.ClientEvent(
                user_confirm_result=events_pb2.UserConfirmResult(
                    reply_id=reply_id, confirm_results=list(results)
                )
            ),
            timeout=timeout,
        )

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
        block = inputs.tool_result(
            self._call_ref(call),
            output if isinstance(output, str) else list(output),
            state=state,
            metadata=metadata,
        )
        await self.submit_results([block], timeout=timeout)

    async def answer(
        self, call: inputs.CallRef, answers: inputs.Answers, *, timeout: float | None = None
    ) -> None:
        """Answers an AskUser call: ``{question: label | [labels] | Other(text)}`` or a list of
        answer objects. Raises ``InvalidArgument`` naming the field (e.g.
        ``execution_results[0].ask_user.answers[0].selected[0]`` for an unknown label)."""
        await self.submit_results(
            [inputs.ask_user_result(self._call_ref(call), answers)], timeout=timeout
        )

    async def submit_results(
        self,
        results: Iterable[content_pb2.ToolResultBlock],
        *,
        reply_id: str = "",
        timeout: float | None = None,
    ) -> None:
        """Sends several external results in one input (build them with
        :func:`parkway.inputs.tool_result` / :func:`parkway.inputs.ask_user_result`)."""
        await self.send_input(
            events_pb2.ClientEvent(
                external_execution_result=events_pb2.ExternalExecutionResult(
                    reply_id=reply_id, execution_results=list(results)
                )
            ),
            timeout=timeout,
        )

    async def interrupt(self, reply_id: str = "", *, timeout: float | None = None) -> None:
        """Stops the running or parked reply (a no-op on an idle session); its REPLY_END
        (INTERRUPTED) follows as an event."""
        await self.send_input(
            events_pb2.ClientEvent(user_interrupt=events_pb2.UserInterrupt(reply_id=reply_id)),
            timeout=timeout,
        )
