"""Plays one test/scenarios/*.json conversation through the Python client (see the README there).

No per-scenario code: the step semantics, the expectation format and the error checks are those of
the TypeScript runner (test/integration/scenarios.test.ts). The runner talks to a :class:`Host`: one
server (``parkway_harness.Stack``) or several nodes on one database (``cluster_harness.Cluster``,
played by ``ClusterRunner`` in test_cluster_scenarios.py through the hooks ``before_step``,
``open`` and ``settle``).
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any, Protocol

import pytest

import parkway
from call_aliases import CallAliases
from parkway import inputs
from parkway.v1 import agent_service_pb2, content_pb2, events_pb2, permission_pb2
from parkway_harness import MockModel, instantiate, scenario_dir, scenario_files


class Host(Protocol):
    """Where a scenario runs: the scripted model and the server(s) using it."""

    @property
    def model(self) -> MockModel: ...

    @property
    def address(self) -> str:
        """The address the runner starts on."""
        ...

    def restart(self, *, crash: bool) -> None:
        """Restarts the server(s) on the same address(es) and data: stopped with SIGTERM, or
        SIGKILLed when `crash`."""
        ...


SETTLE_TIMEOUT_S = 20.0


def scenario_agents(root: Path) -> list[dict[str, Any]]:
    """One agent per scenario file: id = the file's stem, working directory <root>/<stem> shared by
    its sessions, the scenario's `agent` merged over it (`$WORKDIR` replaced)."""
    agents = []
    for file in scenario_files():
        stem = file.removesuffix(".json")
        workdir = root / stem
        scenario = instantiate((scenario_dir() / file).read_text(encoding="utf-8"), workdir)
        agents.append(
            {
                "id": stem,
                "workingDirectories": [str(workdir)],
                "shareWorkingDirectories": True,
                **scenario.get("agent", {}),
            }
        )
    return agents


