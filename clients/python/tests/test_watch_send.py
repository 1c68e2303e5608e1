"""Watch, Send and ListMessages: a reply driven without a bidi stream, with the same events."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

import parkway
from parkway.v1 import content_pb2
from parkway_harness import Stack


@pytest.fixture
async def client(stack: Stack) -> AsyncIterator[parkway.AsyncClient]:
    async with parkway.AsyncClient(stack.address, timeout=10) as c:
        yield c


async def test_send_watch_and_list_messages(stack: Stack, client: parkway.AsyncClient) -> None:
    stack.model.reset({"turns": [{"text": "Hello over Watch."}]})
    session = await client.create_session("py-basic")
    ack = await client.send(session.id, "hi", request_id="hello-1")
    assert ack.request_id == "hello-1" and ack.reply_id
    # A retry is the same acknowledgement and applies nothing again.
    assert await client.send(session.id, "hi", request_id="hello-1") == ack
    with pytest.raises(parkway.InvalidArgument) as refused:
        await client.send(session.id, "something else", request_id="hello-1")
    assert "request_id" in refused.value.fields

    text = ""
    async for event in client.watch(session.id):
        if event.HasField("text_block_delta"):
            text += event.text_block_delta.delta
        if event.HasField("reply_end"):
            break
    assert text == "Hello over Watch."

    page = await client.list_messages(session.id, page_size=1)
    assert [m.id for m in page.messages] == [ack.reply_id]
    older = await client.list_messages(session.id, page_token=page.next_page_token)
    assert [m.role for m in older.messages] == [content_pb2.ROLE_USER]
    assert older.next_page_token == ""


async def test_watch_of_an_unknown_session_is_not_found(client: parkway.AsyncClient) -> None:
    with pytest.raises(parkway.NotFound):
        async for _ in client.watch("ses_unknown"):
            pass
