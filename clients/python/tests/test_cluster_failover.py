"""Failover: a reply parked through one node is answered through another after the first dies.

Three nodes A, B and C on one PostgreSQL database (leaseTimeout 1s) serve an agent in the default
mode, where a Bash command that writes a file asks. Through node A a user message parks the reply
on REQUIRE_USER_CONFIRM; node A is SIGKILLed; the Python client approves the call through node B
and the reply completes (the command ran once). Meanwhile the Go client, attached to node C from
seq 0 (clients/go/internal/cmd/watch), must see every event from seq 1 without a gap: those
emitted on A before the kill and those emitted on B after it.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

import parkway
from cluster_harness import Cluster
from parkway.v1 import content_pb2
from parkway_harness import STOP_GRACE_S, find_repo_root

T = TypeVar("T")

COMMAND = "echo ran >> ran.txt && echo ran"
SCRIPT = {
    "turns": [
        {"toolCalls": [{"id": "b1", "name": "Bash", "input": {"command": COMMAND}}]},
        {"text": "It ran."},
    ]
}
TIMEOUT_S = 30.0


@pytest.fixture
def watch_binary(tmp_path: Path) -> Path:
    """The Go watch program, built from clients/go (building first keeps compile time out of the
    test's waits)."""
    go = shutil.which("go")
    if go is None:
        pytest.fail("the failover test needs Go (go on PATH) to build its Go client", pytrace=False)
    binary = tmp_path / "watch"
    subprocess.run(
        [go, "build", "-o", str(binary), "./internal/cmd/watch"],
        cwd=find_repo_root() / "clients" / "go",
        check=True,
        timeout=300,
    )
    return binary


@pytest.fixture
def nodes(tmp_path: Path) -> Iterator[Cluster]:
    agent = {
        "id": "failover",
        "workingDirectories": [str(tmp_path / "work")],
        "shareWorkingDirectories": True,
    }
    try:
        cluster = Cluster(tmp_path, [agent], script=SCRIPT, lease_timeout="1s")
    except RuntimeError as err:
        pytest.fail(str(err), pytrace=False)
    try:
        yield cluster
    finally:
        cluster.close()


class GoWatcher:
    """The Go watch program on one node: its JSON lines as they come, and its exit code."""

    def __init__(self, binary: Path, address: str, session_id: str) -> None:
        self.lines: list[dict[str, Any]] = []
        self._changed = threading.Condition()
        self.proc = subprocess.Popen(
            [str(binary), address, session_id],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            with self._changed:
                self.lines.append(json.loads(raw))
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def wait_for_seq(self, seq: int, timeout: float) -> bool:
        """Whether a line with seq >= `seq` came before `timeout` seconds or the program's end."""
        with self._changed:
            return self._changed.wait_for(
                lambda: (
                    any(line["seq"] >= seq for line in self.lines) or not self._reader.is_alive()
                ),
                timeout,
            ) and any(line["seq"] >= seq for line in self.lines)

    def finish(self, timeout: float) -> tuple[int, str]:
        """Its exit code and stderr once it exits (killed after `timeout` seconds)."""
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.stop()
        self._reader.join(5)
        assert self.proc.stderr is not None
        return self.proc.returncode, self.proc.stderr.read().decode("utf-8", "replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(STOP_GRACE_S)


async def retry_leased(action: Callable[[], Awaitable[T]]) -> T:
    """Runs `action`, again while a node refuses it because another still holds the session's
    lease (UNAVAILABLE, SESSION_LEASED: a dead node's lease runs out within the lease timeout),
    as the README tells clients to do."""
    deadline = asyncio.get_running_loop().time() + TIMEOUT_S
    while True:
        try:
            return await action()
        except parkway.ParkwayError as err:
            leased = err.code_name == "UNAVAILABLE" and err.reason == "SESSION_LEASED"
            if not leased or asyncio.get_running_loop().time() > deadline:
                raise
        await asyncio.sleep(0.1)


async def test_parked_reply_answered_on_another_node_after_a_crash(
    nodes: Cluster, watch_binary: Path
) -> None:
    node_a, node_b, node_c = nodes.addresses
    client_a = parkway.AsyncClient(node_a, timeout=15)
    client_b = parkway.AsyncClient(node_b, timeout=15)
    watcher: GoWatcher | None = None
    try:
        session = await client_a.create_session("failover")
        chat_a = await client_a.attach(session.id)
        before = [e async for e in chat_a.send("run it", timeout=TIMEOUT_S)]
        assert [e.kind for e in before[-2:]] == ["require_user_confirm", "reply_parked"]
        call = before[-2].tool_calls[0]
        parked_seq = before[-1].seq

        # The Go client follows the session on node C from seq 0; once it has the parked reply's
        # events it is attached there.
        watcher = GoWatcher(watch_binary, node_c, session.id)
        assert await asyncio.to_thread(watcher.wait_for_seq, parked_seq, TIMEOUT_S), (
            watcher.finish(1),
            watcher.lines,
        )

        await asyncio.to_thread(nodes.kill, 0)
        await client_a.close()

        chat_b = await retry_leased(lambda: client_b.attach(session.id, parked_seq))
        await retry_leased(lambda: chat_b.confirm(call.id))
        after = [e async for e in chat_b.until_settled(TIMEOUT_S)]
        assert after[-1].kind == "reply_end", [e.kind for e in after]
        assert after[-1].finished_reason == content_pb2.FINISHED_REASON_COMPLETED, (
            after[-1].raw.reply_end,
            [(e.seq, e.kind) for e in after],
            nodes.warnings(),
        )
        results = [e for e in after if e.kind == "tool_result_end"]
        assert [(e.tool_call_id, e.result_state) for e in results] == [(call.id, "SUCCESS")]
        work = nodes.root / "work"
        assert (work / "ran.txt").read_text(encoding="utf-8") == "ran\n"

        code, stderr = await asyncio.to_thread(watcher.finish, TIMEOUT_S)
        assert code == 0, stderr
        last_seq = (await client_b.get_session(session.id)).last_seq
        logged = [line for line in watcher.lines if not (line["seq"] == 0 and line["replayed"])]
        assert [line["seq"] for line in logged] == list(range(1, last_seq + 1)), watcher.lines
        assert logged[-1]["kind"] == "reply_end"
        # The Go client saw what node A emitted before it died and what node B emitted after.
        by_seq = {line["seq"]: line["kind"] for line in logged}
        for event in [*before, *after]:
            if event.seq:
                assert by_seq[event.seq] == event.kind, (event.seq, watcher.lines)
        assert before[0].seq == 1 and after[-1].seq == last_seq
    finally:
        if watcher is not None:
            watcher.stop()
        await client_a.close()
        await client_b.close()
