"""Prometheus metrics of a real server, driven through the Python client.

The ``metrics_stack`` server (its own, metrics on a free port) plays metrics_support.SCRIPT: a first
reply that parks three times (a Bash call its ask rule confirms, an AskUser question, an external
tool declared at session creation) and completes, then a second reply that completes without
parking. ``/metrics`` is scraped with a plain HTTP GET and parsed by prometheus_client's text
parser; counts are compared with a scrape taken before the replies.
"""

from __future__ import annotations

import asyncio

import pytest

import parkway
from metrics_support import (
    ANSWER,
    LOOKUP_TOOL,
    METRICS_AGENT,
    MODEL_CALLS,
    QUESTION,
    SCRIPT,
    SPEC_FAMILIES,
    Scrape,
    scrape,
    wait_for,
)
from parkway_harness import Stack

SETTLE_TIMEOUT_S = 30.0
STORE_OPERATIONS = {"get", "get_many", "write", "write_synced", "scan"}


async def settle(chat: parkway.AsyncSession) -> list[parkway.Event]:
    """The events up to the reply's next REPLY_END or REPLY_PARKED."""
    return [event async for event in chat.until_settled(SETTLE_TIMEOUT_S)]


def awaited_call(events: list[parkway.Event], kind: str) -> str:
    """The id of the one call the `kind` REQUIRE_* event of a parked reply names."""
    assert events and events[-1].kind == "reply_parked", events
    required = [e for e in events if e.kind == kind]
    assert len(required) == 1 and len(required[0].tool_calls) == 1, events
    return required[0].tool_calls[0].id


async def parked_is(url: str, count: int, what: str) -> Scrape:
    """Polls until parkway_parked_replies{agent=METRICS_AGENT} is `count`."""
    return await asyncio.to_thread(
        wait_for,
        url,
        lambda s: s.total("parkway_parked_replies", agent=METRICS_AGENT) == count,
        what,
    )


