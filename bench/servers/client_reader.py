"""Reader of the client rows (bench/suites/clients.ts): reads whole streamed replies from a Parkway
server, either through the Python client or through the raw generated grpcio stubs, and reports
this process's CPU time for them. One process per side, so the CPU it reports is that side's own.

argv: ADDRESS MODE REPLIES, MODE one of
- "aio-client": parkway.AsyncClient; create_session("bench"), attach, then per reply
  ``async for event in session.send("stream")`` (the message is sent, its input_ack awaited, then
  the events are read until REPLY_END), counting the events whose ``kind`` is text_block_delta.
- "aio-stub": the grpcio aio AgentServiceStub on grpc.aio.insecure_channel; CreateSession, one Chat
  call, the attach written and its input_ack read; per reply the user message is written and
  ``await call.read()`` repeats until REPLY_END (the message's input_ack is one of the events read),
  counting the events whose ``WhichOneof("event")`` is text_block_delta.
- "sync-client": parkway.Client (the blocking client), as aio-client with ``for event in
  session.send("stream")``.
- "sync-stub": the blocking grpcio AgentServiceStub on grpc.insecure_channel; Chat fed from a
  queue.Queue by grpcio's request thread; per reply the user message is put on the queue and
  ``next(responses)`` repeats until REPLY_END, counting as aio-stub.

Once attached it reads one reply (warm-up) and prints {"ready": true, "versions": {...}}. Then each
line on stdin ("next") runs REPLIES replies back to back and prints one JSON line: {"cpu_s": user +
system CPU seconds of this process (resource.getrusage) during them, "wall_s", "deltas", "replies"}.
It exits when stdin closes.
"""

from __future__ import annotations

import asyncio
import json
import queue
import resource
import sys
import time
from collections.abc import Callable, Iterator
from importlib import metadata
from typing import Any

import grpc

from parkway import AsyncClient, Client
from parkway.v1 import agent_service_pb2, agent_service_pb2_grpc, events_pb2

AGENT = "bench"
TEXT = "stream"


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def versions() -> dict[str, str]:
    out = {"python": sys.version.split()[0]}
    for name in ("grpcio", "protobuf"):
        out[name] = metadata.version(name)
    return out


def user_message(session_id: str, n: int) -> events_pb2.ClientEvent:
    return events_pb2.ClientEvent(
        session_id=session_id,
        request_id=f"{session_id}-m{n}",
        user_message=events_pb2.UserMessage(text=TEXT),
    )


def attach_event(session_id: str) -> events_pb2.ClientEvent:
    return events_pb2.ClientEvent(
        session_id=session_id,
        request_id=f"attach-{session_id}",
        attach=events_pb2.Attach(session_id=session_id),
    )


def report(measure: Callable[[], int], replies: int) -> None:
    c0, t0 = cpu_seconds(), time.perf_counter()
    deltas = measure()
    wall, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    print(json.dumps({"cpu_s": cpu, "wall_s": wall, "deltas": deltas, "replies": replies}))


def commands() -> Iterator[str]:
    print(json.dumps({"ready": True, "versions": versions()}), flush=True)
    for line in sys.stdin:
        yield line.strip()
        sys.stdout.flush()


# ---- asyncio ----


async def aio_client(address: str, replies: int) -> None:
    client = AsyncClient(address)
    session = await client.attach((await client.create_session(AGENT)).id)

    async def reply() -> int:
        deltas = 0
        async for event in session.send(TEXT):
            if event.kind == "text_block_delta":
                deltas += 1
        return deltas

    await aio_loop(reply, replies)
    await client.close()


async def aio_stub(address: str, replies: int) -> None:
    channel = grpc.aio.insecure_channel(address)
    stub: Any = agent_service_pb2_grpc.AgentServiceStub(channel)  # type: ignore[no-untyped-call]
    created = await stub.CreateSession(agent_service_pb2.CreateSessionRequest(agent_id=AGENT))
    sid = created.session.id
    call = stub.Chat()
    await call.write(attach_event(sid))
    await call.read()  # the attach's input_ack
    sent = 0

    async def reply() -> int:
        nonlocal sent
        sent += 1
        await call.write(user_message(sid, sent))
        deltas = 0
        while True:
            event = await call.read()
            kind = event.WhichOneof("event")
            if kind == "text_block_delta":
                deltas += 1
            elif kind == "reply_end":
                return deltas

    await aio_loop(reply, replies)
    call.cancel()
    await channel.close()


async def aio_loop(reply: Callable[[], Any], replies: int) -> None:
    await reply()  # warm-up
    for _ in commands():  # stdin is read while nothing runs on the loop
        c0, t0 = cpu_seconds(), time.perf_counter()
        deltas = 0
        for _ in range(replies):
            deltas += await reply()
        wall, cpu = time.perf_counter() - t0, cpu_seconds() - c0
        print(json.dumps({"cpu_s": cpu, "wall_s": wall, "deltas": deltas, "replies": replies}))


# ---- blocking ----


def sync_client(address: str, replies: int) -> None:
    with Client(address) as client:
        session = client.attach(client.create_session(AGENT).id)

        def reply() -> int:
            deltas = 0
            for event in session.send(TEXT):
                if event.kind == "text_block_delta":
                    deltas += 1
            return deltas

        sync_loop(reply, replies)


def sync_stub(address: str, replies: int) -> None:
    channel = grpc.insecure_channel(address)
    stub: Any = agent_service_pb2_grpc.AgentServiceStub(channel)  # type: ignore[no-untyped-call]
    sid = stub.CreateSession(agent_service_pb2.CreateSessionRequest(agent_id=AGENT)).session.id
    outbox: queue.Queue[events_pb2.ClientEvent | None] = queue.Queue()
    outbox.put(attach_event(sid))
    responses = stub.Chat(iter(outbox.get, None))
    next(responses)  # the attach's input_ack
    sent = 0

    def reply() -> int:
        nonlocal sent
        sent += 1
        outbox.put(user_message(sid, sent))
        deltas = 0
        while True:
            kind = next(responses).WhichOneof("event")
            if kind == "text_block_delta":
                deltas += 1
            elif kind == "reply_end":
                return deltas

    sync_loop(reply, replies)
    outbox.put(None)
    responses.cancel()
    channel.close()


def sync_loop(reply: Callable[[], int], replies: int) -> None:
    reply()  # warm-up
    for _ in commands():
        report(lambda: sum(reply() for _ in range(replies)), replies)


def main() -> None:
    address, mode, replies = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if mode == "aio-client":
        asyncio.run(aio_client(address, replies))
    elif mode == "aio-stub":
        asyncio.run(aio_stub(address, replies))
    elif mode == "sync-client":
        sync_client(address, replies)
    elif mode == "sync-stub":
        sync_stub(address, replies)
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main()
