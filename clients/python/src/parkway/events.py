"""Typed session events: a thin, read-only view over the generated ``ServerEvent`` message."""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast, get_args

from google.protobuf.message import Message

from parkway.v1 import content_pb2, events_pb2

__all__ = ["EVENT_KINDS", "Event", "EventKind"]

EventKind = Literal[
    "reply_start",
    "reply_end",
    "model_call_start",
    "model_call_end",
    "text_block_start",
    "text_block_delta",
    "text_block_end",
    "thinking_block_start",
    "thinking_block_delta",
    "thinking_block_end",
    "tool_call_start",
    "tool_call_delta",
    "tool_call_end",
    "tool_result_start",
    "tool_result_text_delta",
    "tool_result_data_delta",
    "tool_result_end",
    "require_user_confirm",
    "require_external_execution",
    "reply_parked",
    "custom",
    "error",
]
"""The kind of an event: the name of the ``ServerEvent.event`` oneof field that is set.
(``input_ack`` is consumed by the client and never surfaces as an event.)"""

EVENT_KINDS: frozenset[str] = frozenset(get_args(EventKind))

_REQUIRE_KINDS = frozenset({"require_user_confirm", "require_external_execution"})
_SETTLING_KINDS = frozenset({"reply_end", "reply_parked"})
_DELTA_TEXT_KINDS = frozenset(
    {"text_block_delta", "thinking_block_delta", "tool_call_delta", "tool_result_text_delta"}
)


@dataclass(frozen=True, init=False)
class Event:
    """One event of a session, in seq order.

    ``kind`` says which payload is set and ``body`` is that payload (e.g. a ``ToolResultEnd``); the
    properties below read the commonly needed fields without a ``WhichOneof`` dance. ``raw`` is the
    generated ``parkway.v1.events_pb2.ServerEvent`` for everything else.
    """

    # A session makes one per event received: slots make it one small allocation, and ``kind`` a
    # plain read.
    __slots__ = ("__weakref__", "kind", "raw")

    raw: events_pb2.ServerEvent
    kind: EventKind
    """Which event this is, e.g. ``"text_block_delta"`` or ``"require_user_confirm"``."""

    def __init__(self, raw: events_pb2.ServerEvent, kind: str | None = None) -> None:
        """``kind``: ``raw.WhichOneof("event")`` when the caller has it at hand."""
        # Frozen: set through the slots themselves (cheaper than object.__setattr__).
        _set_raw(self, raw)
        _set_kind(self, raw.WhichOneof("event") if kind is None else kind)

    def __reduce__(self) -> tuple[type[Event], tuple[events_pb2.ServerEvent, str]]:
        # pickle and copy: a frozen class's slots cannot be set the default way.
        return (Event, (self.raw, self.kind))

    def __hash__(self) -> int:  # protobuf messages are unhashable; the event id is unique
        return hash((self.raw.session_id, self.raw.id, self.raw.seq))

    @property
    def body(self) -> Message:
        """The payload message of :attr:`kind` (e.g. ``events_pb2.ReplyEnd``)."""
        return cast(Message, getattr(self.raw, self.kind))

    @property
    def id(self) -> str:
        """The event's unique id."""
        return self.raw.id

    @property
    def seq(self) -> int:
        """Position in the session's event log (strictly increasing; gap-free except after a
        server crash, where seqs skip past events that were sent but not stored); 0 for a
        pending REQUIRE_* event re-announced after attach."""
        return self.raw.seq

    @property
    def session_id(self) -> str:
        return self.raw.session_id

    @property
    def reply_id(self) -> str:
        """The reply the event belongs to; empty outside a reply."""
        return self.raw.reply_id

    @property
    def replayed(self) -> bool:
        """True when sent again: replayed after an attach or a reconnect, or re-announced."""
        return self.raw.replayed

    @property
    def created_at(self) -> datetime.datetime:
        """When the server created the event (UTC, timezone-aware)."""
        return self.raw.created_at.ToDatetime(tzinfo=datetime.timezone.utc)

    @property
    def settles(self) -> bool:
        """True for REPLY_END and REPLY_PARKED: the reply finished or is waiting for answers."""
        return self.kind in _SETTLING_KINDS

    @property
    def tool_calls(self) -> Sequence[content_pb2.ToolCallBlock]:
        """The calls of a REQUIRE_USER_CONFIRM / REQUIRE_EXTERNAL_EXECUTION; empty for other kinds."""
        if self.kind in _REQUIRE_KINDS:
            return cast(
                "events_pb2.RequireUserConfirm | events_pb2.RequireExternalExecution", self.body
            ).tool_calls
        return ()

    @property
    def tool_call_id(self) -> str:
        """The tool call a TOOL_CALL_* / TOOL_RESULT_* event is about; ``""`` for other kinds."""
        return str(getattr(self.body, "tool_call_id", ""))

    @property
    def text(self) -> str:
        """The appended text of a text, thinking, tool-input or tool-result delta; ``""`` otherwise."""
        if self.kind in _DELTA_TEXT_KINDS:
            return str(cast(Any, self.body).delta)
        return ""

    @property
    def finished_reason(self) -> content_pb2.FinishedReason:
        """REPLY_END's reason (``content_pb2.FINISHED_REASON_*``); UNSPECIFIED for other kinds."""
        if self.kind == "reply_end":
            return self.raw.reply_end.finished_reason
        return content_pb2.FINISHED_REASON_UNSPECIFIED

    @property
    def usage(self) -> content_pb2.Usage | None:
        """The token usage of REPLY_END (the whole reply's) or MODEL_CALL_END (that call's);
        ``None`` for other kinds."""
        if self.kind == "reply_end":
            return self.raw.reply_end.usage
        if self.kind == "model_call_end":
            return self.raw.model_call_end.usage
        return None

    @property
    def result_state(self) -> str:
        """TOOL_RESULT_END's outcome without its prefix: ``"SUCCESS"``, ``"ERROR"``, ``"DENIED"``,
        ``"INTERRUPTED"``; ``""`` for other kinds."""
        if self.kind != "tool_result_end":
            return ""
        name = content_pb2.ToolResultState.Name(self.raw.tool_result_end.state)
        return name.removeprefix("TOOL_RESULT_STATE_")

    def __repr__(self) -> str:
        parts = [f"seq={self.seq}", f"kind={self.kind!r}"]
        call = self.tool_call_id or ",".join(c.id for c in self.tool_calls)
        if call:
            parts.append(f"call={call!r}")
        if self.result_state:
            parts.append(f"state={self.result_state}")
        if self.text:
            parts.append(f"text={self.text!r}")
        if self.replayed:
            parts.append("replayed=True")
        return f"Event({', '.join(parts)})"


_set_raw: Any = Event.__dict__["raw"].__set__
_set_kind: Any = Event.__dict__["kind"].__set__
