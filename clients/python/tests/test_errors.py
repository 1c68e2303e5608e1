"""Refusals surface as ParkwayError with the status code and the google.rpc details decoded, both
for inputs on the stream (input_ack) and for unary calls (grpc-status-details-bin)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
import pytest

import parkway
from parkway_harness import Stack

QUESTION_DB = "Which database should we use?"
QUESTION_FEATURES = "Which features do you need?"

ASK_USER_SCRIPT = {
    "turns": [
        {
            "toolCalls": [
                {
                    "id": "ask_1",
                    "name": "AskUser",
                    "input": {
                        "questions": [
                            {
                                "question": QUESTION_DB,
                                "header": "Database",
                                "options": [
                                    {"label": "Postgres", "description": "Relational, hosted"},
                                    {"label": "SQLite", "description": "Embedded file"},
                                ],
                            },
                            {
                                "question": QUESTION_FEATURES,
                                "header": "Features",
                                "multi_select": True,
                                "options": [
                                    {"label": "Auth", "description": "Login"},
                                    {"label": "Search", "description": "Full text"},
                                ],
                            },
                        ]
                    },
                }
            ]
        },
        {"text": "Noted."},
    ]
}


@pytest.fixture
async def client(stack: Stack) -> AsyncIterator[parkway.AsyncClient]:
    async with parkway.AsyncClient(stack.address, timeout=10) as c:
        yield c


async def test_unknown_ask_user_label_names_the_field(
    stack: Stack, client: parkway.AsyncClient
) -> None:
    stack.model.reset(ASK_USER_SCRIPT)
    session = await client.create_session("py-basic")
    chat = await client.attach(session.id)
    events = [e async for e in chat.send("set up", timeout=20)]
    assert [e.kind for e in events][-2:] == ["require_external_execution", "reply_parked"]
    (call,) = events[-2].tool_calls
    assert call.ask_user.questions[0].question == QUESTION_DB

    with pytest.raises(parkway.ParkwayError) as caught:
        await chat.answer(call, {QUESTION_DB: "Oracle", QUESTION_FEATURES: ["Auth"]})
    err = caught.value
    assert isinstance(err, parkway.InvalidArgument)
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT
    assert err.code_name == "INVALID_ARGUMENT"
    assert "external_execution_result.execution_results[0].ask_user.answers[0].selected[0]" in [
        field for field, _ in err.field_violations
    ]
    assert all(isinstance(v, parkway.FieldViolation) for v in err.field_violations)

    after = await client.get_session(session.id)
    assert after.status == parkway.v1.agent_service_pb2.SESSION_STATUS_AWAITING_EXTERNAL_RESULT
    assert after.last_seq == chat.last_seq  # nothing changed

    # The call id alone is enough: the session resolves it; Other() carries free text.
    await chat.answer(
        call.id, {QUESTION_DB: "SQLite", QUESTION_FEATURES: ["Auth", parkway.Other("and SSO")]}
    )
    rest = [e async for e in chat.until_settled(20)]
    assert rest[-1].kind == "reply_end"
    assert rest[-1].finished_reason == parkway.v1.content_pb2.FINISHED_REASON_COMPLETED
    ends = [e for e in rest if e.kind == "tool_result_end"]
    assert [(e.tool_call_id, e.result_state) for e in ends] == [(call.id, "SUCCESS")]
    seen = str(stack.model.requests()[-1]["messages"])
    assert "SQLite" in seen and "and SSO" in seen


async def test_wrong_state_inputs_carry_precondition_details(
    stack: Stack, client: parkway.AsyncClient
) -> None:
    stack.model.reset(
        {
            "turns": [
                {"toolCalls": [{"id": "b1", "name": "Bash", "input": {"command": "touch x.txt"}}]},
                {"text": "ok"},
            ]
        }
    )
    session = await client.create_session("py-basic")
    chat = await client.attach(session.id)
    kinds = [e.kind async for e in chat.send("touch", timeout=20)]
    assert kinds[-2:] == ["require_user_confirm", "reply_parked"]
    (call_id,) = chat.pending  # the server's id for the script's call b1
    assert call_id != "b1"

    with pytest.raises(parkway.FailedPrecondition) as parked:
        await chat.send_message("again")
    assert parked.value.code == grpc.StatusCode.FAILED_PRECONDITION
    assert call_id in parked.value.message

    with pytest.raises(parkway.NotFound):
        await chat.confirm("nope")

    with pytest.raises(parkway.FailedPrecondition) as wrong_kind:
        await chat.submit_result(call_id, "x")
    assert "awaiting confirmation" in wrong_kind.value.message

    # The unary Reply refuses the same way, decoded from grpc-status-details-bin.
    with pytest.raises(parkway.FailedPrecondition):
        await client.reply(session.id, "again")

    await chat.deny(call_id, "not today")
    rest = [e async for e in chat.until_settled(20)]
    assert [(e.tool_call_id, e.result_state) for e in rest if e.kind == "tool_result_end"] == [
        (call_id, "DENIED")
    ]
    assert "not today" in str(stack.model.requests()[-1]["messages"])
    assert chat.pending == {}


async def test_retried_reply_gets_the_first_outcome_and_a_reused_id_is_refused(
    stack: Stack, client: parkway.AsyncClient
) -> None:
    stack.model.reset(
        {
            "turns": [
                {"toolCalls": [{"id": "b1", "name": "Bash", "input": {"command": "touch y.txt"}}]},
                {"text": "ok"},
            ]
        }
    )
    session = await client.create_session("py-basic")
    parked = await client.reply(session.id, "touch", request_id="py-retry-1")
    assert parked.status == parkway.v1.agent_service_pb2.SESSION_STATUS_AWAITING_PERMISSION
    call_id = parked.pending_tool_calls[0].id
    answer = parkway.v1.events_pb2.ConfirmResult(
        confirmed=True, tool_call=parkway.v1.content_pb2.ToolCallBlock(id=call_id)
    )
    done = await client.reply(session.id, confirm=[answer], request_id="py-retry-2")
    assert done.message.finished_reason == parkway.v1.content_pb2.FINISHED_REASON_COMPLETED

    # The retry gets what the first call got (the waiting notice), not the session's state now.
    assert await client.reply(session.id, "touch", request_id="py-retry-1") == parked
    with pytest.raises(parkway.InvalidArgument) as reused:
        await client.reply(session.id, "something else", request_id="py-retry-1")
    assert [field for field, _ in reused.value.field_violations] == ["request_id"]
    assert "py-retry-1" in reused.value.message
    after = await client.get_session(session.id)
    assert after.status == parkway.v1.agent_service_pb2.SESSION_STATUS_IDLE


async def test_unary_errors_decode_status_details(client: parkway.AsyncClient) -> None:
    with pytest.raises(parkway.NotFound) as missing:
        await client.get_session("sess_does_not_exist")
    assert missing.value.code == grpc.StatusCode.NOT_FOUND

    with pytest.raises(parkway.InvalidArgument) as bad_tool:
        await client.create_session(
            "py-basic", external_tools=[{"name": "1 bad name", "input_schema": {"type": "object"}}]
        )
    assert "external_tools[0].name" in bad_tool.value.fields
    assert bad_tool.value.status is not None  # decoded from grpc-status-details-bin

    with pytest.raises(parkway.NotFound):
        await client.attach("sess_does_not_exist")

    session = await client.create_session("py-basic")
    with pytest.raises(parkway.InvalidArgument) as beyond:
        await client.attach(session.id, after_seq=99)
    assert "attach.after_seq" in beyond.value.fields


async def test_deadline_is_applied(client: parkway.AsyncClient) -> None:
    with pytest.raises(parkway.DeadlineExceeded) as late:
        await client.list_agents(timeout=0.000_001)
    assert isinstance(late.value, TimeoutError)
