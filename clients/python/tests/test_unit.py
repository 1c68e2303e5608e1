"""Unit tests without a server: input builders, error decoding, events, and the session's
de-duplication of replayed and re-announced events."""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle
import weakref
from collections.abc import Generator
from typing import Any, cast

import grpc
import pytest
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2

import parkway
from parkway import inputs
from parkway.errors import from_rpc_status
from parkway.v1 import ask_user_pb2, content_pb2, events_pb2, permission_pb2

# ---- inputs ----


def test_permission_rule_forms() -> None:
    display = inputs.permission_rule("Bash(npm test:*)")
    assert (display.tool_name, display.rule_content) == ("Bash", "npm test:*")
    assert display.behavior == permission_pb2.PERMISSION_BEHAVIOR_ALLOW
    assert display.scope == permission_pb2.RULE_SCOPE_SESSION

    bare = inputs.permission_rule("Read", scope="agent")
    assert bare.tool_name == "Read" and not bare.HasField("rule_content")
    assert not inputs.permission_rule("Read()").HasField("rule_content")
    assert bare.scope == permission_pb2.RULE_SCOPE_AGENT

    mapped = inputs.permission_rule(
        {"tool_name": "Write", "rule_content": "/w/**", "scope": "tenant", "behavior": "deny"}
    )
    assert (mapped.tool_name, mapped.rule_content) == ("Write", "/w/**")
    assert mapped.scope == permission_pb2.RULE_SCOPE_TENANT
    assert mapped.behavior == permission_pb2.PERMISSION_BEHAVIOR_DENY

    with pytest.raises(ValueError):
        inputs.permission_rule("not a rule!")
    with pytest.raises(ValueError):
        inputs.permission_rule("Bash", scope=cast(Any, "galaxy"))


def test_confirmation_with_suggested_rules_rescoped() -> None:
    suggested = permission_pb2.PermissionRule(
        tool_name="Bash",
        rule_content="touch:*",
        behavior=permission_pb2.PERMISSION_BEHAVIOR_ALLOW,
        scope=permission_pb2.RULE_SCOPE_SESSION,
        source=permission_pb2.RULE_SOURCE_SUGGESTED,
    )
    call = content_pb2.ToolCallBlock(
        id="c1", name="Bash", input='{"command":"touch a"}', suggested_rules=[suggested]
    )
    result = inputs.confirmation(call, "suggested", scope="agent")
    assert result.confirmed
    assert result.tool_call.id == "c1"
    assert result.tool_call.input == "", "an unedited input is not sent (any input is an edit)"
    assert [(r.tool_name, r.rule_content, r.scope) for r in result.rules] == [
        ("Bash", "touch:*", permission_pb2.RULE_SCOPE_AGENT)
    ]
    assert call.suggested_rules[0].scope == permission_pb2.RULE_SCOPE_SESSION, "not mutated"

    with pytest.raises(ValueError, match="ToolCallBlock"):
        inputs.confirmation("c1", "suggested")

    edited = inputs.confirmation("c1", ["Bash(touch:*)", "Read"], edited_input={"command": "ls"})
    assert json.loads(edited.tool_call.input) == {"command": "ls"}
    assert [r.tool_name for r in edited.rules] == ["Bash", "Read"]

    single = inputs.confirmation("c1", "Bash(touch:*)")
    assert [r.rule_content for r in single.rules] == ["touch:*"]

    denied = inputs.denial(call, "no")
    assert not denied.confirmed and denied.reason == "no" and denied.tool_call.id == "c1"


def test_tool_result_metadata_is_present_even_when_empty() -> None:
    block = inputs.tool_result("l1", "found", metadata={})
    assert block.HasField("metadata")
    assert block.state == content_pb2.TOOL_RESULT_STATE_SUCCESS
    assert block.output[0].text.text == "found"

    failed = inputs.tool_result("l1", ["a", content_pb2.TextBlock(text="b")], state="error")
    assert [o.text.text for o in failed.output] == ["a", "b"]
    assert failed.state == content_pb2.TOOL_RESULT_STATE_ERROR
    assert not failed.HasField("metadata")
    assert inputs.tool_result("l1").output == []


