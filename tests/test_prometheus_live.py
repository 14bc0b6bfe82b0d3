"""A real Prometheus (Debian's binary) scraping the real local Triton and an in-process exporter,
with the generated rules loaded: every rule and every dashboard query runs through its HTTP API.

One Prometheus for the session, scrape and evaluation every second, storage in a temp dir.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from grafana_vars import fill
from live_prometheus import Prom

from triton_sre import conventions as c
from triton_sre.demo import LLM_TRTLLM, LLM_VLLM, SLOW_MODEL, TAIL_MODEL, TEXT_ECHO, VECTOR_SCALE
from triton_sre.demo.traffic import TrafficDriver
from triton_sre.generate import dashboards
from triton_sre.generate.families import rule_files
from triton_sre.generate.panels import EXPORTER_JOB_VAR, WHY_EMPTY
from triton_sre.generate.rulefile import all_rules
from triton_sre.triton.exposition import parse

RATE_INTERVAL = "1m"  # stands in for $__rate_interval: the test's data spans well under a minute
SUBSTITUTIONS = {
    "$__rate_interval": RATE_INTERVAL,
    "$job": c.DEFAULT_TRITON_JOB,
    "$instance": ".*",
    "$slo": ".*",
    f"${EXPORTER_JOB_VAR}": c.DEFAULT_EXPORTER_JOB,
}
CORE_PANELS = {
    "Requests per second",
    "Error ratio",
    "Batching ratio",
    "Latency split by stage",
    "Seconds per request by stage",
    "Model states",
    "Cost per 1k inferences",
    "Scaling signal / target",  # the overview's Scaling row (issue 21): the shipped autoscaling entry
    "Replicas: asked, serving, ready",
}
TAIL_PANELS = {"Request latency p50 / p95 / p99", "Queue time p50 / p95 / p99"}
TAIL_SLO = "latency"


@pytest.fixture
def recent(live: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Fresh traffic first: Triton's summaries only hold about the last minute of requests."""
    driver = TrafficDriver(
        live["triton"].http_url, {VECTOR_SCALE: 2, SLOW_MODEL: 1, TAIL_MODEL: 1}, max_duration_s=30
    )
    driver.start()
    time.sleep(6)
    driver.stop()
    time.sleep(2.5)  # a scrape and a rule evaluation (every second) after the last request
    yield live


def _values(result: list[dict[str, Any]]) -> list[float]:
    return [float(r["value"][1]) for r in result]


def test_every_rule_expression_runs_without_error_or_nan(live: dict[str, Any]) -> None:
    prom: Prom = live["prom"]
    files = rule_files(live["spec"])
    exprs = [rule["expr"] for rule in all_rules(files)]
    assert len(exprs) > 50
    for expr in exprs:
        for value in _values(prom.query(expr)):
            assert not math.isnan(value), expr
    # the rules are loaded and evaluated by Prometheus itself, without errors
    groups = requests.get(f"{prom.url}/api/v1/rules", timeout=10).json()["data"]["groups"]
    loaded = [rule for g in groups for rule in g["rules"]]
    assert len(loaded) == len(exprs)
    assert [r["name"] for r in loaded if r.get("health") == "err"] == []


def test_every_dashboard_query_runs_and_core_panels_have_data(recent: dict[str, Any]) -> None:
    prom: Prom = recent["prom"]
    with_data: set[str] = set()
    tail_without_data = []
    count = 0
    for name, board in dashboards.dashboards(recent["spec"]).items():
        model = (
            TAIL_MODEL
            if name == "triton-model.json"
            else f"{VECTOR_SCALE}|{SLOW_MODEL}|{TEXT_ECHO}|{TAIL_MODEL}"
        )
        for panel, target in dashboards.iter_targets(board):
            expr = target["expr"]
            expr = fill(expr, {**SUBSTITUTIONS, "$model": model})
            assert "$" not in expr, expr
            count += 1
            result = prom.query(expr)
            if result:
                with_data.add(panel["title"])
            elif panel["title"] in TAIL_PANELS:
                tail_without_data.append((name, panel["title"], target["legendFormat"]))
    assert count >= 40
    assert with_data >= CORE_PANELS | TAIL_PANELS, f"panels without data: {CORE_PANELS - with_data}"
    assert tail_without_data == []  # every p50/p95/p99, average and threshold query of both boards


