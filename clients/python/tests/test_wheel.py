"""The package as Python users get it: `python -m build` makes an sdist and, from it, a wheel; the
wheel installed with pip into a fresh virtual environment (no system site packages, nothing but its
own dependencies) has the repository's version and runs examples/python/approve.py against a real
server."""

from __future__ import annotations

import email.parser
import importlib.util
import json
import os
import re
import subprocess
import sys
import tarfile
import venv
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

import parkway
from parkway_harness import Stack, find_repo_root

PROJECT = find_repo_root() / "clients" / "python"
SOURCE = PROJECT / "src" / "parkway"
TEST_ONLY_MODULES = ("grpc_health", "grpc_reflection")  # the test extra's, not the package's
QUESTION = "Which database should we use?"

SCRIPT = {
    "turns": [
        {
            "match": {"lastUser": "set up the project"},
            "toolCalls": [
                {"id": "e1", "name": "Bash", "input": {"command": "touch approved.txt && echo ok"}}
            ],
        },
        {
            "match": {"toolName": "Bash"},
            "toolCalls": [
                {
                    "id": "e2",
                    "name": "AskUser",
                    "input": {
                        "questions": [
                            {
                                "question": QUESTION,
                                "header": "Database",
                                "options": [
                                    {"label": "Postgres", "description": "Relational, hosted"},
                                    {"label": "SQLite", "description": "Embedded file"},
                                ],
                            }
                        ]
                    },
                }
            ],
        },
        {
            "match": {"toolName": "AskUser"},
            "text": "All set: approved.txt exists and we use Postgres.",
        },
    ]
}


@dataclass(frozen=True)
class Dist:
    sdist: Path
    wheel: Path  # built from the sdist


def repo_version() -> str:
    """The version of every package: the repository's package.json."""
    pkg = json.loads((find_repo_root() / "package.json").read_text(encoding="utf-8"))
    return str(pkg["version"])


def clean_env() -> dict[str, str]:
    """This environment without what would point another interpreter at this one's packages."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


def build(args: list[str], out: Path) -> tuple[list[Path], str]:
    """Runs `python -m build ARGS --outdir OUT`, returning the files it made and its log."""
    result = subprocess.run(
        [sys.executable, "-m", "build", *args, "--outdir", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        env=clean_env(),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return sorted(out.iterdir()), result.stdout + result.stderr


def requirement(line: str) -> tuple[str, str]:
    """A Requires-Dist line's distribution name and environment marker ("" when it has none)."""
    spec, _, marker = line.partition(";")
    name = re.match(r"[A-Za-z0-9._-]+", spec.strip())
    assert name, line
    return name.group(), marker.strip()


