"""Notices, off the event loop, a reader that stopped reading: one thread for the whole process.

An :class:`parkway.AsyncSession` leaves the reading of its stream to the task iterating its events
(see ``AsyncSession._direct``) and needs to know when that task stops asking for events for a
while, so that its own reader task reads on. A timer on the event loop could tell, but costs the
stream CPU on every event: while a timer is scheduled, every wait of the loop for the next message
sets a kernel timeout (about a tenth more CPU per event read through grpc.aio), and arming and
cancelling one around every read costs a few microseconds per event in asyncio itself. This thread
looks instead, every ``period`` seconds, at the sessions being read that way, and calls back on a
session's loop only when one has not started a read for a whole period.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Protocol

__all__ = ["IdleWatch", "Watched"]


class Watched(Protocol):
    """What the watch asks of a session."""

    def _read_mark(self) -> int | None:
        """On the watch's thread: None while a read is in progress, else how many reads have been
        started so far (a counter, or any value that changes when a read starts)."""

    def _on_idle(self, mark: int) -> None:
        """On the session's loop: no read was started for a period, and none was in progress at
        either end of it (``mark``: the ``_read_mark()`` seen then). Called at most once per
        :meth:`IdleWatch.watch`; the session checks that the mark is still current."""


class IdleWatch:
    """The watching thread (a daemon, started when the first session is watched; it waits without
    waking up while nothing is watched)."""

    def __init__(self, period: float) -> None:
        self._period = period
        self._lock = threading.Lock()
        # Watched sessions: their loop and the mark seen at the last look (None: not looked yet,
        # or a read was in progress).
        self._watched: dict[Watched, tuple[asyncio.AbstractEventLoop, int | None]] = {}
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def watch(self, target: Watched, loop: asyncio.AbstractEventLoop) -> None:
        """Starts watching ``target`` (on ``loop``'s thread); a no-op when it is watched."""
        with self._lock:
            if target in self._watched:
                return
            self._watched[target] = (loop, None)
            thread = self._thread
            if thread is None or not thread.is_alive():  # first use, or after a fork
                thread = self._thread = threading.Thread(
                    target=self._run, name="parkway-idle-watch", daemon=True
                )
                thread.start()
        self._wake.set()

    def unwatch(self, target: Watched) -> None:
        """Stops watching ``target``; a no-op when it is not watched."""
        with self._lock:
            self._watched.pop(target, None)

    def _run(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            while self._look():
                time.sleep(self._period)

    def _look(self) -> bool:
        """One look at every watched session; False when none is watched."""
        idle: list[tuple[Watched, asyncio.AbstractEventLoop, int]] = []
        with self._lock:
            if not self._watched:
                return False
            for target, (loop, seen) in list(self._watched.items()):
                mark = target._read_mark()
                if mark is not None and mark == seen:
                    del self._watched[target]
                    idle.append((target, loop, mark))
                else:
                    self._watched[target] = (loop, mark)
        for target, loop, mark in idle:
            try:
                loop.call_soon_threadsafe(target._on_idle, mark)
            except RuntimeError:
                pass  # the loop is closed: nothing is left to read for
        return True
