"""The blocking session over its own blocking stream: it re-attaches by itself after a crash or a
cut connection (every event exactly once, lost acknowledgements resent), gives up per its policy,
keeps its deadlines, and can be closed from another thread while one reads.

Like test_reconnect.py (whose proxy and checks these reuse), these crash and restart their own
server. A blocking flow that needs the asyncio proxy runs in a worker thread of the test's loop.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_reconnect import SCRIPT, STREAMED, assert_exactly_once

import parkway
from parkway.v1 import agent_service_pb2, content_pb2
from parkway_harness import Stack
from tcp_proxy import Proxy

IDLE = agent_service_pb2.SESSION_STATUS_IDLE


@pytest.fixture(scope="module")
def blocking_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    root = tmp_path_factory.mktemp("blocking-reconnect")
    stack = Stack(root, [{"id": "rc", "workingDirectories": [str(root / "work")]}], SCRIPT)
    try:
        yield stack
    finally:
        stack.close()


def test_sigkill_while_parked_reconnects_and_resumes(blocking_stack: Stack) -> None:
    stack = blocking_stack
    stack.model.reset(SCRIPT)
    policy = parkway.ReconnectPolicy(give_up_after=60)
    with parkway.Client(stack.address, timeout=20, reconnect=policy) as client:
        session = client.create_session("rc")
        chat = client.attach(session.id)
        seen = list(chat.send("make a file", timeout=20))
        assert [e.kind for e in seen][-2:] == ["require_user_confirm", "reply_parked"]
        (call_id,) = chat.pending

        stack.server.restart(crash=True, same_address=True)
        chat.confirm(call_id)  # waits until the session re-attached, then goes out
        rest = list(chat.until_settled(20))
        assert chat.reconnects >= 1

        everything = seen + rest
        assert [e.kind for e in everything].count("require_user_confirm") == 1
        assert [(e.tool_call_id, e.result_state) for e in rest if e.kind == "tool_result_end"] == [
            (call_id, "SUCCESS")
        ]
        assert rest[-1].finished_reason == content_pb2.FINISHED_REASON_COMPLETED
        assert_exactly_once(everything, chat.last_seq)
        assert (Path(session.working_directories[0]) / "made.txt").exists()
        final = client.get_session(session.id)
        assert final.status == IDLE and final.last_seq == chat.last_seq


def test_graceful_restart_while_idle_then_give_up(blocking_stack: Stack) -> None:
    stack = blocking_stack
    stack.model.reset(SCRIPT)
    policy = parkway.ReconnectPolicy(give_up_after=1.0, max_delay=0.2)
    with parkway.Client(stack.address, timeout=20, reconnect=policy) as client:
        session = client.create_session("rc")
        chat = client.attach(session.id)
        first = list(chat.send("hello", timeout=20))
        assert first[-1].kind == "reply_end"

        stack.server.stop()
        with pytest.raises(parkway.Unavailable):
            chat.next_event(timeout=15)
        with pytest.raises(parkway.Unavailable):
            chat.send_message("hello")

        stack.server.start(stack.address)
        again = _attach_when_back(client, session.id, chat.last_seq)
        second = list(again.send("hello", timeout=20))
        assert second[0].kind == "reply_start" and not second[0].replayed
        assert second[-1].kind == "reply_end"
        assert_exactly_once(first + second, again.last_seq)


def _attach_when_back(client: parkway.Client, session_id: str, after_seq: int) -> parkway.Session:
    """Attaches once the restarted server accepts connections (within 10 s)."""
    deadline = time.monotonic() + 10
    while True:
        try:
            return client.attach(session_id, after_seq)
        except parkway.Unavailable:
            assert time.monotonic() < deadline, "the server did not come back"
            time.sleep(0.1)


async def test_cut_connection_mid_reply_replays_missed_events(blocking_stack: Stack) -> None:
    """Cut twice while the reply streams, read without a deadline (on the caller's thread): each
    time the session re-attaches from its last seq and nothing is lost or seen twice."""
    stack = blocking_stack
    stack.model.reset(SCRIPT)
    proxy = Proxy(stack.address)
    address = await proxy.start()
    loop = asyncio.get_running_loop()

    def flow() -> tuple[list[parkway.Event], int, int]:
        with parkway.Client(address, timeout=20) as client:
            chat = client.attach(client.create_session("rc").id)
            # Each new connection answers after 0.15 s: the server streams about three deltas
            # (40 ms apart) before the session is back, however fast it reconnects.
            proxy.first_reply_delay = 0.15
            events: list[parkway.Event] = []
            cuts = 0
            for event in chat.send("stream"):
                events.append(event)
                deltas = sum(e.kind == "text_block_delta" for e in events)
                if deltas in (2, 8) and cuts < (1 if deltas == 2 else 2):
                    cuts += 1
                    loop.call_soon_threadsafe(proxy.cut)
                    time.sleep(0.3)  # the server streams on meanwhile
            return events, chat.reconnects, chat.last_seq

    try:
        events, reconnects, last_seq = await asyncio.to_thread(flow)
    finally:
        await proxy.close()
    assert reconnects == 2
    assert events[-1].finished_reason == content_pb2.FINISHED_REASON_COMPLETED
    assert any(e.replayed for e in events), "missed events come back replayed"
    assert "".join(e.text for e in events if e.kind == "text_block_delta") == STREAMED
    assert_exactly_once(events, last_seq)


async def test_input_whose_ack_was_lost_is_resent_and_applied_once(blocking_stack: Stack) -> None:
    stack = blocking_stack
    stack.model.reset(SCRIPT)
    proxy = Proxy(stack.address)
    address = await proxy.start()
    client = await asyncio.to_thread(parkway.Client, address, timeout=20)
    try:
        session = await asyncio.to_thread(client.create_session, "rc")
        chat = await asyncio.to_thread(client.attach, session.id)
        seen = await asyncio.to_thread(lambda: list(chat.send("make a file", timeout=20)))
        assert seen[-1].kind == "reply_parked"
        (call_id,) = chat.pending

        proxy.mute_downstream = True
        confirming = asyncio.ensure_future(asyncio.to_thread(chat.confirm, call_id))
        async with parkway.AsyncClient(stack.address) as direct:  # not through the proxy
            deadline = time.monotonic() + 10
            while (await direct.get_session(session.id)).status != IDLE:
                assert time.monotonic() < deadline, "confirm not applied"
                await asyncio.sleep(0.05)
        assert not confirming.done(), "its acknowledgement cannot have arrived"
        proxy.mute_downstream = False
        proxy.cut()

        await asyncio.wait_for(confirming, 20)  # resent, acknowledged as already applied
        rest = await asyncio.to_thread(lambda: list(chat.until_settled(20)))
        assert chat.reconnects == 1
        everything = seen + rest
        ends = [(e.tool_call_id, e.result_state) for e in everything if e.kind == "tool_result_end"]
        assert ends == [(call_id, "SUCCESS")]
        assert everything[-1].kind == "reply_end"
        assert_exactly_once(everything, chat.last_seq)
    finally:
        await asyncio.to_thread(client.close)
        await proxy.close()


def test_deadlines_and_close_from_another_thread(blocking_stack: Stack) -> None:
    """A wait with a deadline ends on time on an idle stream, and the stream reads on after it
    (with and without deadlines); close() from another thread ends a reader blocked without one."""
    stack = blocking_stack
    stack.model.reset(SCRIPT)
    with parkway.Client(stack.address, timeout=20) as client:
        chat = client.attach(client.create_session("rc").id)
        started = time.monotonic()
        with pytest.raises(parkway.DeadlineExceeded):
            chat.next_event(timeout=0.3)
        assert 0.3 <= time.monotonic() - started < 5
        first = list(chat.send("hello", timeout=20))  # with a deadline
        second = list(chat.send("hello"))  # without: read on this thread
        assert first[-1].kind == second[-1].kind == "reply_end"
        assert_exactly_once(first + second, chat.last_seq)

        got: list[object] = []
        reading = threading.Thread(target=lambda: got.extend(chat.events()))
        reading.start()
        time.sleep(0.3)  # it blocks reading the idle stream
        assert reading.is_alive()
        chat.close()
        reading.join(5)
        assert not reading.is_alive() and got == []
        assert chat.closed
        with pytest.raises(parkway.Cancelled):
            chat.send_message("hello")