def _summary_us(text: str, family: str, model: str, quantile: str) -> float:
    for sample in parse(text, keep=lambda name: name == family):
        if sample.name == family and sample.label("model") == model and sample.label("quantile") == quantile:
            return sample.value
    raise AssertionError(f"{family}{{model={model}, quantile={quantile}}} not in Triton's metrics")


def _evaluated_after(prom: Prom, moment: float, triton_job: str, timeout: float = 15.0) -> None:
    """Until Prometheus has scraped Triton after `moment` and evaluated the rules on that scrape."""
    deadline = time.monotonic() + timeout
    while not prom.query(f'timestamp(up{{job="{triton_job}"}}) > {moment}'):
        assert time.monotonic() < deadline, "no Triton scrape"
        time.sleep(0.2)
    scraped = time.time()
    while not prom.query(f"timestamp({c.rec_requests(c.REC_LEVEL_MODEL)}) > {scraped}"):
        assert time.monotonic() < deadline, "no rule evaluation"
        time.sleep(0.2)


def test_quantile_rules_agree_with_tritons_own_summary_within_10_percent(recent: dict[str, Any]) -> None:
    prom: Prom = recent["prom"]
    metrics_url = recent["triton"].metrics_url
    keys = [
        (model, measure, family, quantile)
        for model in (TAIL_MODEL, VECTOR_SCALE, SLOW_MODEL)
        for measure, (family, _hist) in c.LATENCY_FAMILIES.items()
        for quantile in c.LATENCY_QUANTILES
    ]
    compared = []
    mismatched: dict[tuple[str, ...], tuple[list[tuple[str, float]], float]] = {}
    # Triton's summary window rotates: compare a figure only when Triton gave the same one before
    # Prometheus' scrape and after the rules were read (then the rule saw that figure too)
    for _round in range(6):
        before = requests.get(metrics_url, timeout=5).text
        _evaluated_after(prom, time.time(), recent["spec"].triton_job)
        got = {}
        for model, measure, family, quantile in keys:
            sel = f'{{model="{model}", version="1", quantile="{quantile}"}}'
            got[(model, measure, family, quantile)] = [
                (r["metric"][c.L_LATENCY_SOURCE], float(r["value"][1]))
                for level in c.REC_LEVELS
                for r in prom.query(f"{c.rec_latency_quantile(level, measure)}{sel}")
            ]
        after = requests.get(metrics_url, timeout=5).text
        unstable = []
        for key in keys:
            model, measure, family, quantile = key
            triton_us = _summary_us(after, family, model, quantile)
            if _summary_us(before, family, model, quantile) != triton_us:
                unstable.append(key)
                continue
            triton_s = triton_us / 1e6
            rows = got[key]
            assert len(rows) == 2 and all(source == c.LATENCY_SOURCE_SUMMARY for source, _ in rows), rows
            # Under traffic a summary quantile can move and come back between the two reads (the scrape
            # then saw another figure): retried; a wrong rule mismatches in every round and fails below
            if not all(abs(seconds - triton_s) <= 0.10 * triton_s for _source, seconds in rows):
                mismatched[key] = (rows, triton_s)
                unstable.append(key)
                continue
            mismatched.pop(key, None)
            compared.append((model, measure, quantile, triton_s, rows[0][1]))
        keys = unstable
        if not keys:
            break
    assert not mismatched, mismatched
    for row in compared:
        print("quantile rule vs Triton's summary: {} {} {}: Triton {:.6f} s, rule {:.6f} s".format(*row))
    assert len(compared) == 3 * 2 * len(c.LATENCY_QUANTILES)
    # the tail model: p99 over its SLO's threshold, the average far under it
    threshold = next(s for s in recent["spec"].slos if s.name == TAIL_SLO).threshold_s
    level = c.REC_LEVEL_MODEL
    p99 = prom.query(
        f'{c.rec_latency_quantile(level, c.LATENCY_REQUEST)}{{model="{TAIL_MODEL}", quantile="0.99"}}'
    )
    average = prom.query(
        f'{c.rec_rate(level, c.NV_REQUEST_DURATION_US)}{{model="{TAIL_MODEL}"}} / 1e6'
        f' / {c.rec_rate(level, c.NV_REQUEST_SUCCESS)}{{model="{TAIL_MODEL}"}}'
    )
    print(
        f"{TAIL_MODEL}: p99 {float(p99[0]['value'][1]):.4f} s, average {float(average[0]['value'][1]):.4f} s"
    )
    assert float(p99[0]["value"][1]) > threshold > 2 * float(average[0]["value"][1])