def prepare(file: str, root: Path, model: MockModel) -> tuple[str, dict[str, Any]]:
    """Loads scenario `file` for its agent (id = the file's stem, working directory <root>/<stem>):
    creates that directory with the scenario's `files` and resets the model to its script. Returns
    the agent id and the scenario."""
    stem = file.removesuffix(".json")
    workdir = root / stem
    scenario = instantiate((scenario_dir() / file).read_text(encoding="utf-8"), workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    for name, content in (scenario.get("files") or {}).items():
        (workdir / name).write_text(content, encoding="utf-8")
    model.reset(scenario["script"])
    return stem, scenario


def describe(event: parkway.Event, detail: int, aliases: CallAliases) -> str:
    """``"tool_result_end call_1 DENIED"`` for an event, trimmed to the detail the entry names; call
    ids are written as the aliases bound to them."""
    parts: list[str] = [event.kind]
    ids = [event.tool_call_id] if event.tool_call_id else [c.id for c in event.tool_calls]
    call = ",".join(aliases.alias(i) for i in ids)
    if detail >= 2 and call:
        parts.append(call)
    if detail >= 3 and event.kind == "tool_result_end":
        parts.append(event.result_state)
    return " ".join(parts)


def shape_against(
    events: list[parkway.Event], expected: list[str], aliases: CallAliases
) -> list[str]:
    """Describes events at the detail each expected entry uses; consecutive identical delta
    entries collapse into one. A TOOL_CALL_START facing ``tool_call_start X`` first binds X to its
    call id."""
    out: list[str] = []
    for event in events:
        want = (expected[min(len(out), len(expected) - 1)] if expected else "").split(" ")
        if event.kind == "tool_call_start" and want[0] == "tool_call_start" and len(want) > 1:
            aliases.bind(want[1], event.tool_call_id)
        d = describe(event, max(1, len(want)), aliases)
        if event.kind.endswith("_delta") and out and out[-1] == d:
            continue
        out.append(d)
    return out


class Runner:
    """Plays one scenario's steps on one session, as the TypeScript runner does."""

    def __init__(self, stack: Host, agent_id: str, scenario: dict[str, Any]) -> None:
        self.stack = stack
        self.agent_id = agent_id
        self.scenario = scenario
        self.client = parkway.AsyncClient(stack.address, timeout=15)
        self.chat: parkway.AsyncSession | None = None
        self.session_id = ""
        self.suggested: dict[str, list[permission_pb2.PermissionRule]] = {}
        self.aliases = CallAliases()

    async def open(self) -> None:
        session = await self.client.create_session(self.agent_id)
        self.session_id = session.id
        self.chat = await self.client.attach(session.id)

    async def close(self) -> None:
        await self.client.close()

    def remember(self, events: list[parkway.Event]) -> None:
        for event in events:
            for call in event.tool_calls:
                self.suggested[call.id] = list(call.suggested_rules)

    def confirm_result(self, c: dict[str, Any]) -> events_pb2.ConfirmResult:
        call = self.aliases.id(c["call"])
        rules = c.get("rules")
        rule: Any
        if rules == "suggested":
            rule = self.suggested.get(call, [])
        else:
            rule = list(rules or [])
        result = inputs.confirmation(call, rule or None)
        result.confirmed = bool(c["confirmed"])
        result.reason = c.get("reason", "")
        if "input" in c:
            result.tool_call.input = json.dumps(c["input"])
        return result

    def tool_result(self, r: dict[str, Any]) -> content_pb2.ToolResultBlock:
        block = inputs.tool_result(
            self.aliases.id(r["call"]),
            r.get("output") or "",
            state=r.get("state") or "success",
            metadata=r.get("metadata"),
        )
        if r.get("answers") is not None:
            block.ask_user.CopyFrom(inputs.ask_user_answers(r["answers"]))
        return block

    async def act(self, step: dict[str, Any]) -> None:
        chat = self.chat
        assert chat is not None
        if "send" in step:
            await chat.send_message(step["send"])
        elif "confirm" in step:
            await chat.confirm_all([self.confirm_result(c) for c in step["confirm"]])
        elif "results" in step:
            await chat.submit_results([self.tool_result(r) for r in step["results"]])
        elif step.get("interrupt"):
            await chat.interrupt()
        elif step.get("new_session"):
            await chat.close()
            await self.open()
        elif step.get("reconnect"):
            last = chat.last_seq
            await chat.close()
            self.chat = await self.client.attach(self.session_id, last)
        elif step.get("restart") or step.get("crash"):
            # The session notices the shutdown (UNAVAILABLE) and re-attaches by itself after its
            # last seq; the next input waits for that. A crash is a SIGKILL: no shutdown code runs.
            crash = bool(step.get("crash"))
            await asyncio.to_thread(lambda: self.stack.restart(crash=crash))

    async def before_step(self, index: int) -> None:
        """Called before step `index` (from 0) is played; nothing here."""

    async def settle(self) -> list[parkway.Event]:
        assert self.chat is not None
        return [e async for e in self.chat.until_settled(SETTLE_TIMEOUT_S)]

    async def run(self) -> None:
        name = self.scenario.get("name", self.agent_id)
        await self.open()
        for index, step in enumerate(self.scenario["steps"]):
            label = f"{name}: step {index + 1}"
            await self.before_step(index)
            if "error" in step:
                await self.check_refused(step, label)
                continue
            await self.act(step)
            if "expect" in step:
                events = await self.settle()
                self.remember(events)
                assert shape_against(events, step["expect"], self.aliases) == step["expect"], label
        await self.check_final()

    async def check_refused(self, step: dict[str, Any], label: str) -> None:
        want = step["error"]
        before = await self.client.get_session(self.session_id)
        with pytest.raises(parkway.ParkwayError) as caught:
            await self.act(step)
        err = caught.value
        assert err.code_name == want["code"], f"{label}: {err}"
        if "field" in want:
            assert want["field"] in err.fields, f"{label}: {err}"
        if "message" in want:
            assert re.search(self.aliases.pattern(want["message"]), err.message), f"{label}: {err}"
        after = await self.client.get_session(self.session_id)
        assert after.last_seq == before.last_seq, f"{label}: nothing changes"
        assert after.status == before.status, f"{label}: nothing changes"

    async def check_final(self) -> None:
        final = self.scenario.get("final")
        if not final:
            return
        if "status" in final:
            session = await self.client.get_session(self.session_id)
            assert (
                agent_service_pb2.SessionStatus.Name(session.status)
                == f"SESSION_STATUS_{final['status']}"
            )
        if final.get("model_saw"):
            requests = self.stack.model.requests()
            assert requests, "the model saw no request"
            seen = json.dumps(
                requests[-1].get("messages"), separators=(",", ":"), ensure_ascii=False
            )
            for text in final["model_saw"]:
                assert text in seen
        if final.get("files"):
            # The session's first working directory: the agent's when the agent shares it.
            session = await self.client.get_session(self.session_id)
            workdir = Path(session.working_directories[0])
            for name, content in final["files"].items():
                assert (workdir / name).read_text(encoding="utf-8") == content, name
        if "rules" in final:
            rules = await self.client.list_rules(self.session_id)
            assert len(rules) == final["rules"], [f"{r.tool_name}({r.rule_content})" for r in rules]
