"""The blocking client: a short flow, and its surface matches the asyncio client's."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

import parkway
from parkway.v1 import agent_service_pb2, content_pb2
from parkway_harness import Stack


def test_blocking_flow(stack: Stack) -> None:
    stack.model.reset(
        {
            "turns": [
                {
                    "match": {"lastUser": "make a file"},
                    "toolCalls": [
                        {
                            "id": "s1",
                            "name": "Bash",
                            "input": {"command": "touch sync.txt && echo made"},
                        }
                    ],
                },
                {"match": {"toolName": "Bash"}, "text": "Created sync.txt."},
                {"match": {"lastUser": "unary"}, "text": "Unary hello."},
            ]
        }
    )
    with parkway.Client(stack.address, timeout=10) as client:
        assert "py-basic" in [a.id for a in client.list_agents()]
        session = client.create_session("py-basic", permission_mode="default")
        with client.attach(session.id) as chat:
            events = list(chat.send("make a file", timeout=20))
            assert [e.kind for e in events][-2:] == ["require_user_confirm", "reply_parked"]
            (call,) = events[-2].tool_calls
            assert call.suggested_rules, "Bash asks with suggested rules"

            with pytest.raises(parkway.FailedPrecondition):
                chat.send_message("not now")

            chat.confirm(call, rule="suggested")
            rest = list(chat.until_settled(20))
            assert rest[-1].kind == "reply_end"
            text = "".join(e.text for e in rest if e.kind == "text_block_delta")
            assert text == "Created sync.txt."
            assert (Path(session.working_directories[0]) / "sync.txt").exists()

        state = client.get_session(session.id)
        assert state.status == agent_service_pb2.SESSION_STATUS_IDLE
        rules = client.list_rules(session.id)
        accepted = parkway.v1.permission_pb2.RULE_SOURCE_CONFIRMATION
        assert any(r.tool_name == "Bash" and r.source == accepted for r in rules), rules

        # The audit trail: the engine asked, then the caller confirmed with the suggested rule.
        trail = client.list_audit_records(session.id)
        kinds = [(r.kind, r.actor, r.tool_call_id) for r in trail.records]
        assert kinds == [
            (parkway.v1.audit_pb2.AUDIT_KIND_ASKED, "server", call.id),
            (parkway.v1.audit_pb2.AUDIT_KIND_CONFIRMED, "anonymous", call.id),
        ], trail
        assert list(trail.records[1].accepted_rules) == [
            f"Bash({r.rule_content})" for r in call.suggested_rules
        ]
        assert trail.next_page_token == ""

        # The unary Reply: one input, runs until the reply settles.
        response = client.reply(session.id, "unary")
        assert response.message.finished_reason == content_pb2.FINISHED_REASON_COMPLETED
        assert response.message.content[-1].text.text == "Unary hello."

        listed = client.list_sessions(agent_id="py-basic", status="idle")
        assert session.id in [s.id for s in listed.sessions]
        client.delete_session(session.id)
        with pytest.raises(parkway.NotFound):
            client.get_session(session.id)


def _public_methods(cls: type) -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(getattr(cls, name))
        for name in dir(cls)
        if not name.startswith("_") and inspect.isfunction(getattr(cls, name))
    }


def _params(sig: inspect.Signature) -> list[tuple[str, object, object]]:
    return [(p.name, p.kind, p.default) for p in sig.parameters.values()]


@pytest.mark.parametrize(
    ("blocking", "aio", "own"),
    [
        (parkway.Client, parkway.AsyncClient, {"unary", "metadata"}),
        (parkway.Session, parkway.AsyncSession, set()),
    ],
)
def test_blocking_mirrors_async(blocking: type, aio: type, own: set[str]) -> None:
    """Every async method has a blocking twin with the same parameters (`unary` and `metadata`
    work on the async stubs and stay async-only)."""
    sync_methods = _public_methods(blocking)
    async_methods = _public_methods(aio)
    assert set(async_methods) - own == set(sync_methods), "methods differ"
    for name, sig in sync_methods.items():
        assert _params(sig) == _params(async_methods[name]), name
