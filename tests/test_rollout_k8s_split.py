"""The Argo Rollouts AnalysisTemplate and the Flagger MetricTemplates at an uneven traffic split, run
on a real Prometheus: the batching ratio is judged only while the canary has (1 - margin) of the
baseline's requests/s (docs/rollouts.md), as `rollout check` and the guard judge it. Below that its
query answers the passing NOT_JUDGED; a worse canary at comparable traffic still fails, and a canary
with too little traffic is still inconclusive (Argo) / halted (Flagger)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import flagger_go
import pytest
from k8s_schemas import problems
from live_prometheus import Prom, serve_text, start_prometheus, stop_prometheus, wait_ready

from triton_sre import conventions as c
from triton_sre import promql as pq
from triton_sre.data import shipped
from triton_sre.rollout.figures import FIGURES
from triton_sre.rollout.k8s import (
    JUDGED,
    JUDGED_RANGE,
    NOT_JUDGED,
    NOT_JUDGED_FLAG,
    TEMPLATE_NAME,
    analysis_template,
    metric_templates,
    threshold,
)
from triton_sre.slo import Spec, parse_spec
from triton_sre.stack.processes import free_port

NAMESPACE, INTERVAL_S = "ml", 20
BATCHING = c.ROLLOUT_FIG_BATCHING_RATIO
# model -> ((requests/s, inferences per execution) of the primary / version 1, of the canary / version 2)
TRAFFIC = {
    "ranker": ((90.0, 1.59), (10.0, 1.18)),  # a sound canary at 10 %: smaller batches from less load
    "scorer": ((50.0, 2.0), (48.0, 1.0)),  # half the batching at the baseline's traffic: worse
    "steady": ((50.0, 1.6), (45.0, 1.5)),  # comparable traffic, batching within the margin
    "idle": ((10.0, 1.5), (0.02, 1.0)),  # the canary under min_request_rate: no verdict
    "plain": ((50.0, 2.0), (48.0, 1.0)),  # as scorer, but no dynamic batcher: its clients' batch size
}
BATCHER = {"plain": 0, "steady": 1}  # the exporter's triton_sre_model_dynamic_batching (none: unknown)
SUCCESSFUL, FAILED, INCONCLUSIVE = "Successful", "Failed", "Inconclusive"
HALTED = "halted"  # Flagger: a value outside thresholdRange, or none (no values found)


def _exposition(started: float) -> str:
    elapsed = time.time() - started
    lines = []
    for model, sides in TRAFFIC.items():
        for version, pod, (rps, batching) in zip(
            ("1", "2"), (f"{model}-primary-7d9f", f"{model}-5c8b"), sides, strict=True
        ):
            labels = [(c.LABEL_MODEL, model), (c.LABEL_VERSION, version), (c.LABEL_NAMESPACE, NAMESPACE)]
            lines += counter_lines([*labels, ("pod", pod)], rps, batching, elapsed)
    lines += [
        f"{pq.selector(c.M_MODEL_DYNAMIC_BATCHING, pq.equal([(c.LABEL_MODEL, m)]))} {v}"
        for m, v in BATCHER.items()
    ]
    return "\n".join(lines) + "\n"


def counter_lines(labels: list[tuple[str, str]], rps: float, batching: float, elapsed: float) -> list[str]:
    """One side's counters `elapsed` seconds after they started at `rps` requests a second, `batching`
    inferences an execution, no failure."""
    counters = {
        c.NV_REQUEST_SUCCESS: rps,
        c.NV_REQUEST_FAILURE: 0.0,
        c.NV_INFERENCE_COUNT: rps,
        c.NV_EXEC_COUNT: rps / batching,
    }
    return [
        f"{pq.selector(name, pq.equal(labels))} {per_s * elapsed:.3f}" for name, per_s in counters.items()
    ]


@pytest.fixture(scope="module")
def prom(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prom]:
    started = time.time()
    with scraped_store(tmp_path_factory.mktemp("rollout-split"), lambda: _exposition(started)) as store:
        yield store


@contextmanager
def scraped_store(work: Path, exposition: Callable[[], str]) -> Iterator[Prom]:
    """A real Prometheus scraping `exposition` every second as Triton's job and the exporter's, ready
    once Triton's job has INTERVAL_S seconds of samples; stopped on exit."""
    server = serve_text(exposition)
    config = {
        "global": {"scrape_interval": "1s", "scrape_timeout": "900ms"},
        "scrape_configs": [  # the exporter's gauge read from the same page (the queries select each job)
            {"job_name": job, "static_configs": [{"targets": [f"127.0.0.1:{server.server_address[1]}"]}]}
            for job in (c.DEFAULT_TRITON_JOB, spec().exporter_job)
        ],
    }
    port = free_port()
    proc, log = start_prometheus(work, config, port)
    try:
        store = wait_ready(proc, work, port)
        full = f"count_over_time(up{{job={pq.q(c.DEFAULT_TRITON_JOB)}}}[{INTERVAL_S}s]) >= {INTERVAL_S - 2}"
        deadline = time.monotonic() + INTERVAL_S + 30
        while not store.query(full):
            assert time.monotonic() < deadline, (work / "prometheus.log").read_text()
            time.sleep(1)
        yield store
    finally:
        stop_prometheus(proc, log)
        server.shutdown()
        server.server_close()