def test_ask_user_answers_forms() -> None:
    by_question = inputs.ask_user_answers(
        {"Q1": "A", "Q2": ["B", "C"], "Q3": parkway.Other("mine"), "Q4": ["D", parkway.Other("+")]}
    )
    got = [
        (a.question, list(a.selected), a.other if a.HasField("other") else None)
        for a in by_question.answers
    ]
    assert got == [
        ("Q1", ["A"], None),
        ("Q2", ["B", "C"], None),
        ("Q3", [], "mine"),
        ("Q4", ["D"], "+"),
    ]
    listed = inputs.ask_user_answers(
        [
            {"question": "Q1", "selected": ["A"]},
            ask_user_pb2.AskUserAnswer(question="Q2", selected=["B"]),
            {"question": "Q3", "selected": [], "other": "x"},
        ]
    )
    assert [a.question for a in listed.answers] == ["Q1", "Q2", "Q3"]
    assert listed.answers[2].other == "x"
    result = inputs.ask_user_result("a1", {"Q1": "A"})
    assert (
        result.id == "a1"
        and result.name == "AskUser"
        and result.ask_user.answers[0].selected == ["A"]
    )


def test_external_tool_and_modes() -> None:
    tool = inputs.external_tool({"name": "Deploy", "input_schema": {"type": "object"}})
    assert json.loads(tool.input_schema) == {"type": "object"} and tool.metadata_schema == ""
    assert inputs.permission_mode("accept_edits") == permission_pb2.PERMISSION_MODE_ACCEPT_EDITS
    assert inputs.permission_mode(None) == permission_pb2.PERMISSION_MODE_UNSPECIFIED
    with pytest.raises(ValueError):
        inputs.permission_mode(cast(Any, "yolo"))


# ---- errors ----


def _pack(message: Any) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(message)
    return packed


def test_error_from_rpc_status_decodes_details() -> None:
    status = status_pb2.Status(
        code=grpc.StatusCode.INVALID_ARGUMENT.value[0],
        message="bad answers",
        details=[
            _pack(
                error_details_pb2.BadRequest(
                    field_violations=[
                        error_details_pb2.BadRequest.FieldViolation(
                            field="a.b[0]", description="unknown"
                        )
                    ]
                )
            ),
            _pack(error_details_pb2.ErrorInfo(reason="BAD", domain="parkway.dev")),
        ],
    )
    err = from_rpc_status(status)
    assert isinstance(err, parkway.InvalidArgument)
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT
    assert err.field_violations == [("a.b[0]", "unknown")]
    assert err.fields == ["a.b[0]"]
    assert err.reason == "BAD"
    assert "a.b[0]: unknown" in str(err)

    parked = from_rpc_status(
        status_pb2.Status(
            code=grpc.StatusCode.FAILED_PRECONDITION.value[0],
            message="parked",
            details=[
                _pack(
                    error_details_pb2.PreconditionFailure(
                        violations=[
                            error_details_pb2.PreconditionFailure.Violation(
                                type="TOOL_CALL", subject="d1", description="asking"
                            )
                        ]
                    )
                )
            ],
        )
    )
    assert isinstance(parked, parkway.FailedPrecondition)
    assert parked.precondition_violations == [("TOOL_CALL", "d1", "asking")]

    odd = from_rpc_status(status_pb2.Status(code=99, message="?"))
    assert type(odd) is parkway.ParkwayError and odd.code == grpc.StatusCode.UNKNOWN

    assert isinstance(parkway.DeadlineExceeded("late"), TimeoutError)
    assert parkway.NotFound("x").code == grpc.StatusCode.NOT_FOUND


# ---- events and de-duplication ----


def _event(
    seq: int, reply: str = "r1", replayed: bool = False, **body: Any
) -> events_pb2.ServerEvent:
    return events_pb2.ServerEvent(
        seq=seq, session_id="s1", reply_id=reply, replayed=replayed, **body
    )


def _confirm(*ids: str) -> events_pb2.RequireUserConfirm:
    return events_pb2.RequireUserConfirm(
        tool_calls=[content_pb2.ToolCallBlock(id=i, name="Bash") for i in ids]
    )