def test_slo_rules_report_the_traffic(live: dict[str, Any]) -> None:
    prom: Prom = live["prom"]
    at = live["settled"]  # the fixture's traffic, with its failures, ends here; later tests send more
    errors = prom.query(f'{c.rec_slo_errors("5m")}{{slo="availability", model="{VECTOR_SCALE}"}}', at)
    assert len(errors) == 1 and 0 < float(errors[0]["value"][1]) < 1  # error_fraction 0.05 (+ batchmates)
    requests_ = prom.query(f'{c.rec_slo_requests("5m")}{{slo="availability", model="{VECTOR_SCALE}"}}', at)
    assert float(requests_[0]["value"][1]) > 0
    slices = prom.query(f'{c.REC_SLO_SLICE_BAD}{{slo="latency"}}', at)
    assert {r["metric"]["model"] for r in slices} >= {VECTOR_SCALE, SLOW_MODEL}


def test_the_tail_models_slices_are_bad_on_its_p99(recent: dict[str, Any]) -> None:
    prom: Prom = recent["prom"]
    (bad,) = prom.query(f'{c.REC_SLO_SLICE_BAD}{{slo="{TAIL_SLO}", model="{TAIL_MODEL}"}}')
    assert bad["metric"][c.L_LATENCY_SOURCE] == c.LATENCY_SOURCE_SUMMARY and bad["value"][1] == "1"
    # the same slices judged on the 1m average are good: the average hides the tail
    spec = recent["spec"]
    slo = next(s for s in spec.slos if s.name == TAIL_SLO)
    avg = (
        f'sum(rate({c.NV_REQUEST_DURATION_US}{{model="{TAIL_MODEL}"}}[{slo.time_slice}])) / 1e6'
        f' / sum(rate({c.NV_REQUEST_SUCCESS}{{model="{TAIL_MODEL}"}}[{slo.time_slice}]))'
    )
    assert 0 < float(prom.query(avg)[0]["value"][1]) < slo.threshold_s


def _close(a: float, b: float, rel: float = 0.15, abs_: float = 0.002) -> bool:
    return abs(a - b) <= max(abs_, rel * max(abs(a), abs(b)))


def test_recording_rules_agree_with_the_exporter(live: dict[str, Any]) -> None:
    prom: Prom = live["prom"]
    # The exporter's view and Prometheus' rules as of the fixture's settled time: "now" would compare
    # two moving windows, and the 5m rates are empty once this runs 5 minutes after the traffic. The
    # traffic starts and stops inside the 5m window, so a rule mixing rates from two groups (evaluated
    # at different instants) shows it here: `other` read request and stage rates from two groups and
    # was 2-5 % of the request time where the exporter's exact differences say ~0.
    at = live["settled"]
    by_model = {m.model: m for m in live["derivation"].models}
    compared = 0
    for model in (VECTOR_SCALE, SLOW_MODEL, TEXT_ECHO):
        derived = by_model[model]
        assert derived.batching_ratio is not None and derived.stage_seconds is not None
        for level in c.REC_LEVELS:
            sel = f'{{model="{model}", version="1"}}'
            ratio = _values(prom.query(f"{c.rec_batching_ratio(level)}{sel}", at=at))
            assert len(ratio) == 1 and _close(ratio[0], derived.batching_ratio), (model, ratio, derived)
            for stage, seconds in derived.stage_seconds.items():
                stage_sel = f'{{model="{model}", version="1", stage="{stage}"}}'
                got = _values(prom.query(f"{c.rec_stage_seconds(level)}{stage_sel}", at=at))
                assert len(got) == 1 and _close(got[0], seconds), (model, level, stage, got, seconds)
                compared += 1
    assert compared == 3 * 2 * len(c.STAGES)
    # batching happens on vector_scale (4 concurrent clients, max_batch_size 16): the rules see it too
    assert by_model[VECTOR_SCALE].batching_ratio > 1.0


