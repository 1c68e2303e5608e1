"""examples/python/approve.py, run as a user would: the package installed with
`pip install ./clients/python` into a fresh virtual environment, against a real server."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

import parkway
from parkway_harness import Stack, find_repo_root

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


@pytest.fixture(scope="module")
def example_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with only `pip install ./clients/python` (run from the repository root)."""
    env_dir = tmp_path_factory.mktemp("example-venv")
    venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
    python = env_dir / "bin" / "python"
    result = subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            "./clients/python",
        ],
        cwd=find_repo_root(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return python


@pytest.mark.parametrize("accept_suggested", [False, True])
def test_approve_example(stack: Stack, example_python: Path, accept_suggested: bool) -> None:
    stack.model.reset(SCRIPT)
    argv = [
        str(example_python),
        str(find_repo_root() / "examples" / "python" / "approve.py"),
        "set up the project",
        "--server",
        stack.address,
        "--agent",
        "py-basic",
    ]
    if accept_suggested:
        argv.append("--accept-suggested")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    result = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd="/", env=env)
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


def test_example_runs_outside_the_test_interpreter(example_python: Path) -> None:
    """The venv's parkway is the installed wheel, not this checkout's source tree."""
    out = subprocess.run(
        [
            str(example_python),
            "-c",
            "import parkway, sys; print(parkway.__file__); print(sys.prefix)",
        ],
        capture_output=True,
        text=True,
        cwd="/",
        check=True,
    ).stdout.split("\n")
    assert "site-packages" in out[0]
    assert Path(out[1]) != Path(sys.prefix)
