"""A session survives server restarts by itself: it re-attaches with after_seq = the last seq it
saw, the consumer sees every event exactly once, and a pending confirmation can still be answered.

These tests crash and restart their own server (on the same data directory and address), so they
do not share the session-wide stack.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import parkway
from parkway.v1 import agent_service_pb2, content_pb2
from parkway_harness import Stack
from tcp_proxy import Proxy

IDLE = agent_service_pb2.SESSION_STATUS_IDLE
STREAMED = "A reply long enough to be cut in the middle of its streaming, twice over."

SCRIPT = {
    "turns": [
        {
            "match": {"lastUser": "make a file"},
            "toolCalls": [
                {"id": "c1", "name": "Bash", "input": {"command": "touch made.txt && echo made"}}
            ],
        },
        {"match": {"toolName": "Bash"}, "text": "Created it."},
        {"match": {"lastUser": "hello"}, "repeat": True, "text": "Hi there."},
        {"match": {"lastUser": "stream"}, "text": STREAMED, "chunkSize": 4, "delayMs": 40},
    ]
}


@pytest.fixture(scope="module")
def own_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Stack, Path]]:
    root = tmp_path_factory.mktemp("reconnect")
    workdir = root / "work"
    stack = Stack(root, [{"id": "rc", "workingDirectories": [str(workdir)]}], SCRIPT)
    try:
        yield stack, workdir
    finally:
        stack.close()


def assert_exactly_once(events: list[parkway.Event], last_seq: int) -> None:
    """Logged events (seq > 0) arrive once each, in order, with no gap from 1 to last_seq."""
    seqs = [e.seq for e in events if e.seq]
    assert seqs == list(range(1, last_seq + 1)), seqs


async def test_sigkill_while_parked_reconnects_and_resumes(own_stack: tuple[Stack, Path]) -> None:
    stack, _ = own_stack
    stack.model.reset(SCRIPT)
    async with parkway.AsyncClient(
        stack.address, timeout=20, reconnect=parkway.ReconnectPolicy(give_up_after=60)
    ) as client:
        session = await client.create_session("rc")
        chat = await client.attach(session.id)
        seen = [e async for e in chat.send("make a file", timeout=20)]
        assert [e.kind for e in seen][-2:] == ["require_user_confirm", "reply_parked"]
        (call_id,) = chat.pending  # the server's id for the script's call c1

        # Crash: SIGKILL, no shutdown code runs; then the server comes back on the same address.
        await asyncio.to_thread(stack.server.restart, crash=True, same_address=True)

        # Answer the pending confirmation through the same session object: the input waits until
        # the session has re-attached, then goes out on the new stream.
        await chat.confirm(call_id)
        rest = [e async for e in chat.until_settled(20)]
        assert chat.reconnects >= 1

        # The re-announced REQUIRE_USER_CONFIRM (seq 0) was already delivered: it is not repeated.
        everything = seen + rest
        assert [e.kind for e in everything].count("require_user_confirm") == 1
        assert [(e.tool_call_id, e.result_state) for e in rest if e.kind == "tool_result_end"] == [
            (call_id, "SUCCESS")
        ]
        assert rest[-1].kind == "reply_end"
        assert rest[-1].finished_reason == parkway.v1.content_pb2.FINISHED_REASON_COMPLETED
        assert_exactly_once(everything, chat.last_seq)
        assert (Path(session.working_directories[0]) / "made.txt").exists()

        final = await client.get_session(session.id)
        assert final.status == parkway.v1.agent_service_pb2.SESSION_STATUS_IDLE
        assert final.last_seq == chat.last_seq

        # A fresh attach from seq 0 replays the whole history, marked replayed, once.
        fresh = await client.attach(session.id)
        replay: list[parkway.Event] = []
        while len(replay) < final.last_seq:
            event = await fresh.next_event(timeout=10)
            assert event is not None
            replay.append(event)
        assert all(e.replayed for e in replay)
        assert [e.seq for e in replay] == [e.seq for e in everything if e.seq]
        await fresh.close()


async def test_graceful_restart_while_idle_then_give_up(own_stack: tuple[Stack, Path]) -> None:
    stack, _ = own_stack
    stack.model.reset(SCRIPT)
    policy = parkway.ReconnectPolicy(give_up_after=1.0, max_delay=0.2)
    async with parkway.AsyncClient(stack.address, timeout=20, reconnect=policy) as client:
        session = await client.create_session("rc")
        chat = await client.attach(session.id)
        first = [e async for e in chat.send("hello", timeout=20)]
        assert first[-1].kind == "reply_end"

        # SIGTERM: the server ends the stream with UNAVAILABLE; within the policy's second the
        # server is not back yet, so the session gives up and says why.
        await asyncio.to_thread(stack.server.stop)
        with pytest.raises(parkway.Unavailable):
            await chat.next_event(timeout=15)
        with pytest.raises(parkway.Unavailable):
            await chat.send_message("hello")

        await asyncio.to_thread(stack.server.start, stack.address)
        await asyncio.wait_for(client.channel.channel_ready(), 10)
        again = await client.attach(session.id, chat.last_seq)
        second = [e async for e in again.send("hello", timeout=20)]
        assert second[0].kind == "reply_start" and not second[0].replayed
        assert second[-1].kind == "reply_end"
        assert_exactly_once(first + second, again.last_seq)


async def test_input_waiting_for_a_stream_ends_with_the_session(
    own_stack: tuple[Stack, Path],
) -> None:
    """An input waiting while its session re-attaches ends when the session does: ``Cancelled``
    once the session is closed, the session's ``Unavailable`` once it gives up; not
    ``DeadlineExceeded`` when the input's own timeout is up."""
    stack, _ = own_stack
    stack.model.reset(SCRIPT)
    stays = parkway.ReconnectPolicy(give_up_after=60, max_delay=0.2)
    gives_up = parkway.ReconnectPolicy(give_up_after=3.0, max_delay=0.2)
    async with (
        parkway.AsyncClient(stack.address, timeout=20, reconnect=stays) as client,
        parkway.AsyncClient(stack.address, timeout=20, reconnect=gives_up) as other,
    ):
        closed = await client.attach((await client.create_session("rc")).id)
        abandoned = await other.attach((await other.create_session("rc")).id)
        await asyncio.to_thread(stack.server.stop)
        try:
            await asyncio.sleep(0.5)  # both streams ended: the sessions re-attach
            to_closed = asyncio.create_task(closed.send_message("hello", timeout=30))
            to_abandoned = asyncio.create_task(abandoned.send_message("hello", timeout=30))
            await asyncio.sleep(0.3)
            assert not to_closed.done() and not to_abandoned.done()
            began = time.monotonic()
            await closed.close()
            with pytest.raises(parkway.Cancelled):
                await asyncio.wait_for(to_closed, 5)
            with pytest.raises(parkway.Unavailable):
                await asyncio.wait_for(to_abandoned, 10)
            assert time.monotonic() - began < 10
        finally:
            await asyncio.to_thread(stack.server.start, stack.address)


