"""Test harness: a real Parkway server for the whole test session.

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
everything the server printed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

START_TIMEOUT_S = float(os.environ.get("PARKWAY_START_TIMEOUT", "60"))
STOP_GRACE_S = 10.0


def find_repo_root(start: Path | None = None) -> Path:
    """Returns the nearest directory at or above `start` (default: this file) holding the
    package.json whose "name" is "parkway"."""
    here = (start or Path(__file__)).resolve()
    for d in [here, *here.parents]:
        pkg = d / "package.json"
        if pkg.is_file():
            try:
                if json.loads(pkg.read_text(encoding="utf-8")).get("name") == "parkway":
                    return d
            except (OSError, ValueError):
                pass
    raise RuntimeError(f"no package.json with name 'parkway' at or above {here}")


class ServerProcess:
    """A Parkway server child process whose combined stdout/stderr is drained into `lines`."""

    def __init__(self, repo_root: Path, data_dir: Path) -> None:
        self.argv = [
            "npm", "start", "--silent", "--",
            "--listen", "127.0.0.1:0",
            "--data", str(data_dir),
        ]
        self.lines: list[str] = []
        self.address: str | None = None
        self._ready = threading.Event()
        self._lock = threading.Lock()
        self.proc = subprocess.Popen(
            self.argv,
            cwd=repo_root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self._reader = threading.Thread(target=self._drain, name="parkway-server-output", daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            with self._lock:
                self.lines.append(line)
            if self.address is None:
                address = _listening_address(line)
                if address is not None:
                    self.address = address
                    self._ready.set()
        self._ready.set()  # output closed: wake wait_ready so it can report the exit

    def output(self) -> str:
        with self._lock:
            return "\n".join(self.lines)

    def wait_ready(self, timeout: float) -> str:
        """Returns the listening address; raises RuntimeError with the output otherwise."""
        deadline = time.monotonic() + timeout
        while not self._ready.wait(0.1):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                break
        code = self.proc.poll()
        if code is not None:
            self._reader.join(5)  # collect the rest of the output
        if self.address is not None:
            return self.address
        why = f"exited with code {code}" if code is not None else f"did not log 'listening' within {timeout:g}s"
        raise RuntimeError(f"Parkway server ({' '.join(self.argv)}) {why}. Its output:\n{self.output()}")

    def stop(self) -> None:
        """Stops the whole process group: SIGTERM, then SIGKILL to whatever of the group is still
        alive after the grace period."""
        pgid = self.proc.pid
        _signal_group(pgid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        while _group_alive(pgid) and time.monotonic() < deadline:
            self.proc.poll()  # reap the group leader so it stops counting as alive
            time.sleep(0.05)
        if _group_alive(pgid):
            _signal_group(pgid, signal.SIGKILL)
        self.proc.wait()
        self._reader.join(5)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass


def _listening_address(line: str) -> str | None:
    if not line.startswith("{"):
        return None
    try:
        record = json.loads(line)
    except ValueError:
        return None
    if isinstance(record, dict) and record.get("msg") == "listening":
        address = record.get("address")
        if isinstance(address, str) and address:
            return address
    return None


@pytest.fixture(scope="session")
def parkway_addr(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    external = os.environ.get("PARKWAY_ADDR")
    if external:
        yield external
        return

    server = ServerProcess(find_repo_root(), tmp_path_factory.mktemp("parkway-data"))
    try:
        address = server.wait_ready(START_TIMEOUT_S)
    except RuntimeError as err:
        server.stop()
        pytest.fail(str(err), pytrace=False)
    try:
        yield address
    finally:
        died_early = server.proc.poll() is not None
        server.stop()
        if died_early:
            pytest.fail(
                f"Parkway server exited during the tests with code {server.proc.returncode}. "
                f"Its output:\n{server.output()}",
                pytrace=False,
            )


@pytest.fixture(scope="session")
def parkway_channel(parkway_addr: str) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(parkway_addr) as channel:
        grpc.channel_ready_future(channel).result(timeout=10)
        yield channel