def test_event_view() -> None:
    end = parkway.Event(
        _event(
            7,
            tool_result_end=events_pb2.ToolResultEnd(
                tool_call_id="c1", state=content_pb2.TOOL_RESULT_STATE_DENIED
            ),
        )
    )
    assert (end.kind, end.seq, end.tool_call_id, end.result_state) == (
        "tool_result_end",
        7,
        "c1",
        "DENIED",
    )
    assert not end.settles and end.tool_calls == () and end.text == ""
    delta = parkway.Event(
        _event(8, text_block_delta=events_pb2.TextBlockDelta(block_id="b", delta="hi"))
    )
    assert delta.text == "hi"
    done = parkway.Event(
        _event(
            9, reply_end=events_pb2.ReplyEnd(finished_reason=content_pb2.FINISHED_REASON_COMPLETED)
        )
    )
    assert done.settles and done.finished_reason == content_pb2.FINISHED_REASON_COMPLETED
    billed = parkway.Event(
        _event(10, reply_end=events_pb2.ReplyEnd(usage=content_pb2.Usage(input_tokens=5)))
    )
    assert billed.usage is not None and billed.usage.input_tokens == 5
    assert delta.usage is None
    asks = parkway.Event(_event(3, require_user_confirm=_confirm("c1", "c2")))
    assert [c.id for c in asks.tool_calls] == ["c1", "c2"]
    assert "call='c1,c2'" in repr(asks)


def test_event_is_a_frozen_value() -> None:
    """An Event cannot be changed, compares and hashes by its message, and survives copy and
    pickle (a session hands the same objects to every consumer)."""
    event = parkway.Event(_event(8, text_block_delta=events_pb2.TextBlockDelta(delta="hi")))
    assert event.kind == "text_block_delta"
    for name in ("raw", "kind", "extra"):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(event, name, None)
    same = parkway.Event(_event(8, text_block_delta=events_pb2.TextBlockDelta(delta="hi")))
    assert same == event and hash(same) == hash(event)
    assert parkway.Event(_event(9)) != event and parkway.Event(_event(9)).kind is None
    for twin in (copy.copy(event), copy.deepcopy(event), pickle.loads(pickle.dumps(event))):
        assert twin == event and (twin.kind, twin.text, twin.seq) == ("text_block_delta", "hi", 8)
    assert weakref.ref(event)() is event


async def _drain(session: parkway.AsyncSession) -> list[parkway.Event]:
    out = []
    while session._unread:
        event = await session.next_event(0.1)
        assert event is not None
        out.append(event)
    return out


async def test_session_drops_duplicates_and_known_reannouncements() -> None:
    session = parkway.AsyncSession(cast(Any, None), "s1", after_seq=2, timeout=1)
    feed = [
        _event(2, model_call_start=events_pb2.ModelCallStart()),  # at or below after_seq: dropped
        _event(3, require_user_confirm=_confirm("c1", "c2")),
        _event(4, reply_parked=events_pb2.ReplyParked()),
        _event(3, replayed=True, require_user_confirm=_confirm("c1", "c2")),  # replay overlap
        _event(0, replayed=True, require_user_confirm=_confirm("c1", "c2")),  # known: dropped
        _event(0, replayed=True, require_user_confirm=_confirm("c1", "c3")),  # c3 is new
        _event(5, tool_result_end=events_pb2.ToolResultEnd(tool_call_id="c1")),
    ]
    for message in feed:
        session._dispatch(message)
    events = await _drain(session)
    assert [(e.seq, e.kind, [c.id for c in e.tool_calls]) for e in events] == [
        (3, "require_user_confirm", ["c1", "c2"]),
        (4, "reply_parked", []),
        (0, "require_user_confirm", ["c3"]),
        (5, "tool_result_end", []),
    ]
    assert session.last_seq == 5
    assert set(session.pending) == {"c2", "c3"}

    # A new reply reuses a call id: its announcement is new, and a reply end forgets the old one.
    session._dispatch(_event(6, reply_end=events_pb2.ReplyEnd()))
    assert [e.kind for e in await _drain(session)] == ["reply_end"]
    assert session.pending == {}
    session._dispatch(_event(0, reply="r2", replayed=True, require_user_confirm=_confirm("c1")))
    (again,) = await _drain(session)
    assert again.reply_id == "r2" and [c.id for c in again.tool_calls] == ["c1"]


