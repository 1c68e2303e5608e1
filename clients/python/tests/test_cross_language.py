"""A reply parked by the TypeScript client survives a SIGKILL and is resumed by the Python client."""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

import parkway
from parkway_harness import Stack, find_repo_root

SCRIPT = {
    "turns": [
        {
            "match": {"lastUser": "park from typescript"},
            "toolCalls": [
                {
                    "id": "x1",
                    "name": "Bash",
                    "input": {"command": "touch crossed.txt && echo crossed"},
                }
            ],
        },
        {"match": {"toolName": "Bash"}, "text": "Resumed from Python."},
    ]
}


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[tuple[Stack, Path]]:
    workdir = tmp_path / "work"
    s = Stack(tmp_path, [{"id": "cross", "workingDirectories": [str(workdir)]}], SCRIPT)
    try:
        yield s, workdir
    finally:
        s.close()


async def test_parked_in_typescript_killed_resumed_in_python(stack: tuple[Stack, Path]) -> None:
    s, workdir = stack
    root = find_repo_root()
    parked = await asyncio.to_thread(
        subprocess.run,
        [
            "node",
            "--import",
            "tsx",
            "test/helpers/park-cli.ts",
            s.address,
            "cross",
            "park from typescript",
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    state = json.loads(parked.stdout.strip().splitlines()[-1])
    (pending,) = state["pending"]  # the server's id for the script's call x1

    s.server.restart(crash=True)  # SIGKILL; back on the same data directory

    async with parkway.AsyncClient(s.address, timeout=20) as client:
        session = await client.get_session(state["sessionId"])
        assert session.status == parkway.v1.agent_service_pb2.SESSION_STATUS_AWAITING_PERMISSION
        assert [c.id for c in session.pending_tool_calls] == [pending]
        chat = await client.attach(state["sessionId"], after_seq=session.last_seq)
        await chat.confirm(pending)
        rest = [e async for e in chat.until_settled(20)]
        assert rest[-1].kind == "reply_end"
        assert rest[-1].finished_reason == parkway.v1.content_pb2.FINISHED_REASON_COMPLETED
        await chat.close()
    assert (Path(session.working_directories[0]) / "crossed.txt").exists()
    assert session.working_directories[0] == str(workdir / state["sessionId"])
    assert "crossed" in json.dumps(s.model.requests()[-1]["messages"])