def wheel_files(wheel: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(wheel) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Dist:
    """`python -m build clients/python`: an sdist, then a wheel built from that sdist."""
    made, log = build([str(PROJECT)], tmp_path_factory.mktemp("dist"))
    assert "Building wheel from sdist" in log, log
    sdists = [p for p in made if p.name.endswith(".tar.gz")]
    wheels = [p for p in made if p.suffix == ".whl"]
    assert len(sdists) == 1 and len(wheels) == 1 and len(made) == 2, made
    return Dist(sdist=sdists[0], wheel=wheels[0])


@pytest.fixture(scope="module")
def installed_python(dist: Dist, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The interpreter of a fresh venv in which only `pip install <the wheel>` ran."""
    env_dir = tmp_path_factory.mktemp("wheel-venv")
    venv.EnvBuilder(with_pip=True, clear=True, system_site_packages=False).create(env_dir)
    python = env_dir / "bin" / "python"
    result = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(dist.wheel)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd="/",
        env=clean_env(),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return python


def run_in(python: Path, code: str) -> list[str]:
    """The lines `python -c CODE` prints, run outside this checkout."""
    result = subprocess.run(
        [str(python), "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        cwd="/",
        env=clean_env(),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout.splitlines()


def test_wheel_holds_the_package_and_nothing_else(dist: Dist) -> None:
    version = repo_version()
    assert dist.wheel.name == f"parkway-{version}-py3-none-any.whl"
    assert dist.sdist.name == f"parkway-{version}.tar.gz"

    names = set(wheel_files(dist.wheel))
    info = f"parkway-{version}.dist-info/"
    assert {n for n in names if not n.startswith(info)} == {
        f"parkway/{p.relative_to(SOURCE).as_posix()}"
        for p in SOURCE.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert {"parkway/__init__.py", "parkway/_version.py", "parkway/py.typed"} <= names
    assert f"{info}licenses/LICENSE" in names, "the wheel carries no license text"
    stubs = sorted(n for n in names if n.startswith("parkway/v1/") and n.endswith("_pb2.py"))
    assert stubs, "no generated parkway/v1 modules in the wheel"
    for stub in stubs:
        assert f"{stub}i" in names, f"{stub} without its .pyi"
        assert stub.replace("_pb2.py", "_pb2_grpc.py") in names
    assert not [n for n in names if n.startswith("tests/") or "/test_" in n or "conftest" in n]


def test_wheel_metadata(dist: Dist) -> None:
    with zipfile.ZipFile(dist.wheel) as zf:
        raw = zf.read(f"parkway-{repo_version()}.dist-info/METADATA").decode("utf-8")
    meta = email.parser.Parser().parsestr(raw)
    assert meta["Name"] == "parkway"
    assert meta["Version"] == repo_version()
    assert meta["Requires-Python"] == ">=3.10"
    assert meta["License-Expression"] == "Apache-2.0"
    assert meta["Description-Content-Type"] == "text/markdown"
    assert "# parkway (Python client)" in meta.get_payload()
    assert "Typing :: Typed" in meta.get_all("Classifier", [])
    assert set(meta.get_all("Provides-Extra", [])) == {"test", "lint"}

    requires = [requirement(r) for r in meta.get_all("Requires-Dist", [])]
    assert {name for name, marker in requires if not marker} == {
        "grpcio",
        "grpcio-status",
        "protobuf",
        "googleapis-common-protos",
    }
    test_extra = {name for name, marker in requires if marker == "extra == 'test'"}
    assert {"grpcio-health-checking", "grpcio-reflection", "build", "pytest"} <= test_extra


def test_sdist_builds_the_same_wheel(dist: Dist, tmp_path: Path) -> None:
    """The sdist is complete: the wheel built from it equals one built from the source tree."""
    with tarfile.open(dist.sdist) as tf:
        names = {n.split("/", 1)[1] for n in tf.getnames() if "/" in n}
    assert {"pyproject.toml", "README.md", "PKG-INFO", "src/parkway/_version.py"} <= names

    made, log = build(["--wheel", str(PROJECT)], tmp_path)
    assert "from sdist" not in log, log
    assert [p.name for p in made] == [dist.wheel.name]
    from_source, from_sdist = wheel_files(made[0]), wheel_files(dist.wheel)
    assert sorted(from_sdist) == sorted(from_source)
    assert from_sdist == from_source


def test_installed_version_is_the_repository_version(installed_python: Path) -> None:
    version, distribution = run_in(
        installed_python,
        "import importlib.metadata, parkway;"
        "print(parkway.__version__); print(importlib.metadata.version('parkway'))",
    )
    assert version == repo_version()
    assert distribution == repo_version()
    assert parkway.__version__ == repo_version()  # the tests' own installation, the same source


def test_test_only_packages_are_not_installed(installed_python: Path) -> None:
    found = run_in(
        installed_python,
        "import importlib.util;"
        f"print(*[importlib.util.find_spec(m) is not None for m in {TEST_ONLY_MODULES!r}])",
    )
    assert found == ["False False"]
    # The tests' own environment has them (the test extra), so the check above can tell.
    assert all(importlib.util.find_spec(m) is not None for m in TEST_ONLY_MODULES)


def test_installed_package_is_the_wheel(installed_python: Path) -> None:
    """The venv's parkway comes from its own site-packages, not this checkout's source tree."""
    file, prefix = run_in(
        installed_python, "import parkway, sys; print(parkway.__file__); print(sys.prefix)"
    )
    assert Path(file).is_relative_to(Path(prefix))
    assert "site-packages" in Path(file).parts
    assert Path(prefix) == installed_python.parent.parent
    assert Path(prefix) != Path(sys.prefix)


@pytest.mark.parametrize("accept_suggested", [False, True])
def test_approve_example(stack: Stack, installed_python: Path, accept_suggested: bool) -> None:
    stack.model.reset(SCRIPT)
    argv = [
        str(installed_python),
        str(find_repo_root() / "examples" / "python" / "approve.py"),
        "set up the project",
        "--server",
        stack.address,
        "--agent",
        "py-basic",
    ]
    if accept_suggested:
        argv.append("--accept-suggested")
    result = subprocess.run(
        argv, capture_output=True, text=True, timeout=60, cwd="/", env=clean_env()
    )
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout

    assert "[approve] Bash" in out
    assert f"[ask] {QUESTION} -> Postgres" in out
    assert "All set: approved.txt exists and we use Postgres.\n" in out  # streamed
    assert "[final] All set: approved.txt exists and we use Postgres. (completed)" in out

    session_id = out.split("[session] ", 1)[1].split()[0]
    with parkway.Client(stack.address) as client:
        workdir = Path(client.get_session(session_id).working_directories[0])
        assert (workdir / "approved.txt").exists()
        rules = client.list_rules(session_id)
    if accept_suggested:
        assert "(rules: none)" not in out
        assert [r.tool_name for r in rules] == ["Bash"]
    else:
        assert "(rules: none)" in out
        assert rules == []
