"""Test harness: a real Parkway server for the whole test session (each pytest-xdist worker
starts its own; scripts/test-py.sh runs two).

Fixtures:
  parkway_addr     "host:port" of a running Parkway server. Unless PARKWAY_ADDR is set (then that
                   server is used as is), the server is started from the repository root as
                   `npm start --silent -- --listen 127.0.0.1:0 --data <fresh tmp dir>`, in its own
                   process group, and is stopped when the session ends (SIGTERM to the group, then
                   SIGKILL after a grace period).
  parkway_channel  an insecure grpc.Channel to parkway_addr, ready before it is handed out.

The server is ready once it logs (pino JSON lines on stdout) an object with "msg": "listening" and
"address": "HOST:PORT"; that address is what parkway_addr yields. If no such line comes within
PARKWAY_START_TIMEOUT seconds (default 60), or the server exits first, the fixture fails with
everything the server printed. The process helpers live in parkway_harness.py; tests that need a
server with agents on the scripted model (scenarios, reconnect, the example) start their own
`parkway_harness.Stack`.
  metrics_stack    a Stack of its own with Prometheus metrics on (`server.metrics_url`), with the
                   agent and model script of metrics_support; used by test_metrics.py and
                   test_dashboard.py.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import grpc
import pytest

from metrics_support import SCRIPT, metrics_agent
from parkway_harness import ParkwayServer, Stack, find_repo_root

# The scenario runner's asserts are the scenario tests' checks: show their values on failure.
pytest.register_assert_rewrite("scenario_runner")
from scenario_runner import scenario_agents  # noqa: E402

#: Agents of the shared stack besides one per scenario (id = scenario file stem).
#: "py-basic": default permission mode, every built-in tool, its own working directory.
EXTRA_AGENTS = ("py-basic",)


@pytest.fixture(scope="session")
def parkway_addr(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    external = os.environ.get("PARKWAY_ADDR")
    if external:
        yield external
        return

    server = ParkwayServer(find_repo_root(), tmp_path_factory.mktemp("parkway-data"))
    try:
        address = server.start()
    except RuntimeError as err:
        pytest.fail(str(err), pytrace=False)
    try:
        yield address
    finally:
        died_early = server.died
        server.stop()
        if died_early:
            pytest.fail(
                f"Parkway server exited during the tests. Its output:\n{server.output()}",
                pytrace=False,
            )


@pytest.fixture(scope="session")
def parkway_channel(parkway_addr: str) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(parkway_addr) as channel:
        grpc.channel_ready_future(channel).result(timeout=10)
        yield channel


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """One mock model and one Parkway server for the whole test session, configured with one agent
    per scenario file (id = the file's stem, working directory <root>/<stem> shared by its sessions,
    the scenario's `agent` merged over it, `$WORKDIR` replaced) plus EXTRA_AGENTS (working directory
    <root>/<id>, in which each session gets its own <root>/<id>/<session id>). Tests reset the
    model's script before use, so they must not run concurrently."""
    root = tmp_path_factory.mktemp("stack")
    agents = scenario_agents(root)
    for agent_id in EXTRA_AGENTS:
        agents.append({"id": agent_id, "workingDirectories": [str(root / agent_id)]})
    yield from _serve(lambda: Stack(root, agents))


@pytest.fixture(scope="session")
def metrics_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """A mock model and a Parkway server serving /metrics on a free port, for the metrics tests.
    It has one agent, metrics_support.METRICS_AGENT, and plays metrics_support.SCRIPT; being a
    server of its own, its counters move only through the tests that use it."""
    root = tmp_path_factory.mktemp("metrics")
    yield from _serve(lambda: Stack(root, [metrics_agent(root)], SCRIPT, metrics=True))


def _serve(start: Callable[[], Stack]) -> Iterator[Stack]:
    """Starts a stack for a session-scoped fixture, and closes it after the tests; a server that
    died while the tests ran fails them with its output."""
    try:
        shared = start()
    except RuntimeError as err:
        pytest.fail(str(err), pytrace=False)
    try:
        yield shared
    finally:
        died_early = shared.server.died
        output = shared.server.output()
        shared.close()
        if died_early:
            pytest.fail(
                f"Parkway server exited during the tests. Its output:\n{output}", pytrace=False
            )
