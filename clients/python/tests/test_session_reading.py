"""Unit tests without a server: who reads an AsyncSession's stream. The task iterating the events
reads it itself; the session's reader task takes the reading back once that iteration ends or
pauses for a while (parkway.idle_watch notices the pause), so events keep coming in."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import grpc

import parkway
from parkway.idle_watch import IdleWatch
from parkway.v1 import events_pb2

# ---- the watch ----


class _Target:
    """A watched reader whose read marks are given in turn (the last one repeats)."""

    def __init__(self, marks: list[int | None]) -> None:
        self._marks = marks
        self.looks = 0
        self.idle: asyncio.Future[tuple[int, int]] = asyncio.get_running_loop().create_future()

    def _read_mark(self) -> int | None:
        self.looks += 1
        return self._marks.pop(0) if len(self._marks) > 1 else self._marks[0]

    def _on_idle(self, mark: int) -> None:
        self.idle.set_result((mark, self.looks))


async def test_watch_calls_back_after_two_looks_with_the_same_mark() -> None:
    """A read in progress (None) or started since the last look (a new mark) puts the call back
    off; two looks in a row at the same mark call the target back, on its loop, once."""
    watch = IdleWatch(0.005)
    busy = _Target([None, None, 1, 2, 3, 3])
    quiet = _Target([7])
    watch.watch(busy, asyncio.get_running_loop())
    watch.watch(quiet, asyncio.get_running_loop())
    assert await asyncio.wait_for(busy.idle, 10) == (3, 6)
    assert await asyncio.wait_for(quiet.idle, 10) == (7, 2)
    await asyncio.sleep(0.05)
    assert (busy.looks, quiet.looks) == (6, 2), "a target called back is no longer watched"


# ---- the session ----


class _Call:
    """A Chat call that reads what the test puts in it. Half-closed, it ends with OK (EOF) after
    what was put in before, as the server ends an idle session's stream (unless `end_on_half_close`
    is False: then the test puts the EOF)."""

    def __init__(self, end_on_half_close: bool = True) -> None:
        self.inbox: asyncio.Queue[object] = asyncio.Queue()
        self.reads = 0
        self.half_closed = False
        self.cancelled = False
        self._end_on_half_close = end_on_half_close

    async def read(self) -> object:
        message = await self.inbox.get()
        if message is not grpc.aio.EOF:
            self.reads += 1
        return message

    async def done_writing(self) -> None:
        self.half_closed = True
        if self._end_on_half_close:
            self.inbox.put_nowait(grpc.aio.EOF)

    def cancel(self) -> bool:
        self.cancelled = True
        return True


def _delta(seq: int) -> events_pb2.ServerEvent:
    return events_pb2.ServerEvent(
        seq=seq, session_id="s1", reply_id="r1", text_block_delta=events_pb2.TextBlockDelta()
    )


def _end(seq: int) -> events_pb2.ServerEvent:
    return events_pb2.ServerEvent(
        seq=seq, session_id="s1", reply_id="r1", reply_end=events_pb2.ReplyEnd()
    )


async def _reading_session(
    end_on_half_close: bool = True,
) -> tuple[parkway.AsyncSession, _Call]:
    session = parkway.AsyncSession(cast(Any, None), "s1", timeout=1)
    call = _Call(end_on_half_close)
    session._call = cast(Any, call)
    session._ready.set()
    session._loop = asyncio.get_running_loop()
    session._reader = session._loop.create_task(session._run_reader())
    return session, call


async def _until(condition: Any) -> None:
    for _ in range(1000):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the condition did not come true")


async def test_a_paused_iteration_leaves_the_reading_to_the_session() -> None:
    """An iteration that stops asking for events while it holds its iterator: the reader task
    reads on (last_seq follows the stream), and the iteration then gets every event once, in
    order."""
    session, call = await _reading_session()
    try:
        events = session.until_settled()
        for seq in (1, 2, 3):
            call.inbox.put_nowait(_delta(seq))
        got = [await anext(events) for _ in range(3)]
        assert session._direct, "the iterating task reads the call itself"

        for seq in (4, 5, 6):
            call.inbox.put_nowait(_delta(seq))
        call.inbox.put_nowait(_end(7))
        await _until(lambda: session.last_seq == 7)
        assert not session._direct and len(session._unread) == 4

        got += [event async for event in events]
        assert [e.seq for e in got] == list(range(1, 8)) and got[-1].kind == "reply_end"
        assert call.reads == 7
    finally:
        await session.close()


async def test_an_ended_iteration_leaves_the_reading_to_the_session() -> None:
    """Once an iteration ends (its reply settled, or the consumer broke out of it) the reader task
    reads at once; the next iteration takes the reading over again."""
    session, call = await _reading_session()
    try:
        for seq in (1, 2):
            call.inbox.put_nowait(_delta(seq))
        call.inbox.put_nowait(_end(3))
        assert [e.seq async for e in session.until_settled()] == [1, 2, 3]
        assert not session._direct

        call.inbox.put_nowait(_delta(4))
        await _until(lambda: session.last_seq == 4)
        events = session.events()
        assert (await anext(events)).seq == 4
        call.inbox.put_nowait(_delta(5))  # read by the reader task, which then hands over
        assert (await anext(events)).seq == 5
        call.inbox.put_nowait(_delta(6))
        assert (await anext(events)).seq == 6
        assert session._direct, "the iterating task reads the call itself again"
        await cast(Any, events).aclose()
        assert not session._direct
        assert call.reads == 6
    finally:
        await session.close()


async def test_close_half_closes_and_lets_the_reader_take_the_end() -> None:
    """close() while the iterating task reads the call itself: that read's event (it came after
    the close) is dropped, the reader task reads on to the server's end of the half-closed call,
    and nothing is cancelled; the iteration ends after the events received before."""
    session, call = await _reading_session(end_on_half_close=False)
    events = session.events()
    call.inbox.put_nowait(_delta(1))
    assert (await anext(events)).seq == 1
    assert session._direct, "the iterating task reads the call itself"
    pending = asyncio.ensure_future(anext(events))
    await _until(lambda: session._direct_reading)

    closing = asyncio.ensure_future(session.close())
    await _until(lambda: call.half_closed)
    call.inbox.put_nowait(_delta(2))  # after the close: read, not delivered
    call.inbox.put_nowait(grpc.aio.EOF)  # the server ends the call
    await asyncio.wait_for(closing, 0.5)  # well within the grace period
    assert call.inbox.empty() and call.reads == 2, "the reader task read the call to its end"
    reader = session._reader
    assert reader is not None and not reader.cancelled(), "the reader task ended by itself"
    try:
        await pending
    except StopAsyncIteration:
        pass
    else:
        raise AssertionError("an event read after close() was delivered")
    assert session.last_seq == 1
