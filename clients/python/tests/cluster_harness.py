"""Several Parkway nodes on one PostgreSQL database, and a watcher that checks a session's log.

- :class:`Postgres` runs ``node --import tsx test/helpers/postgres-cli.ts`` from the repo root: a
  temporary PostgreSQL cluster that prints ``{"url": ..., "port": ...}`` on stdout, and stops and
  removes itself when its stdin closes (or on SIGTERM).
- :class:`Cluster` is a mock model and ``nodes`` :class:`ParkwayServer` processes with the same
  config plus ``"database": {"url": URL, "leaseTimeout": ..., "nodeId": "node-<i>"}``.
- :class:`Watcher` follows one session from seq 0 on a raw Chat stream and keeps every event as
  the server sent it, so that a gap or a duplicate shows (the clients drop duplicates themselves).
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import grpc

import parkway
from parkway.v1 import events_pb2
from parkway_harness import STOP_GRACE_S, ChildProcess, MockModel, ParkwayServer, find_repo_root

T = TypeVar("T")


def _url_line(line: str) -> str | None:
    """The line itself when it is postgres-cli's JSON line with the database URL."""
    if not line.startswith("{"):
        return None
    try:
        record = json.loads(line)
    except ValueError:
        return None
    return line if isinstance(record, dict) and isinstance(record.get("url"), str) else None


class Postgres:
    """A temporary PostgreSQL cluster with one database, ``url``."""

    def __init__(self, repo_root: Path) -> None:
        argv = ["node", "--import", "tsx", "test/helpers/postgres-cli.ts"]
        self.process = ChildProcess(argv, repo_root, _url_line, stdin_pipe=True)
        try:
            line = self.process.wait_ready()
        except RuntimeError:
            self.process.stop()
            raise
        self.url: str = json.loads(line)["url"]

    def stop(self) -> None:
        """Closes its stdin (it stops the cluster and removes its directory), then waits; signals
        the group (SIGTERM, then SIGKILL) only if it has not exited within the grace period."""
        proc = self.process.proc
        if proc.stdin is not None and not proc.stdin.closed:
            proc.stdin.close()
        try:
            proc.wait(STOP_GRACE_S)
        except Exception:
            pass
        self.process.stop()  # reaps the group; signals whatever is still running in it


def _each(items: list[T], action: Callable[[T], Any]) -> None:
    """Runs `action` on every item at once (each in a thread) and raises the first failure."""
    with ThreadPoolExecutor(max_workers=max(1, len(items))) as pool:
        for future in [pool.submit(action, item) for item in items]:
            future.result()


class Cluster:
    """A mock model and `nodes` Parkway nodes (``node-0``, ``node-1``, ...) configured with `agents`
    on one PostgreSQL database; each node in its own process group. Implements
    ``scenario_runner.Host``: ``address`` is node 0's."""

    def __init__(
        self,
        root: Path,
        agents: list[dict[str, Any]],
        *,
        nodes: int = 3,
        lease_timeout: str = "1s",
        script: dict[str, Any] | None = None,
    ) -> None:
        self.repo_root = find_repo_root()
        self.root = root
        self.servers: list[ParkwayServer] = []
        self.postgres = Postgres(self.repo_root)
        try:
            script_file = root / "script.json"
            script_file.write_text(json.dumps(script or {"turns": []}), encoding="utf-8")
            self.model = MockModel(self.repo_root, script_file)
            for i in range(nodes):
                database = {"url": self.postgres.url, "leaseTimeout": lease_timeout}
                config = root / f"node-{i}.json"
                config.write_text(
                    json.dumps(
                        {
                            "model": {"url": self.model.url, "name": "scripted", "maxRetries": 2},
                            "database": {**database, "nodeId": f"node-{i}"},
                            "agents": agents,
                        }
                    ),
                    encoding="utf-8",
                )
                # --data is required by the command line; with database.url it stays unused.
                self.servers.append(ParkwayServer(self.repo_root, root / f"unused-{i}", config))
            _each(self.servers, lambda server: server.start())
        except BaseException:
            self.close()
            raise

    @property
    def addresses(self) -> list[str]:
        return [server.address for server in self.servers]

    @property
    def address(self) -> str:
        return self.servers[0].address

    def restart(self, *, crash: bool = False) -> None:
        """Stops every node (SIGTERM, or SIGKILL to its process group when `crash`), then starts
        each again on its address with the same config (so the same nodeId)."""
        sig = signal.SIGKILL if crash else signal.SIGTERM
        _each(self.servers, lambda server: server.stop(sig))
        _each(self.servers, lambda server: server.start(server.address))

    def kill(self, index: int) -> None:
        """SIGKILL to node `index`'s process group: it dies without running any shutdown code."""
        self.servers[index].stop(signal.SIGKILL)

    def mark(self) -> list[tuple[ChildProcess | None, int]]:
        """Each node's process and how many lines it has logged so far (see :meth:`warnings`)."""
        return [(server.process, len(server.output().splitlines())) for server in self.servers]

    def warnings(self, since: list[tuple[ChildProcess | None, int]] | None = None) -> list[str]:
        """The lines the nodes logged at warn level or above (after the mark `since`; all of a
        node's lines when it restarted since), prefixed with the node's index."""
        out = []
        for i, server in enumerate(self.servers):
            skip = since[i][1] if since and since[i][0] is server.process else 0
            for line in server.output().splitlines()[skip:]:
                if line.startswith('{"level":40') or line.startswith('{"level":50'):
                    out.append(f"node-{i}: {line}")
        return out

    def died(self) -> list[str]:
        """The output of every node that exited on its own."""
        return [s.output() for s in self.servers if s.died and s.process is not None]

    def close(self) -> None:
        try:
            _each(self.servers, lambda server: server.stop())
        finally:
            model = getattr(self, "model", None)
            try:
                if model is not None:
                    model.stop()
            finally:
                self.postgres.stop()


