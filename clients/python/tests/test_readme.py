"""Every Python snippet of clients/python/README.md runs as written against `npm start` with no
model configured (the built-in demo model), with the interpreter and the installed package the
tests use. The snippets are read from the Markdown when the test runs. The only thing filled in is
what a snippet leaves to the reader: the server's address, written as 127.0.0.1:50051 (where
`npm start` serves), becomes the test server's. A fenced block that is not meant to run carries
`<!-- not run: why -->` on the line before it; a block in a language the test neither runs nor
knows to be something other than a program fails the test, so none is passed over silently."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import parkway
from parkway.v1 import content_pb2
from parkway_harness import ParkwayServer, find_repo_root

PLACEHOLDER_ADDRESS = "127.0.0.1:50051"
RUN = {"python"}
NOT_PROGRAMS = {"sh", "json", "text"}  # commands, configuration, output: never run

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^\s`]*)")
MARKER = re.compile(r"^\s*<!--\s*not run:\s*(.*?)\s*-->\s*$")


@dataclass(frozen=True)
class Snippet:
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    not_run: str | None  # the reason a `<!-- not run: ... -->` marker gives


def snippets(markdown: str) -> list[Snippet]:
    """The fenced code blocks of a Markdown text, with the markers before them."""
    lines = markdown.split("\n")
    found: list[Snippet] = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        indent, fence, lang = opening.groups()
        j = i + 1
        body = []
        while j < len(lines) and not lines[j].strip().startswith(fence):
            body.append(lines[j].removeprefix(indent))
            j += 1
        k = i - 1
        while k >= 0 and lines[k].strip() == "":
            k -= 1
        marker = MARKER.match(lines[k]) if k >= 0 else None
        not_run = marker.group(1) if marker else None
        found.append(Snippet(i + 1, lang, "\n".join(body) + "\n", not_run))
        i = j + 1
    return found


README = find_repo_root() / "clients" / "python" / "README.md"
ALL = snippets(README.read_text(encoding="utf-8"))
RUNNABLE = [s for s in ALL if s.lang in RUN and s.not_run is None]


def demo_conclusion() -> str:
    """What the demo model says last when its reply concludes after the write ran."""
    script = json.loads(
        (find_repo_root() / "src" / "model" / "scripted" / "demo-script.json").read_text("utf-8")
    )
    for turn in script["turns"]:
        match = turn.get("match", {})
        if match.get("toolName") == "Write" and "lastToolResult" not in match:
            return str(turn["text"])
    raise AssertionError("the demo script has no concluding turn after Write")


@pytest.fixture(scope="module")
def demo_address(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`npm start` on a fresh data directory: no model configured, so the demo model."""
    server = ParkwayServer(find_repo_root(), tmp_path_factory.mktemp("readme-data"))
    try:
        address = server.start()
    except RuntimeError as err:
        pytest.fail(str(err), pytrace=False)
    try:
        assert "using the built-in demo model" in server.output()
        yield address
    finally:
        server.stop()


def test_every_block_is_run_or_marked() -> None:
    for s in ALL:
        known = s.lang in RUN or s.lang in NOT_PROGRAMS
        assert known or s.not_run is not None, f"README.md:{s.line}: ```{s.lang} not run, no marker"
    # The first snippet, the whole flow, is among those run.
    assert RUNNABLE and "AsyncClient" in RUNNABLE[0].code


@pytest.mark.parametrize("snippet", RUNNABLE, ids=lambda s: f"README.md:{s.line}")
def test_snippet_runs_the_demo_to_reply_end(
    demo_address: str, snippet: Snippet, tmp_path: Path
) -> None:
    assert PLACEHOLDER_ADDRESS in snippet.code, "the snippet names the server's address"
    file = tmp_path / "snippet.py"
    file.write_text(snippet.code.replace(PLACEHOLDER_ADDRESS, demo_address), encoding="utf-8")
    with parkway.Client(demo_address) as client:
        before = {s.id for s in client.list_sessions().sessions}

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    result = subprocess.run(
        [sys.executable, str(file)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=env,
    )
    assert result.returncode == 0, result.stdout + result.stderr

    # The snippet's session: its reply parked three times (the command, the question, the write),
    # each was answered, and it ended completed; both files were made.
    with parkway.Client(demo_address) as client:
        created = [s for s in client.list_sessions().sessions if s.id not in before]
        assert len(created) == 1
        session = client.get_session(created[0].id)
        chat = client.attach(session.id)
        events: list[parkway.Event] = []
        while not events or events[-1].seq != session.last_seq:
            event = chat.next_event(timeout=10)
            if event is None:
                break
            events.append(event)
        chat.close()
    assert [e.kind for e in events].count("reply_parked") == 3
    assert events[-1].kind == "reply_end"
    assert events[-1].finished_reason == content_pb2.FINISHED_REASON_COMPLETED
    workdir = Path(session.working_directories[0])
    assert (workdir / "hello-parkway.txt").exists()
    assert (workdir / "hello-parkway.md").exists()
    # What it printed ends with the demo's concluding text.
    assert result.stdout.rstrip().endswith(demo_conclusion())
