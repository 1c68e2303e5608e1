"""Keepalive: the client pings by default while a call is open, its values can be changed or the
pings turned off, and an idle stream stays attached to a server that pings often."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from collections.abc import Iterator

import pytest

import parkway
from parkway_harness import Stack


def test_default_channel_options_include_keepalive() -> None:
    options = dict(parkway.Keepalive().channel_options())
    assert options == {
        "grpc.keepalive_time_ms": 30_000,
        "grpc.keepalive_timeout_ms": 20_000,
        "grpc.keepalive_permit_without_calls": 0,
        "grpc.http2.max_pings_without_data": 0,
    }


async def test_client_dials_with_keepalive_by_default() -> None:
    async with parkway.AsyncClient("127.0.0.1:1") as client:
        options = dict(client.channel_options)
        assert options["grpc.keepalive_time_ms"] == 30_000
        assert options["grpc.keepalive_timeout_ms"] == 20_000
        assert options["grpc.http2.max_pings_without_data"] == 0


async def test_keepalive_can_be_changed_or_turned_off() -> None:
    custom = parkway.AsyncClient("127.0.0.1:1", keepalive=parkway.Keepalive(time=10, timeout=5))
    off = parkway.AsyncClient("127.0.0.1:1", keepalive=parkway.Keepalive(enabled=False))
    overridden = parkway.AsyncClient("127.0.0.1:1", options=[("grpc.keepalive_time_ms", 60_000)])
    try:
        assert dict(custom.channel_options)["grpc.keepalive_time_ms"] == 10_000
        assert dict(custom.channel_options)["grpc.keepalive_timeout_ms"] == 5_000
        assert not any(k.startswith("grpc.keepalive") for k, _ in off.channel_options)
        # Later options win: the caller's own value is the one the channel uses.
        assert dict(overridden.channel_options)["grpc.keepalive_time_ms"] == 60_000
    finally:
        await custom.close()
        await off.close()
        await overridden.close()


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"time": 0}, "Keepalive.time"), ({"timeout": -1.0}, "Keepalive.timeout")],
)
def test_keepalive_refuses_bad_values(kwargs: dict[str, float], field: str) -> None:
    with pytest.raises(ValueError, match=field):
        parkway.Keepalive(**kwargs)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def pinging_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    root = tmp_path_factory.mktemp("keepalive")
    stack = Stack(
        root,
        [{"id": "ka", "workingDirectories": [str(root / "work")]}],
        {"turns": [{"match": {"lastUser": ""}, "repeat": True, "text": "Still here."}]},
        {"keepalive": {"time": "500ms", "timeout": "1s"}, "limits": {"streamsPerSession": 1}},
    )
    try:
        yield stack
    finally:
        stack.close()


async def test_idle_stream_with_frequent_pings_stays_attached(pinging_stack: Stack) -> None:
    no_reconnect = parkway.ReconnectPolicy(enabled=False)
    async with parkway.AsyncClient(
        pinging_stack.address, keepalive=parkway.Keepalive(time=0.2, timeout=1.0)
    ) as client:
        info = await client.create_session("ka")
        session = await client.attach(info.id, reconnect=no_reconnect)
        # The stream carries nothing for 3 s: about 15 client pings and 6 of the server's.
        await asyncio.sleep(3)
        with pytest.raises(parkway.ResourceExhausted):
            await client.attach(info.id, reconnect=no_reconnect)
        events = [e async for e in session.send("hi", timeout=20)]
        assert "".join(e.text for e in events if e.kind == "text_block_delta") == "Still here."
        assert events[-1].kind == "reply_end"
        await session.close()


PINGER = """
import asyncio, sys
import parkway

async def main() -> None:
    address, session_id = sys.argv[1:3]
    keepalive = parkway.Keepalive(time=1.0, timeout=1.0)
    async with parkway.AsyncClient(address, keepalive=keepalive) as client:
        session = await client.attach(session_id)
        await asyncio.sleep(6.5)
        await session.close()

asyncio.run(main())
"""


@pytest.fixture(scope="module")
def quiet_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    root = tmp_path_factory.mktemp("keepalive-quiet")
    stack = Stack(
        root,
        [{"id": "ka", "workingDirectories": [str(root / "work")]}],
        extra_config={"keepalive": {"enabled": False}},
    )
    try:
        yield stack
    finally:
        stack.close()


async def test_client_keeps_pinging_on_an_idle_stream(quiet_stack: Stack) -> None:
    # A server that sends no pings of its own, so that the client hears nothing for its keepalive
    # time (grpcio pings only then). grpcio logs each ping it sends with GRPC_TRACE=http_keepalive;
    # without grpc.http2.max_pings_without_data=0 it stops after 2 pings on a stream without data
    # (3 pings in all here), with it it goes on at its keepalive time (one a second here).
    async with parkway.AsyncClient(quiet_stack.address) as client:
        info = await client.create_session("ka")
    env = {**os.environ, "GRPC_VERBOSITY": "debug", "GRPC_TRACE": "http_keepalive"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        PINGER,
        quiet_stack.address,
        info.id,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(proc.communicate(), timeout=60)
    log = out.decode(errors="replace")
    assert proc.returncode == 0, log
    sent = [line for line in log.splitlines() if re.search(r"Ping \d+ sent", line)]
    assert len(sent) >= 5, log