async def test_cut_connection_mid_reply_replays_missed_events(
    own_stack: tuple[Stack, Path],
) -> None:
    """The stream breaks twice while the reply streams on the server; each time the session
    re-attaches from its last seq, the missed events arrive replayed, and none is seen twice."""
    stack, _ = own_stack
    stack.model.reset(SCRIPT)
    proxy = Proxy(stack.address)
    address = await proxy.start()
    try:
        async with parkway.AsyncClient(address, timeout=20) as client:
            session = await client.create_session("rc")
            chat = await client.attach(session.id)
            # Each new connection answers after 0.15 s: the server streams about three deltas
            # (40 ms apart) before the session is back, however fast it reconnects.
            proxy.first_reply_delay = 0.15
            events: list[parkway.Event] = []
            cuts = 0
            async for event in chat.send("stream", timeout=30):
                events.append(event)
                deltas = sum(e.kind == "text_block_delta" for e in events)
                if deltas in (2, 8) and cuts < (1 if deltas == 2 else 2):
                    cuts += 1
                    proxy.cut()
                    await asyncio.sleep(0.3)  # the server streams on meanwhile
            assert cuts == 2 and chat.reconnects == 2
            assert events[-1].kind == "reply_end"
            assert events[-1].finished_reason == content_pb2.FINISHED_REASON_COMPLETED
            assert any(e.replayed for e in events), "missed events come back replayed"
            assert "".join(e.text for e in events if e.kind == "text_block_delta") == STREAMED
            assert_exactly_once(events, chat.last_seq)
    finally:
        await proxy.close()


