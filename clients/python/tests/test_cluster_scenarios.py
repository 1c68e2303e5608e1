"""Runs every test/scenarios/*.json against three Parkway nodes on one PostgreSQL database.

The runner is scenario_runner.Runner with the session spread over the nodes: before step i its
stream moves to node i mod 3 (a new Chat stream with after_seq = the last seq it saw, as the
`reconnect` step makes, except that a pending call it already saw is not announced again) and the
step's input goes there. `restart` restarts every node gracefully on its address, `crash` SIGKILLs
every node and starts it again (same nodeId). A Watcher on node WATCH_NODE follows each session
from seq 0 for the whole scenario; at the end it must hold seqs 1..last without gap or duplicate,
with the same event ids at the same seqs as the runner's own streams. One cluster serves every
scenario (one agent per scenario file, as the single-server `stack`).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from typing import Any

import pytest

import parkway
from cluster_harness import Cluster, Watcher, log_problems
from parkway.v1 import events_pb2
from parkway_harness import scenario_files
from scenario_runner import SETTLE_TIMEOUT_S, Runner, prepare, scenario_agents

#: The node whose watcher follows every session of a scenario.
WATCH_NODE = 2
#: The nodes' database.leaseTimeout (PARKWAY_TEST_LEASE_TIMEOUT to try another).
LEASE_TIMEOUT = os.environ.get("PARKWAY_TEST_LEASE_TIMEOUT", "1s")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    root = tmp_path_factory.mktemp("cluster")
    try:
        nodes = Cluster(root, scenario_agents(root), lease_timeout=LEASE_TIMEOUT)
    except RuntimeError as err:
        pytest.fail(str(err), pytrace=False)
    try:
        yield nodes
    finally:
        died = nodes.died()
        nodes.close()
        if died:
            pytest.fail(
                "a Parkway node exited during the tests:\n" + "\n".join(died), pytrace=False
            )


class ClusterRunner(Runner):
    """Plays a scenario with its steps spread over the cluster's nodes, and watches each session."""

    def __init__(self, cluster: Cluster, agent_id: str, scenario: dict[str, Any]) -> None:
        super().__init__(cluster, agent_id, scenario)
        self.clients = [self.client] + [
            parkway.AsyncClient(address, timeout=15) for address in cluster.addresses[1:]
        ]
        self.node = 0
        self.watchers: list[Watcher] = []
        #: Event ids by seq, by session, as the runner's own streams delivered them.
        self.seen: dict[str, dict[int, str]] = {}
        #: Calls announced to the runner (REQUIRE_* events it read).
        self.announced: set[str] = set()
        #: Whether the current stream came from a move (it hides re-announcements already seen).
        self.moved = False

    async def open(self) -> None:
        await super().open()
        self.seen[self.session_id] = {}
        self.watchers.append(Watcher(self.clients[WATCH_NODE], self.session_id))

    async def before_step(self, index: int) -> None:
        node = index % len(self.clients)
        if node == self.node or self.chat is None:
            return
        last = self.chat.last_seq
        await self.chat.close()
        self.node, self.client = node, self.clients[node]
        # A node restarted by the step before may refuse connections for a moment (its channel is
        # backing off): a client moving to it tries again, as it would after any reconnect.
        for attempt in range(50):
            try:
                self.chat = await self.client.attach(self.session_id, last)
                break
            except parkway.Unavailable:
                if attempt == 49:
                    raise
                await asyncio.sleep(0.1)
        self.moved = True

    async def act(self, step: dict[str, Any]) -> None:
        await super().act(step)
        if step.get("reconnect"):
            self.moved = False  # the scenario's own fresh attach shows re-announcements

    async def settle(self) -> list[parkway.Event]:
        assert self.chat is not None
        events: list[parkway.Event] = []
        async for event in self.chat.until_settled(SETTLE_TIMEOUT_S):
            calls = {c.id for c in event.tool_calls}
            if event.seq == 0 and event.replayed and self.moved and calls <= self.announced:
                continue
            self.announced |= calls
            if event.seq:
                self.seen[self.session_id][event.seq] = event.id
            events.append(event)
        return events

    async def check_watchers(self) -> None:
        for watcher in self.watchers:
            session = await self.client.get_session(watcher.session_id)
            await watcher.wait_for(session.last_seq, SETTLE_TIMEOUT_S)
            await watcher.stop()
            problems = watcher.problems(session.last_seq, self.seen[watcher.session_id])
            assert not problems, f"session {watcher.session_id}: {problems}"

    async def close(self) -> None:
        for watcher in self.watchers:
            await watcher.stop()
        for client in self.clients:
            await client.close()


@pytest.mark.parametrize("file", scenario_files())
async def test_scenario_on_three_nodes(cluster: Cluster, file: str) -> None:
    stem, scenario = prepare(file, cluster.root, cluster.model)
    runner = ClusterRunner(cluster, stem, scenario)
    logged = cluster.mark()
    try:
        await asyncio.wait_for(runner.run(), 90)
        await runner.check_watchers()
    except AssertionError as err:
        # What the nodes logged (a lost lease, a failed write) says which node did what.
        raise AssertionError(
            "\n".join([str(err), "the nodes' warnings:", *cluster.warnings(logged)])
        ) from err
    finally:
        await runner.close()


def test_log_check_finds_gaps_duplicates_and_other_ids() -> None:
    def event(seq: int, id: str, replayed: bool = False) -> events_pb2.ServerEvent:
        return events_pb2.ServerEvent(seq=seq, id=id, replayed=replayed)

    whole = [event(1, "a"), event(2, "b", True), event(0, "r", True), event(3, "c")]
    assert log_problems(whole, 3, {1: "a", 3: "c"}) == []
    assert log_problems([event(1, "a"), event(3, "c")], 3, {}) != []  # a gap
    assert log_problems([event(1, "a"), event(2, "b"), event(2, "b")], 2, {}) != []  # duplicate
    assert log_problems([event(1, "a")], 2, {}) != []  # the end is missing
    assert log_problems([event(1, "a"), event(0, "x")], 1, {}) != []  # seq 0, not a replay
    assert log_problems([event(1, "a")], 1, {1: "z"}) != []  # another event at seq 1
