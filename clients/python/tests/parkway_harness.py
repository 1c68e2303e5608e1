"""Child processes for the tests: a Parkway server and the scripted mock model, from the repo root.

- :class:`ParkwayServer` runs ``npm start --silent -- [--config FILE] --listen ADDR --data DIR
  [--metrics-listen ADDR]``; it is ready once it logs a JSON line with ``"msg": "listening"`` and
  ``"address": "HOST:PORT"`` (with metrics on, that line also carries ``"metricsUrl"``).
- :class:`MockModel` runs ``node bin/parkway.js mock-model --script FILE --listen 127.0.0.1:0``; it is
  ready once it logs ``"msg": "listening"`` with ``"url": "http://HOST:PORT/v1"``. ``reset`` and
  ``requests`` use its ``/_scripted/reset`` and ``/_scripted/requests`` control endpoints.

Each child runs in its own process group; ``stop`` signals the whole group (SIGTERM, then SIGKILL
after a grace period) and ``kill`` sends SIGKILL at once (a crash).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

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


def _log_field(line: str, field: str) -> str | None:
    """The string `field` of a pino JSON line whose msg is "listening", else None."""
    if not line.startswith("{"):
        return None
    try:
        record = json.loads(line)
    except ValueError:
        return None
    if isinstance(record, dict) and record.get("msg") == "listening":
        value = record.get(field)
        if isinstance(value, str) and value:
            return value
    return None


class ChildProcess:
    """A child in its own process group whose combined stdout/stderr is drained into `lines`;
    `ready_value` is the first value `parse` finds in a line. With `stdin_pipe` its stdin is a pipe
    the child may watch (closing it tells the child to end), else /dev/null."""

    def __init__(
        self,
        argv: Sequence[str],
        cwd: Path,
        parse: Callable[[str], str | None],
        *,
        stdin_pipe: bool = False,
    ) -> None:
        self.argv = list(argv)
        self.lines: list[str] = []
        self.ready_value: str | None = None
        self._parse = parse
        self._ready = threading.Event()
        self._lock = threading.Lock()
        self.proc = subprocess.Popen(
            self.argv,
            cwd=cwd,
            stdin=subprocess.PIPE if stdin_pipe else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self._reader = threading.Thread(
            target=self._drain, name="parkway-child-output", daemon=True
        )
        self._reader.start()

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            with self._lock:
                self.lines.append(line)
            if self.ready_value is None:
                value = self._parse(line)
                if value is not None:
                    self.ready_value = value
                    self._ready.set()
        self._ready.set()  # output closed: wake wait_ready so it can report the exit

    def output(self) -> str:
        with self._lock:
            return "\n".join(self.lines)

    def wait_ready(self, timeout: float = START_TIMEOUT_S) -> str:
        """Returns the ready value; raises RuntimeError with the output otherwise."""
        deadline = time.monotonic() + timeout
        while not self._ready.wait(0.1):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                break
        code = self.proc.poll()
        if code is not None:
            self._reader.join(5)
        if self.ready_value is not None:
            return self.ready_value
        why = (
            f"exited with code {code}" if code is not None else f"was not ready within {timeout:g}s"
        )
        raise RuntimeError(f"{' '.join(self.argv)} {why}. Its output:\n{self.output()}")

    def stop(self, sig: signal.Signals = signal.SIGTERM) -> None:
        """Signals the whole group, then SIGKILLs whatever is left after the grace period."""
        pgid = self.proc.pid
        _signal_group(pgid, sig)
        deadline = time.monotonic() + STOP_GRACE_S
        while _group_alive(pgid) and time.monotonic() < deadline:
            self.proc.poll()  # reap the group leader so it stops counting as alive
            time.sleep(0.02)
        if _group_alive(pgid):
            _signal_group(pgid, signal.SIGKILL)
        self.proc.wait()
        self._reader.join(5)

    def kill(self) -> None:
        """SIGKILL to the whole group: a crash, no shutdown code runs."""
        self.stop(signal.SIGKILL)


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


class ParkwayServer:
    """A Parkway server (``npm start``) on a data directory; restartable on the same data. With
    `metrics_listen` it serves Prometheus metrics there, and `metrics_url` is the ``metricsUrl`` of
    its listening line (empty without metrics)."""

    def __init__(
        self,
        repo_root: Path,
        data_dir: Path,
        config: Path | None = None,
        listen: str = "127.0.0.1:0",
        metrics_listen: str | None = None,
    ) -> None:
        self.repo_root = repo_root
        self.data_dir = data_dir
        self.config = config
        self.listen = listen
        self.metrics_listen = metrics_listen
        self.address = ""
        self.metrics_url = ""
        self.process: ChildProcess | None = None

    def start(self, listen: str | None = None) -> str:
        """Starts the server (on `listen`, default the constructor's) and returns its address."""
        argv = ["npm", "start", "--silent", "--"]
        if self.config is not None:
            argv += ["--config", str(self.config)]
        argv += ["--listen", listen or self.listen, "--data", str(self.data_dir)]
        if self.metrics_listen is not None:
            argv += ["--metrics-listen", self.metrics_listen]
        self.process = ChildProcess(argv, self.repo_root, lambda line: _log_field(line, "address"))
        try:
            self.address = self.process.wait_ready()
        except RuntimeError:
            self.process.stop()
            raise
        self.metrics_url = ""
        if self.metrics_listen is not None:
            # The ready line was drained before wait_ready returned: it is among the lines.
            found = (_log_field(line, "metricsUrl") for line in list(self.process.lines))
            self.metrics_url = next((url for url in found if url is not None), "")
            if not self.metrics_url:
                self.process.stop()
                raise RuntimeError(
                    f"the listening line has no metricsUrl. Its output:\n{self.process.output()}"
                )
        return self.address

    def stop(self, sig: signal.Signals = signal.SIGTERM) -> None:
        if self.process is not None:
            self.process.stop(sig)

    def restart(self, *, crash: bool = False, same_address: bool = False) -> str:
        """Stops the server (SIGTERM, or SIGKILL when `crash`) and starts it again on the same
        data directory and config; on the same address when `same_address`. Returns the address."""
        old = self.address
        self.stop(signal.SIGKILL if crash else signal.SIGTERM)
        return self.start(old if same_address else None)

    def output(self) -> str:
        return self.process.output() if self.process is not None else ""

    @property
    def died(self) -> bool:
        return self.process is not None and self.process.proc.poll() is not None


class MockModel:
    """The scripted OpenAI-compatible model (``parkway mock-model``)."""

    def __init__(self, repo_root: Path, script_file: Path) -> None:
        argv = [
            "node",
            "bin/parkway.js",
            "mock-model",
            "--script",
            str(script_file),
            "--listen",
            "127.0.0.1:0",
        ]
        self.process = ChildProcess(argv, repo_root, lambda line: _log_field(line, "url"))
        try:
            self.url = self.process.wait_ready()
        except RuntimeError:
            self.process.stop()
            raise
        self.base = self.url.removesuffix("/").removesuffix("/v1")

    def reset(self, script: dict[str, Any]) -> None:
        """Starts over with `script`: forgets requests and played turns."""
        self._http("POST", "/_scripted/reset", script)

    def requests(self) -> list[dict[str, Any]]:
        """Every chat completion request body received since the last reset."""
        result = self._http("GET", "/_scripted/requests")
        assert isinstance(result, list)
        return result

    def _http(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(
            self.base + path, data=data, method=method, headers={"content-type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read().decode("utf-8"))

    def stop(self) -> None:
        self.process.stop()


class Stack:
    """A mock model and a Parkway server configured with `agents` that use it (and further
    top-level config keys from `extra_config`); with `metrics` the server serves Prometheus metrics
    on a free port of 127.0.0.1 (``server.metrics_url``)."""

    def __init__(
        self,
        root: Path,
        agents: list[dict[str, Any]],
        script: dict[str, Any] | None = None,
        extra_config: dict[str, Any] | None = None,
        *,
        metrics: bool = False,
    ) -> None:
        self.repo_root = find_repo_root()
        self.root = root
        script_file = root / "script.json"
        script_file.write_text(json.dumps(script or {"turns": []}), encoding="utf-8")
        self.model = MockModel(self.repo_root, script_file)
        config = root / "parkway.json"
        config.write_text(
            json.dumps(
                {
                    **(extra_config or {}),
                    "model": {"url": self.model.url, "name": "scripted", "maxRetries": 2},
                    "agents": agents,
                }
            ),
            encoding="utf-8",
        )
        self.server = ParkwayServer(
            self.repo_root, root / "data", config, metrics_listen="127.0.0.1:0" if metrics else None
        )
        try:
            self.server.start()
        except RuntimeError:
            self.model.stop()
            raise

    @property
    def address(self) -> str:
        return self.server.address

    def restart(self, *, crash: bool = False) -> None:
        """Restarts the server on its address (SIGKILL first when `crash`)."""
        self.server.restart(crash=crash, same_address=True)

    def close(self) -> None:
        try:
            self.server.stop()
        finally:
            self.model.stop()


def scenario_dir() -> Path:
    """test/scenarios of the repository."""
    return find_repo_root() / "test" / "scenarios"


def scenario_files() -> list[str]:
    """The scenario file names, sorted."""
    return sorted(p.name for p in scenario_dir().glob("*.json"))


def instantiate(text: str, workdir: Path) -> dict[str, Any]:
    """Parses a scenario with `$WORKDIR` replaced by `workdir` and `$REPO` by the repository's
    root (JSON-escaped)."""
    escaped = json.dumps(str(workdir))[1:-1]
    repo = json.dumps(str(find_repo_root()))[1:-1]
    scenario = json.loads(text.replace("$WORKDIR", escaped).replace("$REPO", repo))
    assert isinstance(scenario, dict)
    return scenario
