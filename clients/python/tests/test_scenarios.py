"""Runs every test/scenarios/*.json through the Python client against the shared real server.

The runner is scenario_runner.Runner (the step semantics of test/scenarios/README.md). Each
scenario talks to its own agent (id = file stem, working directory <root>/<stem>, shared by its
sessions) of the session-wide `stack` fixture, whose mock model is reset to the scenario's script
first.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from parkway_harness import Stack, scenario_files
from scenario_runner import Runner, prepare


@pytest.mark.parametrize("file", scenario_files())
async def test_scenario(stack: Stack, file: str) -> None:
    stem, scenario = prepare(file, stack.root, stack.model)
    runner = Runner(stack, stem, scenario)
    try:
        await asyncio.wait_for(runner.run(), 60)
    finally:
        await runner.close()


#: A scenario for the runner's `reconnect` step, with a `restart` after it. The fresh attach of
#: `reconnect` surfaces the re-announced REQUIRE_USER_CONFIRM (seq 0), so it leads the events read
#: after the restart; the session that follows the restart does not announce the call again.
RECONNECT_RESTART: dict[str, Any] = {
    "name": "the runner reconnects and restarts the server while a reply is parked",
    "script": {
        "turns": [
            {
                "toolCalls": [
                    {"id": "r1", "name": "Bash", "input": {"command": "touch rr.txt && echo made"}}
                ]
            },
            {"text": "Made it."},
        ]
    },
    "steps": [
        {
            "send": "make it",
            "expect": [
                "reply_start",
                "model_call_start",
                "tool_call_start r1",
                "tool_call_delta r1",
                "tool_call_end r1",
                "model_call_end",
                "require_user_confirm r1",
                "reply_parked",
            ],
        },
        {"reconnect": True},
        {"send": "another", "error": {"code": "FAILED_PRECONDITION", "message": "r1"}},
        {"restart": True},
        {
            "confirm": [{"call": "r1", "confirmed": True}],
            "expect": [
                "require_user_confirm r1",
                "tool_result_start r1",
                "tool_result_text_delta r1",
                "tool_result_end r1 SUCCESS",
                "model_call_start",
                "text_block_start",
                "text_block_delta",
                "text_block_end",
                "model_call_end",
                "reply_end",
            ],
        },
    ],
    "final": {"status": "IDLE", "files": {"rr.txt": ""}, "model_saw": ["made"]},
}


async def test_runner_reconnect_and_restart_steps(stack: Stack) -> None:
    stack.model.reset(RECONNECT_RESTART["script"])
    runner = Runner(stack, "py-basic", RECONNECT_RESTART)
    try:
        await asyncio.wait_for(runner.run(), 60)
    finally:
        await runner.close()