async def test_input_whose_ack_was_lost_is_resent_and_applied_once(
    own_stack: tuple[Stack, Path],
) -> None:
    """The server applies a confirmation but its acknowledgement never arrives; the stream then
    breaks. The session re-attaches and sends the confirmation again with the same request id: the
    server acknowledges it without applying it twice, so confirm() returns normally."""
    stack, _ = own_stack
    stack.model.reset(SCRIPT)
    proxy = Proxy(stack.address)
    address = await proxy.start()
    try:
        async with parkway.AsyncClient(address, timeout=20) as client:
            session = await client.create_session("rc")
            chat = await client.attach(session.id)
            seen = [e async for e in chat.send("make a file", timeout=20)]
            assert seen[-1].kind == "reply_parked"
            (call_id,) = chat.pending

            proxy.mute_downstream = True
            confirming = asyncio.create_task(chat.confirm(call_id))
            async with parkway.AsyncClient(stack.address) as direct:  # not through the proxy
                deadline = asyncio.get_running_loop().time() + 10
                while (await direct.get_session(session.id)).status != IDLE:
                    assert asyncio.get_running_loop().time() < deadline, "confirm not applied"
                    await asyncio.sleep(0.05)
                # The status reads idle once the reply has ended in memory; its last events may
                # still be on their way to the store. The history is read once they are stored:
                # after this, a re-attach finds every event of the reply stored (replayed).
                await direct.list_messages(session.id)
            assert not confirming.done(), "its acknowledgement cannot have arrived"
            proxy.mute_downstream = False
            proxy.cut()

            await asyncio.wait_for(confirming, 20)  # resent, acknowledged as already applied
            rest = [e async for e in chat.until_settled(20)]
            assert chat.reconnects == 1
            assert all(e.replayed for e in rest), "everything after the confirm was missed live"
            everything = seen + rest
            ends = [
                (e.tool_call_id, e.result_state) for e in everything if e.kind == "tool_result_end"
            ]
            assert ends == [(call_id, "SUCCESS")]
            assert everything[-1].kind == "reply_end"
            assert_exactly_once(everything, chat.last_seq)
            assert (Path(session.working_directories[0]) / "made.txt").exists()
    finally:
        await proxy.close()


async def test_reader_cancelled_mid_reply_loses_nothing(own_stack: tuple[Stack, Path]) -> None:
    """A task iterating send() reads the call itself; cancelling it while it waits for the next
    event costs grpc the call, and the session attaches again by itself: the rest of the reply
    arrives (replayed where missed), every event once. A consumer that stops iterating mid-reply
    leaves the reading to the session, which keeps receiving the events meanwhile."""
    stack, _ = own_stack
    stack.model.reset(SCRIPT)
    async with parkway.AsyncClient(stack.address, timeout=20) as client:
        session = await client.create_session("rc")
        chat = await client.attach(session.id)
        seen: list[parkway.Event] = []
        three = asyncio.Event()

        async def consume() -> None:
            async for event in chat.send("stream"):
                seen.append(event)
                if sum(e.kind == "text_block_delta" for e in seen) == 3:
                    three.set()

        task = asyncio.create_task(consume())
        await asyncio.wait_for(three.wait(), 20)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

        # Stop iterating after two more deltas; the session reads on while nobody iterates.
        async for event in chat.events():
            seen.append(event)
            if sum(e.kind == "text_block_delta" for e in seen) == 5:
                break
        deadline = asyncio.get_running_loop().time() + 20
        while (await client.get_session(session.id)).status != IDLE:
            assert asyncio.get_running_loop().time() < deadline, "the reply did not end"
            await asyncio.sleep(0.05)
        last_seq = (await client.get_session(session.id)).last_seq
        for _ in range(100):
            if chat.last_seq == last_seq:
                break
            await asyncio.sleep(0.05)
        assert chat.last_seq == last_seq, "the events came in while nobody iterated"

        seen += [e async for e in chat.until_settled(20)]
        assert seen[-1].kind == "reply_end"
        assert "".join(e.text for e in seen if e.kind == "text_block_delta") == STREAMED
        assert_exactly_once(seen, chat.last_seq)
        assert chat.reconnects == 0
        after = [e async for e in chat.send("hello")]
        assert [e.kind for e in after][-1] == "reply_end" and not after[0].replayed


async def test_server_slow_to_answer_the_handshake_is_waited_for(
    own_stack: tuple[Stack, Path],
) -> None:
    """A server whose HTTP/2 SETTINGS come late (busy, or on a loaded host) is still reached: the
    client's connection attempt waits for them instead of failing the call with UNAVAILABLE."""
    stack, _ = own_stack
    proxy = Proxy(stack.address)
    proxy.first_reply_delay = 0.6
    address = await proxy.start()
    try:
        async with parkway.AsyncClient(address, timeout=20) as client:
            session = await client.create_session("rc")
            assert (await client.get_session(session.id)).status == IDLE
    finally:
        await proxy.close()