class Watcher:
    """Follows session `session_id` through `client` from seq 0 on raw Chat streams until
    :meth:`stop`: after a broken stream (a node restarting or dying) it attaches again with
    after_seq = the last seq received. Keeps every event as sent, re-announcements included."""

    def __init__(self, client: parkway.AsyncClient, session_id: str) -> None:
        self.client = client
        self.session_id = session_id
        self.events: list[events_pb2.ServerEvent] = []
        self.last_seq = 0
        #: Why the watcher stopped on its own (an error it does not retry).
        self.failure: str | None = None
        #: The last error it retried (a refused or broken attach), for the report.
        self.last_error: str | None = None
        self._progress = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while True:
            call = self.client.agent_service.Chat(
                metadata=self.client.metadata(), wait_for_ready=True
            )
            try:
                retry = await self._follow(call)
            except grpc.aio.AioRpcError as err:
                # UNAVAILABLE: a node restarting or dying. grpcio's own INTERNAL "Internal error
                # from Core": the attach was written to a channel whose transport broke under it,
                # so nothing reached the server (the client's sessions re-attach after it too).
                retry = err.code() == grpc.StatusCode.UNAVAILABLE or (
                    err.code() == grpc.StatusCode.INTERNAL
                    and err.details() == "Internal error from Core"
                )
                self.last_error = f"{err.code().name}: {err.details()}"
                if not retry:
                    self.failure = self.last_error
            finally:
                call.cancel()
            if not retry:
                self._progress.set()
                return
            await asyncio.sleep(0.05)

    async def _follow(self, call: Any) -> bool:
        """Attaches on `call` and records events until the stream ends; False when the attach was
        refused for good."""
        request_id = uuid.uuid4().hex
        await call.write(
            events_pb2.ClientEvent(
                session_id=self.session_id,
                request_id=request_id,
                attach=events_pb2.Attach(session_id=self.session_id, after_seq=self.last_seq),
            )
        )
        while (message := await call.read()) is not grpc.aio.EOF:
            assert isinstance(message, events_pb2.ServerEvent)
            if message.WhichOneof("event") == "input_ack":
                status = message.input_ack.status
                if message.input_ack.request_id == request_id and status.code != 0:
                    self.last_error = f"attach refused: {status.code} {status.message}"
                    if status.code == grpc.StatusCode.UNAVAILABLE.value[0]:
                        return True  # a node starting or shutting down: attach again
                    self.failure = self.last_error
                    return False
                continue
            self.events.append(message)
            if message.seq:
                self.last_seq = max(self.last_seq, message.seq)
                self._progress.set()
        return True

    async def wait_for(self, seq: int, timeout: float) -> None:
        """Waits until an event with seq >= `seq` arrived (or the watcher failed, or `timeout`
        seconds passed: the check that follows then reports what is missing)."""
        deadline = time.monotonic() + timeout
        while self.last_seq < seq and self.failure is None:
            self._progress.clear()
            left = deadline - time.monotonic()
            if left <= 0:
                return
            try:
                await asyncio.wait_for(self._progress.wait(), left)
            except asyncio.TimeoutError:
                return

    async def stop(self) -> None:
        self._task.cancel()
        try:
            await self._task
        except (asyncio.CancelledError, Exception):
            pass

    def problems(self, last_seq: int, seen: dict[int, str]) -> list[str]:
        """What is wrong with what it received (see :func:`log_problems`), and why it stopped."""
        out = [] if self.failure is None else [f"the watcher stopped: {self.failure}"]
        out += log_problems(self.events, last_seq, seen)
        if out and self.last_error is not None:
            out.append(f"the watcher's last error: {self.last_error}")
        return out


def log_problems(
    events: list[events_pb2.ServerEvent], last_seq: int, seen: dict[int, str]
) -> list[str]:
    """What is wrong with `events` as a session's log from its start: their seqs, re-announcements
    (seq 0, replayed) left out, are not exactly 1..`last_seq` (a gap or a duplicate), or an event's
    id differs from the one `seen` (by seq) on other streams."""
    logged = [e for e in events if not (e.seq == 0 and e.replayed)]
    out = []
    seqs = [e.seq for e in logged]
    if seqs != list(range(1, last_seq + 1)):
        out.append(f"seqs received {seqs}, expected 1..{last_seq}")
    for event in logged:
        want = seen.get(event.seq)
        if want is not None and want != event.id:
            out.append(f"seq {event.seq}: event id {event.id} here, {want} on the runner's")
    return out