def spec() -> Spec:
    return parse_spec(shipped("slos.yaml").read_text())


def _argo_phase(metric: dict[str, Any], result: list[float]) -> str:
    """Argo's evaluate.EvaluateResult for this template's conditions, `len(result) > 0 && result[0] OP
    bound` and its negation: failed when the failure condition holds, inconclusive when neither does."""
    form = r"len\(result\) > 0 && (!\()?result\[0\] (<=|>=) ([0-9.e+-]+)\)?"
    (success, failure) = (re.fullmatch(form, metric[k]) for k in ("successCondition", "failureCondition"))
    assert success and failure and not success[1] and failure[1], metric
    assert success.groups()[1:] == failure.groups()[1:]
    op, bound = success[2], float(success[3])
    holds = bool(result) and (result[0] <= bound if op == "<=" else result[0] >= bound)
    if bool(result) and not holds:
        return FAILED
    return SUCCESSFUL if holds else INCONCLUSIVE


def _answer(prom: Prom, query: str, at: float) -> list[float]:
    return [float(row["value"][1]) for row in prom.query(query, at)]


def _batching(prom: Prom, model: str, version: str, at: float) -> float:
    side = pq.equal([(c.LABEL_MODEL, model), (c.LABEL_VERSION, version)])
    rates = [
        f"sum(rate({pq.selector(name, side)}[{c.REC_RATE_WINDOW}]))"
        for name in (c.NV_INFERENCE_COUNT, c.NV_EXEC_COUNT)
    ]
    (value,) = _answer(prom, " / ".join(rates), at)
    return value


def _argo_query(
    prom: Prom,
    model: str,
    at: float,
    name: str,
    of: Spec | None = None,
    more: Mapping[str, str] | None = None,
) -> tuple[dict[str, Any], list[float]]:
    """Argo's measurement of metric `name` of the AnalysisTemplate of `of` (default the shipped spec),
    versions 1 and 2 of `model`, with the args `more` too."""
    template = analysis_template(of or spec())
    assert problems(template) == []
    (metric,) = [m for m in template["spec"]["metrics"] if m["name"] == name]
    args = {"model": model, "baseline-version": "1", "candidate-version": "2", **(more or {})}
    query = metric["provider"]["prometheus"]["query"]
    for name, value in args.items():  # Argo substitutes {{args.NAME}} as plain text
        query = query.replace(f"{{{{args.{name}}}}}", value)
    assert "{{" not in query, query
    return metric, _answer(prom, query, at)


def argo(prom: Prom, model: str, at: float) -> tuple[str, list[float]]:
    metric, result = _argo_query(prom, model, at, BATCHING)
    return _argo_phase(metric, result), result


def _flagger_query(
    prom: Prom,
    model: str,
    at: float,
    name: str,
    of: Spec | None = None,
    variables: dict[str, str] | None = None,
) -> list[float]:
    """Flagger's value of MetricTemplate `name` of `of` (default the shipped spec) for a Canary of
    `model` with `templateVariables` `variables` (None: none given)."""
    templates = metric_templates(of or spec())
    (template,) = [t for t in templates if t["metadata"]["name"] == f"{TEMPLATE_NAME}-{name}"]
    assert problems(template) == []
    ((query, error),) = flagger_go.render(
        [template["spec"]["query"]], variables, namespace=NAMESPACE, target=model, interval=f"{INTERVAL_S}s"
    )
    assert not error, error
    return _answer(prom, query, at)