def test_histogram_variants_of_the_tail_queries_run_on_a_server_without_histograms(
    live: dict[str, Any],
) -> None:
    """With histograms declared the boards add a heatmap; on 2.51 (no histogram) every query still
    runs, the heatmap is empty and the quantile panels fall back to the summaries."""
    prom: Prom = live["prom"]
    spec = dataclasses.replace(
        live["spec"], latency_metrics=(c.LATENCY_SOURCE_SUMMARY, c.LATENCY_SOURCE_HISTOGRAM)
    )
    heatmaps = 0
    for board in dashboards.dashboards(spec).values():
        for panel, target in dashboards.iter_targets(board):
            if panel["type"] != "heatmap":
                continue
            expr = target["expr"]
            expr = fill(expr, {**SUBSTITUTIONS, "$model": ".*"})
            assert prom.query(expr) == []  # valid PromQL, no histogram on 2.51
            heatmaps += 1
    assert heatmaps == 2


# Empty on the live fixture for a reason that is not by design: the exporter starts after Triton
# loaded every model, so no load is measured (issue 26 item 2, the sidecar start, is separate work).
NOT_MEASURED_HERE = {"Load time per model", "Load time per model over time"}


def _selections(board: dict[str, Any], instance: str) -> dict[str, dict[str, str]]:
    """Variable values for "All" and for one value of each variable the dashboard has."""
    names = {v["name"] for v in board["templating"]["list"]}
    llm = board["uid"] == c.UID_LLM_DASHBOARD
    one_model = LLM_VLLM if llm else VECTOR_SCALE
    everything = {
        "$job": c.DEFAULT_TRITON_JOB,
        f"${EXPORTER_JOB_VAR}": c.DEFAULT_EXPORTER_JOB,
        "$instance": ".*",
        "$slo": ".*",
        # the model dashboard has no "All": one model in both selections
        "$model": ".*" if board["uid"] != c.UID_MODEL_DASHBOARD else one_model,
    }
    one = {**everything, "$instance": instance, "$slo": "availability", "$model": one_model}
    return {
        label: {var: value for var, value in values.items() if var[1:] in names}
        for label, values in (("All", everything), ("one of each", one))
    }


def test_every_panel_has_data_with_all_and_one_value_or_says_why(live: dict[str, Any]) -> None:
    """Issue 26 item 3: every panel's queries, with "All" and with one value of each variable; the
    panels left empty on this CPU host must be GPU- or memory_usage-only and say so (noValue)."""
    prom: Prom = live["prom"]
    driver = TrafficDriver(
        live["triton"].http_url,
        {VECTOR_SCALE: 2, TAIL_MODEL: 1, LLM_VLLM: 2, LLM_TRTLLM: 2},
        max_duration_s=30,
    )
    driver.start()
    time.sleep(8)
    driver.stop()
    time.sleep(2.5)  # a scrape and a rule evaluation after the last request
    instance = live["triton"].metrics_url.split("//", 1)[1].split("/", 1)[0]
    empty: dict[tuple[str, str], set[str]] = {}
    queried = 0
    for name, board in dashboards.dashboards(live["spec"]).items():
        for label, values in _selections(board, instance).items():
            has_data: dict[str, bool] = {}
            panels: dict[str, dict[str, Any]] = {}
            for panel, target in dashboards.iter_targets(board):
                expr = target["expr"].replace("$__rate_interval", "5m")
                expr = fill(expr, values)
                assert "$" not in expr, (name, panel["title"], expr)
                queried += 1
                panels[panel["title"]] = panel
                has_data[panel["title"]] = has_data.get(panel["title"], False) or bool(prom.query(expr))
            for title, data in has_data.items():
                if not data:
                    empty.setdefault((name, title), set()).add(label)
    assert queried > 150
    listing = "\n".join(
        f"{b} / {title}: empty with {sorted(how)}" for (b, title), how in sorted(empty.items())
    )
    print("panels without data on this host:\n" + listing)
    unexplained = []
    for (name, title), _how in sorted(empty.items()):
        board = dashboards.dashboards(live["spec"])[name]
        panel = next(p for p, _t in dashboards.iter_targets(board) if p["title"] == title)
        reason = panel.get("fieldConfig", {}).get("defaults", {}).get("noValue", "")
        if title in NOT_MEASURED_HERE:
            continue
        if reason not in WHY_EMPTY or reason not in panel.get("description", ""):
            unexplained.append(f"{name} / {title}")
    assert unexplained == [], listing
    # the GPU and memory_usage panels are the ones left empty, not every panel
    assert len(empty) < 25, listing