async def test_metrics_follow_the_demo_flow(metrics_stack: Stack) -> None:
    """Drives a confirm, an AskUser answer and an external result, then a reply that does not park,
    and checks each parkway_* metric of the spec (and the process_/nodejs_ defaults):

    - the parked gauge is 1 for the agent while the reply is parked and 0 once it completed;
    - one park wait observation per answered call, labelled confirm, ask_user and external;
    - two completed replies; six model calls in the duration and time-to-first-token histograms;
    - tokens by direction equal to the usage the script reports;
    - tool calls and their durations by tool and final state;
    - the permission decisions with the deciding check (rule.ask, tool.ask_user, rule.allow,
      read_only);
    - acknowledged inputs by gRPC code (five OK, one FAILED_PRECONDITION);
    - streams and session actors while a stream is attached; store operations by operation.
    """
    url = metrics_stack.server.metrics_url
    before = await asyncio.to_thread(scrape, url)

    client = parkway.AsyncClient(metrics_stack.address, timeout=15)
    try:
        session = await client.create_session(METRICS_AGENT, external_tools=[LOOKUP_TOOL])
        chat = await client.attach(session.id)

        # Reply 1: the Bash call asks (rule Bash(touch:*)).
        await chat.send_message("write the report")
        call = awaited_call(await settle(chat), "require_user_confirm")
        parked = await parked_is(url, 1, "parked while awaiting the confirmation")
        assert parked.total("parkway_streams") >= 1
        assert parked.total("parkway_session_actors") >= 1
        with pytest.raises(parkway.FailedPrecondition):
            await chat.send_message("are you there?")
        await chat.confirm(call)

        # The AskUser question.
        call = awaited_call(await settle(chat), "require_external_execution")
        await parked_is(url, 1, "parked while awaiting the answer")
        await chat.answer(call, {QUESTION: ANSWER})

        # The external tool declared at session creation.
        call = awaited_call(await settle(chat), "require_external_execution")
        await parked_is(url, 1, "parked while awaiting the external result")
        await chat.submit_result(call, "revenue Europe: 42")
        events = await settle(chat)
        assert events[-1].kind == "reply_end", events
        await parked_is(url, 0, "not parked once the reply completed")

        # Reply 2: a read-only Bash call, no park.
        events = [e async for e in chat.send("list the files", timeout=SETTLE_TIMEOUT_S)]
        assert events[-1].kind == "reply_end", events
        assert [e.result_state for e in events if e.kind == "tool_result_end"] == ["SUCCESS"]

        after = await asyncio.to_thread(scrape, url)
        # Gauges while the stream is still attached.
        assert after.total("parkway_streams") >= 1
        assert after.total("parkway_session_actors") >= 1
    finally:
        await client.close()

    def delta(name: str, **labels: str) -> float:
        return after.total(name, **labels) - before.total(name, **labels)

    # An agent with nothing parked has no series or a 0 one.
    assert after.total("parkway_parked_replies", agent=METRICS_AGENT) == 0

    # One park wait per answered call, by kind.
    waits = {
        k: delta("parkway_park_wait_seconds_count", kind=k)
        for k in ("confirm", "ask_user", "external")
    }
    assert waits == {"confirm": 1, "ask_user": 1, "external": 1}
    assert delta("parkway_park_wait_seconds_count") == 3
    assert delta("parkway_park_wait_seconds_sum") > 0

    # Replies.
    assert delta("parkway_replies_total", agent=METRICS_AGENT, outcome="completed") == 2
    assert delta("parkway_replies_total", agent=METRICS_AGENT) == 2

    # Model calls: every call of the script, under the configured model name.
    models = after.label_values(
        "parkway_model_call_duration_seconds_count", "model", agent=METRICS_AGENT
    )
    assert models == {"scripted"}
    for histogram in (
        "parkway_model_call_duration_seconds",
        "parkway_model_time_to_first_token_seconds",
    ):
        count = delta(f"{histogram}_count", agent=METRICS_AGENT, model="scripted")
        assert count == MODEL_CALLS, histogram
        buckets = after.samples(f"{histogram}_bucket")
        assert any(labels.get("le") == "+Inf" for labels, _ in buckets), histogram

    # Tokens: the usage the script reports, by direction.
    usages = [turn["usage"] for turn in SCRIPT["turns"]]
    expected_tokens = {
        "input": sum(u["prompt_tokens"] for u in usages),
        "output": sum(u["completion_tokens"] for u in usages),
        "cache_read": sum(u["cached_tokens"] for u in usages),
        "cache_write": 0,  # an OpenAI-compatible model reports no cache writes
    }
    tokens = {
        d: delta("parkway_model_tokens_total", agent=METRICS_AGENT, model="scripted", direction=d)
        for d in expected_tokens
    }
    assert tokens == expected_tokens

    # Tool calls by tool and final state. A duration is observed for each call whose result both
    # started and ended after the last park: not for AskUser or the external Lookup, whose results
    # start before the reply parks on them, so their time is the person's (or client's), in
    # park_wait.
    expected_calls = {("Bash", "success"): 2, ("AskUser", "success"): 1, ("Lookup", "success"): 1}
    expected_durations = {
        ("Bash", "success"): 2,
        ("AskUser", "success"): 0,
        ("Lookup", "success"): 0,
    }
    for (tool, state), count in expected_calls.items():
        assert delta("parkway_tool_calls_total", tool=tool, state=state) == count, tool
        timed = delta("parkway_tool_call_duration_seconds_count", tool=tool, state=state)
        assert timed == expected_durations[(tool, state)], tool
    assert delta("parkway_tool_calls_total") == sum(expected_calls.values())

    # Permission decisions: the ask rule (touch), AskUser (never needs permission), the allow rule
    # (Lookup), the read-only command (ls).
    expected_decisions = {
        ("ask", "rule.ask"): 1,
        ("allow", "tool.ask_user"): 1,
        ("allow", "rule.allow"): 1,
        ("allow", "read_only"): 1,
    }
    for (behavior, check), count in expected_decisions.items():
        decided = delta("parkway_permission_decisions_total", behavior=behavior, check=check)
        assert decided == count, (behavior, check)
    assert delta("parkway_permission_decisions_total") == sum(expected_decisions.values())
    assert after.label_values("parkway_permission_decisions_total", "behavior") <= {
        "allow",
        "ask",
        "deny",
    }

    # Inputs acknowledged: two messages, a confirmation, an answer, an external result; and the
    # message refused while the reply was parked.
    assert delta("parkway_input_acks_total", code="OK") == 5
    assert delta("parkway_input_acks_total", code="FAILED_PRECONDITION") == 1

    # Store operations: labelled by operation, from the spec's set.
    operations = after.label_values("parkway_store_operation_duration_seconds_count", "operation")
    assert operations and operations <= STORE_OPERATIONS, operations
    assert delta("parkway_store_operation_duration_seconds_count") > 0

    # prom-client's defaults.
    for name in ("process_cpu_seconds_total", "process_resident_memory_bytes"):
        assert after.samples(name), name
    assert after.samples("nodejs_eventloop_lag_p99_seconds")


def test_metrics_listening_line_and_families(metrics_stack: Stack) -> None:
    """The listening line's metricsUrl serves the Prometheus text format, and every family of the
    spec is declared with its type, whether or not it has samples yet."""
    exposition = scrape(metrics_stack.server.metrics_url)
    types = {name: exposition.type_of(name) for name in SPEC_FAMILIES}
    assert types == SPEC_FAMILIES
