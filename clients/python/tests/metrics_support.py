"""What the metrics tests share: the metrics stack's agent and model script, and scrapes of a
Parkway server's ``/metrics`` parsed by prometheus_client's text parser.

:func:`metrics_agent` and :data:`SCRIPT` configure the ``metrics_stack`` fixture (conftest.py).
:func:`scrape` fetches the endpoint with a plain HTTP GET and returns a :class:`Scrape`: the metric
families by name plus helpers that read one sample (``value``) or add up the samples whose labels
include some (``total``). :func:`wait_for` polls scrapes until a condition holds or a deadline passes.
"""

from __future__ import annotations

import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families

#: The families of the metrics spec as a PromQL query names them, with their type.
SPEC_FAMILIES: dict[str, str] = {
    "parkway_parked_replies": "gauge",
    "parkway_park_wait_seconds": "histogram",
    "parkway_replies_total": "counter",
    "parkway_model_call_duration_seconds": "histogram",
    "parkway_model_time_to_first_token_seconds": "histogram",
    "parkway_model_tokens_total": "counter",
    "parkway_tool_calls_total": "counter",
    "parkway_tool_call_duration_seconds": "histogram",
    "parkway_permission_decisions_total": "counter",
    "parkway_streams": "gauge",
    "parkway_session_actors": "gauge",
    "parkway_input_acks_total": "counter",
    "parkway_store_operation_duration_seconds": "histogram",
}

#: The agent of the metrics stack. A Bash call that creates a file asks (rule ``Bash(touch:*)``),
#: a read-only one is allowed; the external tool ``Lookup``, declared when the session is created,
#: is allowed by rule, so its call waits only for the client's result.
METRICS_AGENT = "metrics"

#: The external tool the metrics test declares at session creation.
LOOKUP_TOOL: dict[str, Any] = {
    "name": "Lookup",
    "description": "Looks up a fact in the client's database.",
    "input_schema": {
        "type": "object",
        "properties": {"query": {"type": "string"}},
        "required": ["query"],
    },
}

#: The AskUser question of the first reply and the option the test picks.
QUESTION = "Which region should the report cover?"
ANSWER = "Europe"


def _usage(prompt: int, completion: int, cached: int) -> dict[str, int]:
    return {"prompt_tokens": prompt, "completion_tokens": completion, "cached_tokens": cached}


#: The model's turns, played in order. First reply (4 model calls): a Bash call that asks, an
#: AskUser question, an external Lookup call, then text. Second reply (2 model calls): a read-only
#: Bash call, then text. Every turn reports its own token usage.
SCRIPT: dict[str, Any] = {
    "turns": [
        {
            "text": "Creating the report file first.",
            "toolCalls": [{"id": "t1", "name": "Bash", "input": {"command": "touch report.txt"}}],
            "usage": _usage(120, 11, 3),
        },
        {
            "toolCalls": [
                {
                    "id": "q1",
                    "name": "AskUser",
                    "input": {
                        "questions": [
                            {
                                "question": QUESTION,
                                "header": "Region",
                                "options": [
                                    {"label": ANSWER, "description": "EU customers"},
                                    {"label": "Americas", "description": "US and LATAM"},
                                ],
                            }
                        ]
                    },
                }
            ],
            "usage": _usage(150, 17, 5),
        },
        {
            "toolCalls": [{"id": "l1", "name": "Lookup", "input": {"query": "revenue Europe"}}],
            "usage": _usage(190, 13, 7),
        },
        {"text": "The report is ready.", "usage": _usage(230, 19, 11)},
        {
            "toolCalls": [{"id": "b2", "name": "Bash", "input": {"command": "ls"}}],
            "usage": _usage(260, 23, 13),
        },
        {"text": "report.txt is there.", "usage": _usage(290, 29, 17)},
    ]
}

#: Model calls SCRIPT makes in all (4 in the first reply, 2 in the second).
MODEL_CALLS = 6


def metrics_agent(root: Path) -> dict[str, Any]:
    """The config of METRICS_AGENT, with its working directory under `root` (created here)."""
    workdir = root / METRICS_AGENT
    workdir.mkdir(parents=True, exist_ok=True)
    return {
        "id": METRICS_AGENT,
        "workingDirectories": [str(workdir)],
        "permissions": {"ask": ["Bash(touch:*)"], "allow": ["Lookup"]},
    }


@dataclass(frozen=True)
class Scrape:
    """One parsed exposition. ``families`` maps the parser's family name (a counter's without its
    ``_total``) to the family."""

    text: str
    families: dict[str, Metric]

    def exposed_names(self) -> set[str]:
        """The names a PromQL query uses for the families: a counter's with ``_total``, a
        histogram's or summary's family name (its series add ``_bucket``/``_sum``/``_count``), any
        other family's name."""
        names: set[str] = set()
        for name, family in self.families.items():
            names.add(f"{name}_total" if family.type == "counter" else name)
        return names

    def type_of(self, name: str) -> str | None:
        """The type of the family a query calls `name` (see :meth:`exposed_names`), else None."""
        family = self.families.get(name)
        if family is None and name.endswith("_total"):
            family = self.families.get(name.removesuffix("_total"))
            if family is not None and family.type != "counter":
                family = None
        return None if family is None else family.type

    def samples(self, name: str) -> list[tuple[dict[str, str], float]]:
        """Every sample called `name` (e.g. ``parkway_replies_total``,
        ``parkway_park_wait_seconds_count``) with its labels."""
        return [
            (dict(sample.labels), sample.value)
            for family in self.families.values()
            for sample in family.samples
            if sample.name == name
        ]

    def total(self, name: str, **labels: str) -> float:
        """The sum of the samples called `name` whose labels include `labels` (0 when none)."""
        return sum(
            value
            for have, value in self.samples(name)
            if all(have.get(k) == v for k, v in labels.items())
        )

    def label_values(self, name: str, label: str, **labels: str) -> set[str]:
        """The values of `label` among the samples called `name` whose labels include `labels`."""
        return {
            have[label]
            for have, _ in self.samples(name)
            if label in have and all(have.get(k) == v for k, v in labels.items())
        }


def scrape(url: str, timeout: float = 10.0) -> Scrape:
    """GETs `url` (a ``/metrics`` endpoint) and parses it; fails on a non-200 answer or a content
    type other than the Prometheus text format."""
    with urllib.request.urlopen(url, timeout=timeout) as response:
        assert response.status == 200, f"GET {url}: {response.status}"
        content_type = response.headers.get("content-type", "")
        assert content_type.startswith("text/plain"), f"GET {url}: content-type {content_type}"
        text = response.read().decode("utf-8")
    families = {family.name: family for family in text_string_to_metric_families(text)}
    return Scrape(text, families)


def wait_for(url: str, holds: Callable[[Scrape], bool], what: str, timeout: float = 10.0) -> Scrape:
    """Scrapes `url` until `holds` is true of a scrape, and returns that scrape; fails naming
    `what` with the last scrape's text when `timeout` seconds pass first."""
    deadline = time.monotonic() + timeout
    while True:
        last = scrape(url)
        if holds(last):
            return last
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:g}s. Last scrape:\n{last.text}")
        time.sleep(0.05)
