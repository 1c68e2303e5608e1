"""What an attached session tracks and decides, shared by the asyncio and the blocking sessions.

No I/O here: the seq bookkeeping and de-duplication of received events, the calls pending an
answer, the attach request and the check of its acknowledgement, the input messages, and the
re-attach schedule of a :class:`ReconnectPolicy`. :class:`parkway.AsyncSession` (grpc.aio) and
:class:`parkway.Session` (grpcio's blocking API) each drive their own stream with it.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import grpc

from parkway import inputs
from parkway.errors import Internal, InvalidArgument, ParkwayError, Unavailable, from_rpc_status
from parkway.events import EVENT_KINDS, Event
from parkway.v1 import content_pb2, events_pb2

__all__ = [
    "CLOSE_GRACE_S",
    "End",
    "Reattach",
    "ReconnectPolicy",
    "SessionCore",
    "reconnectable",
    "unacknowledged",
]

#: Seconds a closing session gives the server to end its half-closed ``Chat`` stream (it does so at
#: once, with OK, when the session runs no reply) before cancelling the stream. A cancel resets
#: the stream (RST_STREAM), and HTTP/2 servers limit how fast a client may reset streams (the
#: "rapid reset" protection; Node.js allows about 1,000 at once, then 33 a second): past the
#: limit the server sends GOAWAY and takes no more calls on that connection, so the client has to
#: open another one (clients that fail every call on a connection that received an error GOAWAY,
#: such as grpc-js, lose them all). Closing by half-close keeps a client that opens and closes
#: many sessions on one connection.
CLOSE_GRACE_S = 1.0

_REQUIRE_KINDS = ("require_user_confirm", "require_external_execution")
# The events that change what the session tracks (pending calls, announcements).
_STATE_KINDS = frozenset((*_REQUIRE_KINDS, "tool_result_end", "reply_end"))
# The events SessionCore.accept passes as they are, with no state to update.
_PLAIN_KINDS = EVENT_KINDS - _STATE_KINDS


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
class End:
    """Queued after the last event: the stream ended (error None: closed by this client)."""

    error: ParkwayError | None


def reconnectable(err: ParkwayError) -> bool:
    """True when a stream that ended with ``err`` is re-attached (see :class:`ReconnectPolicy`)."""
    if err.code == grpc.StatusCode.UNAVAILABLE:
        return True
    if transport_internal(err):
        return True
    return err.code == grpc.StatusCode.RESOURCE_EXHAUSTED and err.reason == "STREAM_BACKLOG"


def transport_internal(err: ParkwayError) -> bool:
    """grpcio's own INTERNAL "Internal error from Core": an operation on a call whose transport
    broke under it (e.g. the attach written to a channel still reconnecting after a server
    restart). Nothing reached the server, so attaching again is safe; the server's own INTERNAL
    errors carry a status and are not retried."""
    return (
        err.code == grpc.StatusCode.INTERNAL
        and err.status is None
        and err.message == "Internal error from Core"
    )


def unacknowledged(error: ParkwayError) -> Unavailable:
    """The error of an input whose acknowledgement was lost when the stream ended with ``error``."""
    return Unavailable(
        f"the stream ended ({error.code_name}: {error.message}) before the server "
        "acknowledged the input; it may or may not have been applied"
    )


class Reattach:
    """One re-attach after a break, per the policy: :meth:`delay` says how long to wait before the
    next attempt (raising when the policy gives up), :meth:`attempt_timeout` bounds that attempt,
    and :meth:`failed` says whether to go on after an attempt's error."""

    def __init__(self, policy: ReconnectPolicy, session_id: str, error: ParkwayError) -> None:
        self._policy = policy
        self._id = session_id
        self._deadline = time.monotonic() + policy.give_up_after
        self._delay = policy.initial_delay
        #: The error of the last attempt (first: the break's).
        self.last = error
        self._lowered = False

    def delay(self) -> float:
        """Seconds to wait before the next attempt; raises ``Unavailable`` once time is up."""
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise Unavailable(
                f"could not re-attach to session {self._id} within "
                f"{self._policy.give_up_after:g}s: {self.last}"
            )
        wait = min(left, self._delay * (0.5 + random.random() / 2))
        # Doubling; after the immediate retry of a lowered seq, back to the initial delay.
        self._delay = min(self._delay * 2 or self._policy.initial_delay, self._policy.max_delay)
        return wait

    def attempt_timeout(self, timeout: float) -> float:
        """The attach timeout of the next attempt: ``timeout``, within what is left (≥ 0.1 s)."""
        return max(0.1, min(timeout, self._deadline - time.monotonic()))

    def failed(self, err: ParkwayError) -> Literal["retry", "lower"]:
        """After an attempt failed: "lower" when the server has fewer events than this client saw
        (the caller resumes from the server's last seq, see :meth:`SessionCore.lower_last_seq`, and
        retries), "retry" to try again; raises ``err`` when it is not worth retrying."""
        self.last = err
        if (
            isinstance(err, InvalidArgument)
            and "attach.after_seq" in err.fields
            and not self._lowered
        ):
            # Defensive: the server lost unflushed events in a crash, or its data was restored from
            # a backup. Resume from its last seq so the events it logs from now on (which reuse
            # those seqs) still arrive, rather than failing the session.
            self._lowered = True
            self._delay = 0.0
            return "lower"
        if not reconnectable(err) and err.code != grpc.StatusCode.DEADLINE_EXCEEDED:
            raise err
        return "retry"