async def test_fresh_session_surfaces_reannouncements() -> None:
    session = parkway.AsyncSession(cast(Any, None), "s1", after_seq=4, timeout=1)
    session._dispatch(_event(0, replayed=True, require_user_confirm=_confirm("c1")))
    (event,) = await _drain(session)
    assert event.replayed and event.seq == 0 and set(session.pending) == {"c1"}


def _delta(seq: int, reply: str = "r1") -> events_pb2.ServerEvent:
    return _event(seq, reply, text_block_delta=events_pb2.TextBlockDelta(delta=str(seq)))


def test_blocking_iteration_leaves_unread_events_in_line() -> None:
    """The blocking session takes the events received from its queue on the caller's thread; a
    caller that stops iterating mid-reply and iterates again gets every event exactly once, in
    order, and so does any other reader meanwhile."""
    session = parkway.Session(cast(Any, None), "s1", timeout=1)
    reader = session._reader

    def feed(*messages: events_pb2.ServerEvent) -> None:
        with reader.cond:
            for message in messages:
                reader.dispatch(message)

    with pytest.raises(parkway.DeadlineExceeded):  # nothing received: the deadline holds
        session.next_event(0.05)
    feed(*[_delta(seq) for seq in range(1, 11)])
    reading = cast(Generator[parkway.Event, None, None], session.until_settled())
    got = [next(reading) for _ in range(3)]
    assert len(reader.unread) == 7  # nothing is held by the iterator
    got.append(cast(parkway.Event, session.next_event(1)))  # another reader, meanwhile
    reading.close()
    assert [e.seq for e in got] == [1, 2, 3, 4]

    # A stop right after the first event, twice, then the reply's end and the next reply's
    # first event (left for later: until_settled ends at REPLY_END).
    for _ in range(2):
        reading = cast(Generator[parkway.Event, None, None], session.events())
        got.append(next(reading))
        reading.close()
    feed(_delta(11), _event(12, reply_end=events_pb2.ReplyEnd()), _delta(13, "r2"))
    got += list(session.until_settled())
    assert [e.seq for e in got] == list(range(1, 13))
    assert got[-1].kind == "reply_end" and session.last_seq == 13

    # What is left comes next, for any reader; the stream's end comes after it.
    feed(_delta(14, "r2"))
    first = session.next_event(1)
    assert first is not None and first.seq == 13 and session.last_seq == 14
    with reader.cond:
        reader.finish(None)
    assert [e.seq for e in session.events()] == [14]
    assert session.next_event(1) is None


def test_reconnects_after_grpcio_core_internal_only() -> None:
    from parkway.session import _reconnectable

    core = parkway.ParkwayError("Internal error from Core", code=grpc.StatusCode.INTERNAL)
    server = parkway.ParkwayError(
        "the reply failed on the server",
        code=grpc.StatusCode.INTERNAL,
        status=status_pb2.Status(code=13, message="the reply failed on the server"),
    )
    assert _reconnectable(core)
    assert not _reconnectable(server)
    assert _reconnectable(parkway.ParkwayError("gone", code=grpc.StatusCode.UNAVAILABLE))
    assert not _reconnectable(parkway.ParkwayError("no", code=grpc.StatusCode.NOT_FOUND))


def test_call_metadata_is_read_per_call_before_the_token() -> None:
    """`call_metadata` entries (a traceparent) go on every call, read when it starts."""
    parent = ["00-" + "1" * 32 + "-" + "2" * 16 + "-01"]
    client = parkway.Client(
        "127.0.0.1:1", token="t0k", call_metadata=lambda: {"traceparent": parent[0]}
    )
    with client:
        assert client.aio.metadata() == (
            ("traceparent", parent[0]),
            ("authorization", "Bearer t0k"),
        )
        parent[0] = "00-" + "3" * 32 + "-" + "4" * 16 + "-01"
        assert client.aio.metadata()[0] == ("traceparent", parent[0])
    with parkway.Client("127.0.0.1:1") as plain:
        assert plain.aio.metadata() == ()