def flagger(prom: Prom, model: str, at: float) -> tuple[str, list[float]]:
    result = _flagger_query(prom, model, at, BATCHING)
    side, bound = threshold(next(f for f in FIGURES if f.name == BATCHING), spec().rollout.margins[BATCHING])
    assert side == "min"  # the Canary's thresholdRange for the batching ratio (docs/rollouts.md)
    # scheduler_metrics.go: no values found, or a value below thresholdRange.min, halts advancement
    return (SUCCESSFUL if result and result[0] >= bound else HALTED), result


def test_a_sound_canary_at_ten_percent_is_not_judged_on_its_smaller_batches(prom: Prom) -> None:
    at = time.time() - 1
    # what the query compared before: the canary batched about 0.74 of the primary, below 1 - 0.2
    canary, primary = (_batching(prom, "ranker", version, at) for version in ("2", "1"))
    assert canary / primary < 1 - spec().rollout.margins[BATCHING], (canary, primary)
    assert argo(prom, "ranker", at) == (SUCCESSFUL, [NOT_JUDGED])
    assert flagger(prom, "ranker", at) == (SUCCESSFUL, [NOT_JUDGED])


def test_a_worse_canary_at_comparable_traffic_still_fails(prom: Prom) -> None:
    at = time.time() - 1
    for judge in (argo, flagger):
        verdict, result = judge(prom, "scorer", at)
        assert verdict in (FAILED, HALTED) and result and 0.45 < result[0] < 0.55, (judge, verdict, result)
        verdict, result = judge(prom, "steady", at)  # judged, not NOT_JUDGED: the measured 1.5 / 1.6
        assert verdict == SUCCESSFUL and result and 0.9 < result[0] < 0.97, (judge, verdict, result)


def test_a_model_without_a_dynamic_batcher_is_not_judged_on_its_clients_batches(prom: Prom) -> None:
    """rollout31: `plain` batches half as much at the primary's traffic, as `scorer`, but the exporter
    says it runs no dynamic batcher: the ratio is its clients' batch size, which no version changes.
    It failed both tools before (0.5); it answers NOT_JUDGED now, as `rollout check` and the guard."""
    at = time.time() - 1
    assert 0.45 < _batching(prom, "plain", "2", at) / _batching(prom, "plain", "1", at) < 0.55
    assert argo(prom, "plain", at) == (SUCCESSFUL, [NOT_JUDGED])
    assert flagger(prom, "plain", at) == (SUCCESSFUL, [NOT_JUDGED])
    passes = (SUCCESSFUL, [NOT_JUDGED_FLAG])
    assert judged(prom, "plain", at) == {"argo": passes, "flagger": passes}


def test_a_canary_with_too_little_traffic_stays_without_a_value(prom: Prom) -> None:
    at = time.time() - 1
    assert argo(prom, "idle", at) == (INCONCLUSIVE, [])
    assert flagger(prom, "idle", at) == (HALTED, [])


def judged(prom: Prom, model: str, at: float) -> dict[str, tuple[str, list[float]]]:
    """batching-ratio-judged as each tool reads it: (how the tool takes the measurement, its value)."""
    metric, argo_result = _argo_query(prom, model, at, c.ROLLOUT_BATCHING_JUDGED)
    # evaluate.EvaluateResult: a metric with neither condition is Successful whatever it answers, and a
    # metric listed in dryRun never counts for the run
    assert "successCondition" not in metric and "failureCondition" not in metric, metric
    dry = analysis_template(spec())["spec"]["dryRun"]
    assert {"metricName": c.ROLLOUT_BATCHING_JUDGED} in dry
    result = _flagger_query(prom, model, at, c.ROLLOUT_BATCHING_JUDGED)
    # scheduler_metrics.go: no value halts; a value outside the Canary's thresholdRange halts
    inside = bool(result) and JUDGED_RANGE["min"] <= result[0] <= JUDGED_RANGE["max"]
    return {"argo": (SUCCESSFUL, argo_result), "flagger": (SUCCESSFUL if inside else HALTED, result)}


def test_not_judged_is_told_apart_from_a_measured_equal_ratio_and_stops_nothing(prom: Prom) -> None:
    """The batching query answers 1 both for a canary at 10 % (not judged) and for one batching as the
    primary: batching-ratio-judged tells them apart (0 and 1) and passes in both tools, as it does
    for a canary with too little traffic (0, where the figures answer nothing)."""
    at = time.time() - 1
    expected = {"ranker": NOT_JUDGED_FLAG, "scorer": JUDGED, "steady": JUDGED, "idle": NOT_JUDGED_FLAG}
    for model, flag in expected.items():
        passes = (SUCCESSFUL, [flag])
        assert judged(prom, model, at) == {"argo": passes, "flagger": passes}, model
