"""Closing a session does not reset its stream, so a client may open and close sessions without
end on one connection.

A closed session half-closes its Chat stream and the server ends it with OK. A stream reset
(RST_STREAM, what cancelling a call sends) counts against the server's rate limit on resets (the
HTTP/2 "rapid reset" protection of Node.js: about 1,000 at once, then 33 a second), past which the
server sends GOAWAY (INTERNAL_ERROR) and takes no new call on that connection. Each test opens one
client, attaches a long-lived session, then creates, attaches and closes CHURN sessions in a row,
past that limit had each close reset its stream. Every call must succeed, the long-lived session
(which does not reconnect) must still work afterwards, and the client must still be on the
connections it opened first: the client reaches the server through a proxy that counts them.

These tests start a server of their own, so that the sessions they create do not show up in the
shared stack's listings.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator

import pytest

import parkway
from parkway_harness import Stack
from tcp_proxy import Proxy

#: Sessions created, attached and closed in a row, well past the server's burst of resets.
CHURN = 1500
AGENT = "churn"
SCRIPT = {"turns": [{"match": {"lastUser": "still there?"}, "repeat": True, "text": "Still here."}]}
# The long-lived session fails rather than re-attaching when its stream breaks.
NO_RECONNECT = parkway.ReconnectPolicy(enabled=False)


@pytest.fixture(scope="module")
def churn_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    root = tmp_path_factory.mktemp("churn")
    stack = Stack(root, [{"id": AGENT, "workingDirectories": [str(root / "work")]}], SCRIPT)
    try:
        yield stack
    finally:
        stack.close()


@pytest.fixture
def proxy(churn_stack: Stack) -> Iterator[tuple[str, Proxy]]:
    """A proxy in front of the server, on an event loop of its own (the client's loop or thread
    does not carry its traffic); yields the address to connect to and the proxy."""
    churn_stack.model.reset(SCRIPT)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="churn-proxy", daemon=True)
    thread.start()
    counting = Proxy(churn_stack.address)
    try:
        address = asyncio.run_coroutine_threadsafe(counting.start(), loop).result(10)
        yield address, counting
    finally:
        asyncio.run_coroutine_threadsafe(_stop(counting), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


async def _stop(proxy: Proxy) -> None:
    await proxy.close()
    others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in others:
        task.cancel()
    await asyncio.gather(*others, return_exceptions=True)


def _reply_text(events: list[parkway.Event]) -> str:
    assert events and events[-1].kind == "reply_end", [e.kind for e in events]
    return "".join(e.text for e in events if e.kind == "text_block_delta")


async def test_async_sessions_closed_in_a_row_keep_the_connection(
    proxy: tuple[str, Proxy],
) -> None:
    address, counting = proxy
    async with parkway.AsyncClient(address, timeout=20) as client:
        kept = await client.create_session(AGENT)
        keeper = await client.attach(kept.id, reconnect=NO_RECONNECT)
        connections = counting.accepted
        replaced_at: int | None = None  # the session after whose close a connection was added
        started = time.monotonic()
        for n in range(1, CHURN + 1):
            try:
                info = await client.create_session(AGENT)
                session = await client.attach(info.id)
                await session.close()
            except parkway.ParkwayError as err:
                pytest.fail(f"session {n} of {CHURN} failed: {err!r}")
            if replaced_at is None and counting.accepted != connections:
                replaced_at = n
        churned = time.monotonic() - started

        text = _reply_text([e async for e in keeper.send("still there?", timeout=20)])
        assert text == "Still here."
        assert keeper.reconnects == 0 and not keeper.closed
        assert connections == 1
        assert counting.accepted == connections, f"a new connection after session {replaced_at}"
        # A close takes far less than the grace period: the server ends an idle session's
        # half-closed stream at once.
        assert churned < CHURN * 0.1, f"{CHURN} sessions took {churned:.1f}s"


def test_blocking_sessions_closed_in_a_row_keep_the_connection(
    proxy: tuple[str, Proxy],
) -> None:
    address, counting = proxy
    with parkway.Client(address, timeout=20) as client:
        kept = client.create_session(AGENT)
        keeper = client.attach(kept.id, reconnect=NO_RECONNECT)
        # One connection for the unary calls, one for the sessions' streams.
        connections = counting.accepted
        replaced_at: int | None = None
        started = time.monotonic()
        for n in range(1, CHURN + 1):
            try:
                info = client.create_session(AGENT)
                session = client.attach(info.id)
                session.close()
            except parkway.ParkwayError as err:
                pytest.fail(f"session {n} of {CHURN} failed: {err!r}")
            if replaced_at is None and counting.accepted != connections:
                replaced_at = n
        churned = time.monotonic() - started

        text = _reply_text(list(keeper.send("still there?", timeout=20)))
        assert text == "Still here."
        assert keeper.reconnects == 0 and not keeper.closed
        assert connections == 2
        assert counting.accepted == connections, f"a new connection after session {replaced_at}"
        assert churned < CHURN * 0.1, f"{CHURN} sessions took {churned:.1f}s"
