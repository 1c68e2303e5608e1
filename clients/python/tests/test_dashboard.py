"""The example Grafana dashboard and Prometheus config (examples/observability) against a real server.

Every metric the dashboard's queries name must be a family of a live ``/metrics`` scrape (the
``metrics_stack`` server), every family of the metrics spec must appear in some panel, and the
Prometheus config must parse as YAML (when PyYAML is installed).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from metrics_support import SPEC_FAMILIES, Scrape, scrape
from parkway_harness import Stack, find_repo_root

EXAMPLES = find_repo_root() / "examples" / "observability"
DASHBOARD = EXAMPLES / "grafana-dashboard.json"
PROMETHEUS_YML = EXAMPLES / "prometheus.yml"

#: A metric name in a PromQL expression.
METRIC_NAME = re.compile(r"\b(?:parkway|process|nodejs)_\w+")
#: The series suffixes of a histogram or summary family.
SERIES_SUFFIXES = ("_bucket", "_sum", "_count")
#: The process metrics (prom-client defaults) the dashboard must show besides the spec's.
PROCESS_METRICS = (
    "process_cpu_seconds_total",
    "process_resident_memory_bytes",
    "nodejs_eventloop_lag_p99_seconds",
)


def load_dashboard() -> dict[str, Any]:
    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    assert isinstance(dashboard, dict)
    return dashboard


def all_panels(panels: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Every panel, those inside (collapsed) rows included."""
    for panel in panels:
        yield panel
        yield from all_panels(panel.get("panels", []))


def queries(dashboard: dict[str, Any]) -> list[str]:
    """Every PromQL expression of the dashboard: each panel target's ``expr`` and each query
    variable's query."""
    found = [
        target["expr"]
        for panel in all_panels(dashboard["panels"])
        for target in panel.get("targets", [])
        if "expr" in target
    ]
    for variable in dashboard.get("templating", {}).get("list", []):
        if variable.get("type") != "query":
            continue
        query = variable.get("query")
        found.append(query.get("query", "") if isinstance(query, dict) else str(query))
    return found


def family_name(name: str, exposition: Scrape) -> str:
    """The family a series name belongs to: `name` without a ``_bucket``/``_sum``/``_count``
    suffix when the rest is a histogram or summary family of the scrape, else `name` itself."""
    for suffix in SERIES_SUFFIXES:
        base = name.removesuffix(suffix)
        if base != name and exposition.type_of(base) in ("histogram", "summary"):
            return base
    return name


def dashboard_families(exposition: Scrape) -> dict[str, set[str]]:
    """The families the dashboard's queries name, each with the expressions naming it."""
    families: dict[str, set[str]] = {}
    for expr in queries(load_dashboard()):
        for name in METRIC_NAME.findall(expr):
            families.setdefault(family_name(name, exposition), set()).add(expr)
    return families


def test_dashboard_queries_only_exposed_metrics(metrics_stack: Stack) -> None:
    """Each parkway_/process_/nodejs_ name in a panel or variable query is a family of a live
    scrape (a counter named with its ``_total``, a histogram by its family name)."""
    exposition = scrape(metrics_stack.server.metrics_url)
    used = dashboard_families(exposition)
    assert used, "the dashboard queries no metric"
    missing = {
        name: sorted(exprs) for name, exprs in used.items() if exposition.type_of(name) is None
    }
    assert missing == {}


def test_dashboard_covers_every_metric(metrics_stack: Stack) -> None:
    """Every family of the metrics spec, and the process CPU, resident memory and event loop lag,
    appears in some panel query; histograms are read through their ``_bucket`` series with
    histogram_quantile."""
    exposition = scrape(metrics_stack.server.metrics_url)
    used = dashboard_families(exposition)
    wanted = [*SPEC_FAMILIES, *PROCESS_METRICS]
    assert [name for name in wanted if name not in used] == []
    for name, kind in SPEC_FAMILIES.items():
        if kind == "histogram":
            assert all(
                "histogram_quantile(" in expr and f"{name}_bucket" in expr and "le)" in expr
                for expr in used[name]
            ), name


def test_dashboard_shape() -> None:
    """The dashboard is importable as is: a recent schema, one Prometheus datasource variable every
    panel and target uses, a unit and title on every panel, and the parked gauge aggregated with
    max by (agent) (every node reports the same store count, so a sum would multiply it)."""
    dashboard = load_dashboard()
    assert dashboard["schemaVersion"] >= 36
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    want_ds = {"type": "prometheus", "uid": "${datasource}"}
    ids: list[int] = []
    for panel in all_panels(dashboard["panels"]):
        ids.append(panel["id"])
        assert panel.get("title"), panel
        if panel["type"] == "row":
            continue
        assert panel["datasource"] == want_ds, panel["title"]
        assert panel["fieldConfig"]["defaults"].get("unit"), panel["title"]
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            assert target["datasource"] == want_ds, panel["title"]
            if "parkway_parked_replies" in target["expr"]:
                assert "max by (agent)" in target["expr"], target["expr"]
    assert len(ids) == len(set(ids)), "panel ids repeat"


def test_prometheus_config_parses() -> None:
    """examples/observability/prometheus.yml is YAML with a scrape job for 127.0.0.1:9464 on
    /metrics."""
    import yaml

    config = yaml.safe_load(PROMETHEUS_YML.read_text(encoding="utf-8"))
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    parkway_job = jobs["parkway"]
    assert parkway_job.get("metrics_path", "/metrics") == "/metrics"
    targets = [t for group in parkway_job["static_configs"] for t in group["targets"]]
    assert targets == ["127.0.0.1:9464"]