class SessionCore:
    """The state of one attached session: the last seq received, the calls pending an answer and
    the REQUIRE_* announcements delivered (to drop the server's re-announcements of them)."""

    def __init__(self, session_id: str, after_seq: int) -> None:
        #: The session's id.
        self.id = session_id
        #: The seq of the last logged event received (the ``after_seq`` of the next re-attach).
        self.last_seq = after_seq
        #: How many times the session re-attached after a broken stream.
        self.reconnects = 0
        self._announced: set[tuple[str, str, str]] = set()
        self._pending: dict[str, tuple[str, content_pb2.ToolCallBlock]] = {}

    @property
    def pending(self) -> Mapping[str, content_pb2.ToolCallBlock]:
        """Calls announced by REQUIRE_* events that have no result yet, by id."""
        return {cid: call for cid, (_, call) in self._pending.items()}

    def accept(self, message: events_pb2.ServerEvent, kind: str | None) -> Event | None:
        """The event to deliver for a received message other than an ``input_ack`` (``kind`` is
        its ``WhichOneof("event")``), or None when it is dropped: a kind newer than these stubs, a
        seq already delivered (replayed after a re-attach), a re-announced call already delivered.
        Updates the last seq and the pending calls."""
        if kind is None:
            return None  # an event kind newer than these stubs: skip it
        seq = message.seq
        if seq:
            if seq <= self.last_seq:
                return None  # already delivered before a reconnect
            self.last_seq = seq
        if kind not in _STATE_KINDS:
            pass  # most events (the deltas): nothing to track
        elif kind in _REQUIRE_KINDS:
            calls = getattr(message, kind).tool_calls
            if message.seq == 0 and message.replayed:
                fresh = [c for c in calls if (message.reply_id, kind, c.id) not in self._announced]
                if not fresh:
                    return None
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
        return Event(message, kind)

    def lower_last_seq(self, server_last_seq: int) -> None:
        """Resumes from the server's last seq (see :meth:`Reattach.failed`)."""
        self.last_seq = server_last_seq

    # ---- attach ----

    def hello(self) -> events_pb2.ClientEvent:
        """The attach request: after_seq = the last seq received, a fresh request id."""
        return events_pb2.ClientEvent(
            session_id=self.id,
            request_id=uuid.uuid4().hex,
            attach=events_pb2.Attach(session_id=self.id, after_seq=self.last_seq),
        )

    @staticmethod
    def check_attached(hello: events_pb2.ClientEvent, first: object) -> None:
        """Raises unless ``first``, the stream's first message (None: the stream ended), is the
        acknowledgement of ``hello`` with an OK status."""
        if first is None:
            raise Unavailable("the server ended the stream before acknowledging attach")
        assert isinstance(first, events_pb2.ServerEvent)
        ack = first.input_ack
        if first.WhichOneof("event") != "input_ack" or ack.request_id != hello.request_id:
            raise Internal(
                f"expected the attach acknowledgement first, got {first.WhichOneof('event')}"
            )
        if ack.status.code != 0:
            raise from_rpc_status(ack.status)

    # ---- inputs ----

    def prepare(self, event: events_pb2.ClientEvent) -> events_pb2.ClientEvent:
        """A copy of an input with its ``session_id`` and ``request_id`` filled in when empty."""
        message = events_pb2.ClientEvent()
        message.CopyFrom(event)
        message.session_id = message.session_id or self.id
        message.request_id = message.request_id or uuid.uuid4().hex
        return message

    def call_ref(self, call: inputs.CallRef) -> inputs.CallRef:
        """The announced ToolCallBlock for an id this session has seen, else the id as given."""
        if isinstance(call, str) and call in self._pending:
            return self._pending[call][1]
        return call

    @staticmethod
    def message(text: str) -> events_pb2.ClientEvent:
        """The input of ``send_message``."""
        return events_pb2.ClientEvent(user_message=events_pb2.UserMessage(text=text))

    def confirm(
        self,
        call: inputs.CallRef,
        rule: Literal["suggested"] | inputs.RuleSpec | Sequence[inputs.RuleSpec] | None,
        edited_input: Mapping[str, Any] | str | None,
        scope: inputs.ScopeName | int,
    ) -> events_pb2.ClientEvent:
        """The input of ``confirm``."""
        result = inputs.confirmation(
            self.call_ref(call), rule, edited_input=edited_input, scope=scope
        )
        return self.confirm_all([result], "")

    def deny(self, call: inputs.CallRef, reason: str) -> events_pb2.ClientEvent:
        """The input of ``deny``."""
        return self.confirm_all([inputs.denial(self.call_ref(call), reason)], "")

    @staticmethod
    def confirm_all(
        results: Iterable[events_pb2.ConfirmResult], reply_id: str
    ) -> events_pb2.ClientEvent:
        """The input of ``confirm_all``."""
        return events_pb2.ClientEvent(
            user_confirm_result=events_pb2.UserConfirmResult(
                reply_id=reply_id, confirm_results=list(results)
            )
        )

    def submit_result(
        self,
        call: inputs.CallRef,
        output: str | Iterable[str | content_pb2.ToolOutputBlock | content_pb2.TextBlock],
        state: inputs.ResultStateName | str | int,
        metadata: Mapping[str, Any] | None,
    ) -> events_pb2.ClientEvent:
        """The input of ``submit_result``."""
        block = inputs.tool_result(
            self.call_ref(call),
            output if isinstance(output, str) else list(output),
            state=state,
            metadata=metadata,
        )
        return self.submit_results([block], "")

    def answer(self, call: inputs.CallRef, answers: inputs.Answers) -> events_pb2.ClientEvent:
        """The input of ``answer``."""
        return self.submit_results([inputs.ask_user_result(self.call_ref(call), answers)], "")

    @staticmethod
    def submit_results(
        results: Iterable[content_pb2.ToolResultBlock], reply_id: str
    ) -> events_pb2.ClientEvent:
        """The input of ``submit_results``."""
        return events_pb2.ClientEvent(
            external_execution_result=events_pb2.ExternalExecutionResult(
                reply_id=reply_id, execution_results=list(results)
            )
        )

    @staticmethod
    def interrupt(reply_id: str) -> events_pb2.ClientEvent:
        """The input of ``interrupt``."""
        return events_pb2.ClientEvent(user_interrupt=events_pb2.UserInterrupt(reply_id=reply_id))
