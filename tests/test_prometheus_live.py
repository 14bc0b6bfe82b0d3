"""A real Prometheus (Debian's binary) scraping the real local Triton and an in-process exporter,
with the generated rules loaded: every rule and every dashboard query runs through its HTTP API.

One Prometheus for the session, scrape and evaluation every second, storage in a temp dir.
"""

from __future__ import annotations

import math
from typing import Any

import requests
from live_prometheus import Prom

from triton_sre import conventions as c
from triton_sre.demo import SLOW_MODEL, TEXT_ECHO, VECTOR_SCALE
from triton_sre.generate import dashboards, rules

RATE_INTERVAL = "1m"  # stands in for $__rate_interval: the test's data spans well under a minute
SUBSTITUTIONS = {
    "$__rate_interval": RATE_INTERVAL,
    "$job": c.DEFAULT_TRITON_JOB,
    "$instance": ".*",
    "$slo": ".*",
}
CORE_PANELS = {
    "Requests per second",
    "Error ratio",
    "Batching ratio",
    "Latency split by stage",
    "Seconds per request by stage",
    "Model states",
    "Cost per 1k inferences",
}



def _values(result: list[dict[str, Any]]) -> list[float]:
    return [float(r["value"][1]) for r in result]


def test_every_rule_expression_runs_without_error_or_nan(live: dict[str, Any]) -> None:
    prom: Prom = live["prom"]
    files = rules.rule_files(live["spec"])
    exprs = [rule["expr"] for rule in rules.all_rules(files)]
    assert len(exprs) > 50
    for expr in exprs:
        for value in _values(prom.query(expr)):
            assert not math.isnan(value), expr
    # the rules are loaded and evaluated by Prometheus itself, without errors
    groups = requests.get(f"{prom.url}/api/v1/rules", timeout=10).json()["data"]["groups"]
    loaded = [rule for g in groups for rule in g["rules"]]
    assert len(loaded) == len(exprs)
    assert [r["name"] for r in loaded if r.get("health") == "err"] == []


def test_every_dashboard_query_runs_and_core_panels_have_data(live: dict[str, Any]) -> None:
    prom: Prom = live["prom"]
    with_data: set[str] = set()
    count = 0
    for name, board in dashboards.dashboards(live["spec"]).items():
        model = VECTOR_SCALE if name == "triton-model.json" else f"{VECTOR_SCALE}|{SLOW_MODEL}|{TEXT_ECHO}"
        for panel, target in dashboards.iter_targets(board):
            expr = target["expr"]
            for var, value in {**SUBSTITUTIONS, "$model": model}.items():
                expr = expr.replace(var, value)
            assert "$" not in expr, expr
            count += 1
            result = prom.query(expr)
            if result:
                with_data.add(panel["title"])
    assert count >= 40
    assert with_data >= CORE_PANELS, f"core panels without data: {CORE_PANELS - with_data}"


def test_slo_rules_report_the_traffic(live: dict[str, Any]) -> None:
    prom: Prom = live["prom"]
    errors = prom.query(f'{c.rec_slo_errors("5m")}{{slo="availability", model="{VECTOR_SCALE}"}}')
    assert len(errors) == 1 and 0 < float(errors[0]["value"][1]) < 1  # error_fraction 0.05 (+ batchmates)
    requests_ = prom.query(f'{c.rec_slo_requests("5m")}{{slo="availability", model="{VECTOR_SCALE}"}}')
    assert float(requests_[0]["value"][1]) > 0
    slices = prom.query(f'{c.REC_SLO_SLICE_BAD}{{slo="latency"}}')
    assert {r["metric"]["model"] for r in slices} >= {VECTOR_SCALE, SLOW_MODEL}


def _close(a: float, b: float, rel: float = 0.15, abs_: float = 0.002) -> bool:
    return abs(a - b) <= max(abs_, rel * max(abs(a), abs(b)))


def test_recording_rules_agree_with_the_exporter(live: dict[str, Any]) -> None:
    prom: Prom = live["prom"]
    derivation = live["exporter"].exporter.derivation
    by_model = {m.model: m for m in derivation.models}
    compared = 0
    for model in (VECTOR_SCALE, SLOW_MODEL, TEXT_ECHO):
        derived = by_model[model]
        assert derived.batching_ratio is not None and derived.stage_seconds is not None
        for level in c.REC_LEVELS:
            sel = f'{{model="{model}", version="1"}}'
            ratio = _values(prom.query(f"{c.rec_batching_ratio(level)}{sel}"))
            assert len(ratio) == 1 and _close(ratio[0], derived.batching_ratio), (model, ratio, derived)
            for stage, seconds in derived.stage_seconds.items():
                stage_sel = f'{{model="{model}", version="1", stage="{stage}"}}'
                got = _values(prom.query(f"{c.rec_stage_seconds(level)}{stage_sel}"))
                assert len(got) == 1 and _close(got[0], seconds), (model, level, stage, got, seconds)
                compared += 1
    assert compared == 3 * 2 * len(c.STAGES)
    # batching happens on vector_scale (4 concurrent clients, max_batch_size 16): the rules see it too
    assert by_model[VECTOR_SCALE].batching_ratio > 1.0
