"""A reply is bounded by the agent's maxReplyBytes (default 1.5 MiB), so a client with gRPC's
default 4 MiB receive limit receives everything about it: Reply, GetSession and a replay from
seq 0, whether the model wrote far more than the bound (the reply ends with ``reply_too_large``
and a ``[truncated: ...]`` marker) or the reply parked with large calls just under it."""

from __future__ import annotations

import parkway
from parkway.v1 import agent_service_pb2, content_pb2
from parkway_harness import Stack

CLIENT_LIMIT = 4 * 1024 * 1024
TICKET = {
    "name": "OpenTicket",
    "description": "Opens a ticket in the client's tracker.",
    "input_schema": {"type": "object", "properties": {"body": {"type": "string"}}},
}


def calls(count: int, size: int) -> list[dict[str, object]]:
    return [
        {"id": f"call_{n}", "name": "OpenTicket", "input": {"body": str(n) * size}}
        for n in range(1, count + 1)
    ]


async def replay(client: parkway.AsyncClient, session_id: str) -> list[parkway.Event]:
    last_seq = (await client.get_session(session_id)).last_seq
    chat = await client.attach(session_id, after_seq=0)
    events: list[parkway.Event] = []
    async for event in chat.events():
        events.append(event)
        if event.seq >= last_seq:
            break
    await chat.close()
    return events


async def test_a_reply_past_the_bound_is_cut_and_received(stack: Stack) -> None:
    stack.model.reset(
        {
            "turns": [
                {
                    "match": {"lastUser": "write a lot"},
                    "text": "t" * 1_000_000,
                    "toolCalls": calls(4, 600_000),
                    "chunkSize": 65536,
                }
            ]
        }
    )
    async with parkway.AsyncClient(stack.address, timeout=60) as client:
        session = await client.create_session("py-basic", external_tools=[TICKET])
        response = await client.reply(session.id, "write a lot")
        assert response.ByteSize() < CLIENT_LIMIT
        message = response.message
        assert message.finished_reason == content_pb2.FINISHED_REASON_ERROR
        assert message.error.code == "reply_too_large"
        assert "[truncated: this reply passed" in message.content[-1].text.text
        assert not [b for b in message.content if b.WhichOneof("block") == "tool_call"]

        events = await replay(client, session.id)
        assert events[-1].kind == "reply_end"
        assert max(e.raw.ByteSize() for e in events) < CLIENT_LIMIT
        state = await client.get_session(session.id)
        assert state.status == agent_service_pb2.SESSION_STATUS_IDLE


async def test_a_reply_parked_just_under_the_bound_is_received(stack: Stack) -> None:
    stack.model.reset(
        {
            "turns": [
                {
                    "match": {"lastUser": "open three"},
                    "toolCalls": calls(3, 480_000),
                    "chunkSize": 65536,
                }
            ]
        }
    )
    async with parkway.AsyncClient(stack.address, timeout=60) as client:
        session = await client.create_session(
            "py-basic", external_tools=[TICKET], permission_mode="bypass"
        )
        response = await client.reply(session.id, "open three")
        assert 2 * 3 * 480_000 < response.ByteSize() < CLIENT_LIMIT
        pending = response.pending_tool_calls
        # The server names the calls (the model's call_1..call_3), in the model's order.
        assert [c.input[len('{"body":"') :][:1] for c in pending] == ["1", "2", "3"]
        assert len({c.id for c in pending}) == 3
        state = await client.get_session(session.id)
        assert state.status == agent_service_pb2.SESSION_STATUS_AWAITING_EXTERNAL_RESULT
        assert len(state.pending_tool_calls) == 3
        events = await replay(client, session.id)
        assert events[-1].kind == "reply_parked"
        assert max(e.raw.ByteSize() for e in events) < CLIENT_LIMIT
