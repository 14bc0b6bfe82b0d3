"""`triton-sre report` on a model served in two versions (a canary, a rollout): a row per version
under the model's total, whose figures agree with each other (no Prometheus needed)."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable

import pandas as pd
import pytest

from triton_sre import conventions as c
from triton_sre.report import recommend as rec
from triton_sre.report.figures import (
    ALL_VERSIONS,
    HISTOGRAM_BUCKETS,
    LATENCY_PER_VERSION,
    RangeData,
    model_rows,
    model_table,
)
from triton_sre.report.render import (
    CostReport,
    recommendations_csv,
    table_notes,
    to_csv,
    to_html,
    to_markdown,
)

STEP = 10.0
TIMES = [1000.0 + STEP * i for i in range(7)]  # one minute


def counter(model: str, version: str, per_step: float, **labels: str) -> pd.DataFrame:
    values = [per_step * i for i in range(len(TIMES))]
    return pd.DataFrame({"model": model, "version": version, **labels, "timestamp": TIMES, "value": values})


def gauge(value: float, **labels: str) -> pd.DataFrame:
    return pd.DataFrame({**labels, "timestamp": TIMES, "value": value})


# ranker v1: 100 requests a step, 2 ms each, batches of 4; v2 (the canary): 10 a step, 78 ms each,
# batches of 2; vector_scale: one version
PER_STEP = {
    ("ranker", "1"): {"requests": 100, "ms": 2.0, "batch": 4},
    ("ranker", "2"): {"requests": 10, "ms": 78.0, "batch": 2},
    ("vector_scale", "1"): {"requests": 50, "ms": 1.0, "batch": 1},
}


def _frames(summary: bool = True) -> dict[str, pd.DataFrame]:
    def each(figure: str) -> pd.DataFrame:
        return pd.concat(counter(model, version, f[figure]) for (model, version), f in PER_STEP.items())

    frames = {
        c.NV_REQUEST_SUCCESS: each("requests"),
        c.NV_INFERENCE_COUNT: each("requests"),
        c.NV_REQUEST_FAILURE: pd.concat(counter(m, v, 0) for m, v in PER_STEP),
        c.NV_EXEC_COUNT: pd.concat(
            counter(m, v, f["requests"] / f["batch"]) for (m, v), f in PER_STEP.items()
        ),
        c.NV_REQUEST_DURATION_US: pd.concat(
            counter(m, v, f["requests"] * f["ms"] * 1000) for (m, v), f in PER_STEP.items()
        ),
        c.NV_QUEUE_DURATION_US: pd.concat(
            counter(m, v, f["requests"] * f["ms"] * 600)
            for (m, v), f in PER_STEP.items()  # 60% queueing
        ),
        c.M_COST_PER_HOUR: pd.concat(
            [
                gauge(0.10, model="ranker", version="1", currency="USD"),
                gauge(0.20, model="ranker", version="2", currency="USD"),
                gauge(0.05, model="vector_scale", version="1", currency="USD"),
            ]
        ),
        c.M_SERVER_COST_PER_HOUR: gauge(0.36, currency="USD"),
        c.M_IDLE_COST_FRACTION: gauge(0.1),
    }
    if summary:
        frames[c.NV_REQUEST_SUMMARY_US] = pd.concat(
            gauge(f["ms"] * 1000, model=m, version=v, quantile=q)
            for (m, v), f in PER_STEP.items()
            for q in c.LATENCY_QUANTILES
        )
    return frames


def _table(frames: dict[str, pd.DataFrame]) -> pd.DataFrame:
    return model_table(RangeData(TIMES[0], TIMES[-1], STEP, frames))[0]


def test_a_model_in_two_versions_gets_its_total_then_a_row_per_version() -> None:
    table, summary = model_table(RangeData(TIMES[0], TIMES[-1], STEP, _frames()))
    assert list(zip(table["model"], table["version"], strict=True)) == [
        ("ranker", ALL_VERSIONS),
        ("ranker", "1"),
        ("ranker", "2"),
        ("vector_scale", "1"),  # one version: one row, its version named
    ]
    rows = table.set_index(["model", "version"])
    total, v1, v2 = (rows.loc[("ranker", v)] for v in (ALL_VERSIONS, "1", "2"))
    # the total is over both versions: inferences, cost, average latency
    assert total["inferences"] == v1["inferences"] + v2["inferences"] == 660
    assert total["cost"] == pytest.approx(v1["cost"] + v2["cost"])
    assert total["avg_latency_ms"] == pytest.approx((600 * 2.0 + 60 * 78.0) / 660)
    # ... and its summary quantiles are left to the versions: no worst-version p50 beside that average
    assert all(math.isnan(total[f"{c.quantile_name(q)}_ms"]) for q in c.LATENCY_QUANTILES)
    assert total["latency_source"] == LATENCY_PER_VERSION
    # each version's row agrees with itself: its average and its quantiles, its batching
    assert v1["avg_latency_ms"] == pytest.approx(2.0) and v1["p50_ms"] == pytest.approx(2.0)
    assert v2["avg_latency_ms"] == pytest.approx(78.0) and v2["p99_ms"] == pytest.approx(78.0)
    assert v1["batching_ratio"] == pytest.approx(4.0) and v2["batching_ratio"] == pytest.approx(2.0)
    assert v2["cost_per_1k"] == pytest.approx(0.20 * 70 / 3600 / 60 * 1000)
    assert v1["latency_source"] == v2["latency_source"] == c.LATENCY_SOURCE_SUMMARY
    # the summary counts models and their inferences once, not the versions' rows again
    assert summary.models == 2 and summary.inferences == 660 + 300
    assert list(model_rows(table)["version"]) == [ALL_VERSIONS, "1"]


def test_histogram_quantiles_of_two_versions_merge_into_the_total() -> None:
    """Buckets add up across versions, so the total keeps its quantiles: v1 all within 10 ms, v2
    within 100 ms; the merged median is v1's, the p99 v2's."""
    frames = _frames(summary=False)
    bounds = ("10", "100", "+Inf")
    frames[HISTOGRAM_BUCKETS] = pd.concat(
        counter("ranker", version, n, le=le)
        for version, per_bound in (("1", (100, 100, 100)), ("2", (0, 10, 10)))
        for le, n in zip(bounds, per_bound, strict=True)
    )
    rows = _table(frames).set_index(["model", "version"])
    total, v2 = rows.loc[("ranker", ALL_VERSIONS)], rows.loc[("ranker", "2")]
    assert total["latency_source"] == v2["latency_source"] == c.LATENCY_SOURCE_HISTOGRAM
    assert total["p50_ms"] == pytest.approx(5.5) and total["p99_ms"] == pytest.approx(10 + 90 * 0.89)
    assert v2["p50_ms"] == pytest.approx(55.0)


def test_a_version_with_no_traffic_gets_no_row() -> None:
    """A version loaded but idle (the old one after a rollout): the model keeps one row."""
    frames = _frames()
    idle = {family: counter("ranker", "3", 0) for family in (c.NV_REQUEST_SUCCESS, c.NV_INFERENCE_COUNT)}
    frames.update({family: pd.concat([frames[family], extra]) for family, extra in idle.items()})
    for family in (c.NV_REQUEST_SUCCESS, c.NV_INFERENCE_COUNT, c.NV_EXEC_COUNT):
        frames[family] = frames[family][frames[family]["version"] != "2"]
    table = _table(frames)
    assert list(zip(table["model"], table["version"], strict=True)) == [
        ("ranker", "1"),
        ("vector_scale", "1"),
    ]


def test_version_rows_reach_every_format_and_recommendations_stay_per_model() -> None:
    """Both ranker versions (and its total) queue 60 % of their time on an instance that cannot
    batch: the advice holds for the model, so it is the model's, once."""
    table, summary = model_table(RangeData(TIMES[0], TIMES[-1], STEP, _frames()))
    recs = rec.recommend(table, 0.9)
    report = CostReport(TIMES[0], TIMES[-1], STEP, "http://prom", table, summary, recs)
    md = to_markdown(report)
    assert "| ranker | all |" in md and "| ranker | 1 |" in md and "| ranker | 2 |" in md
    assert f"| {LATENCY_PER_VERSION} |" in md
    html = to_html(report)
    assert "<th>version</th>" in html and html.count("<td>ranker</td>") == 3
    csv = to_csv(report).splitlines()
    assert csv[0].startswith("model,version,") and sum(line.startswith("ranker,") for line in csv) == 3
    # one recommendation per model, from its total row, not one more per version
    adds = [r for r in recs if r.id == rec.REC_ADD_INSTANCES]
    assert sorted((r.model or "", r.version) for r in adds) == [("ranker", None), ("vector_scale", None)]
    ranker = next(r for r in adds if r.model == "ranker")
    assert ranker.value == pytest.approx(0.6) and ranker.subject == "ranker"
    assert "- **ranker** `add-instances`" in md


def test_a_batching_ratio_lowered_by_failed_requests_is_explained_under_the_table() -> None:
    """Triton counts a failed batch as an execution but its requests not as inferences (measured on
    2.51: tests/test_exporter_live.py): the canary failing half its requests reads a lower ratio."""
    frames = _frames()
    # v2 batches by 2: its 10 successful requests a step are 5 executions, its 10 failed ones 5 more
    failing = counter("ranker", "2", 10, reason="BACKEND")
    frames[c.NV_REQUEST_FAILURE] = pd.concat([frames[c.NV_REQUEST_FAILURE], failing])
    executions = frames[c.NV_EXEC_COUNT]
    v2_rows = (executions["model"] == "ranker") & (executions["version"] == "2")
    frames[c.NV_EXEC_COUNT] = pd.concat([executions[~v2_rows], counter("ranker", "2", 10)])
    table, summary = model_table(RangeData(TIMES[0], TIMES[-1], STEP, frames))
    v2 = table.set_index(["model", "version"]).loc[("ranker", "2")]
    # 60 inferences over 60 executions: 1.0, where the model batches by 2
    assert v2["failures"] == 60 and v2["batching_ratio"] == pytest.approx(1.0)
    notes = table_notes(table)
    assert notes == [
        "ranker v2: batching ratio 1.00 is lowered by its 60 failed requests: Triton counts a failed batch "
        "as an execution, its requests not as inferences."
    ]
    report = CostReport(TIMES[0], TIMES[-1], STEP, "http://prom", table, summary, [])
    assert f"- {notes[0]}" in to_markdown(report) and f"<p>{notes[0]}</p>" in to_html(report)
    assert table_notes(_table(_frames())) == []


def _batching_frames(versions: dict[str, dict[str, float]]) -> dict[str, pd.DataFrame]:
    """ranker's versions, per step: `ok` successful requests in `ok_execs` executions, `failed`
    requests in `failed_execs` more, each request 10 ms of which `queue` share queueing; the
    exporter's gauges say max_batch_size 8 (ratio 2, fill 0.25)."""

    def each(figure: Callable[[dict[str, float]], float], **labels: str) -> pd.DataFrame:
        return pd.concat(counter("ranker", v, figure(f), **labels) for v, f in versions.items())

    return {
        c.NV_REQUEST_SUCCESS: each(lambda f: f["ok"]),
        c.NV_INFERENCE_COUNT: each(lambda f: f["ok"]),
        c.NV_REQUEST_FAILURE: each(lambda f: f["failed"], reason=c.FAILURE_REASON_BACKEND),
        c.NV_EXEC_COUNT: each(lambda f: f["ok_execs"] + f["failed_execs"]),
        c.NV_REQUEST_DURATION_US: each(lambda f: f["ok"] * 10_000),
        c.NV_QUEUE_DURATION_US: each(lambda f: f["ok"] * 10_000 * f["queue"]),
        c.M_BATCHING_RATIO: pd.concat(gauge(2.0, model="ranker", version=v) for v in versions),
        c.M_BATCH_FILL_RATIO: pd.concat(gauge(0.25, model="ranker", version=v) for v in versions),
    }


def test_a_recommendation_that_holds_for_one_version_names_it() -> None:
    """The canary (v2) queues 70 % of its time, v1 2 %: the instance advice is v2's, named in every
    output; v1's mostly empty batches are v1's. Before, only the model's total was judged (the total
    queues 64 %: "add instances" for the whole model, v1 included)."""
    frames = _batching_frames(
        {
            "1": {"ok": 20, "ok_execs": 20, "failed": 0, "failed_execs": 0, "queue": 0.02},
            "2": {"ok": 80, "ok_execs": 10, "failed": 0, "failed_execs": 0, "queue": 0.7},
        }
    )
    table, summary = model_table(RangeData(TIMES[0], TIMES[-1], STEP, frames))
    recs = rec.recommend(table, None)
    assert [(r.subject, r.id) for r in recs] == [
        ("ranker v1", rec.REC_RAISE_QUEUE_DELAY),
        ("ranker v2", rec.REC_ADD_INSTANCES),
    ]
    assert recs[1].value == pytest.approx(0.7) and recs[0].value == pytest.approx(1 / 8)
    report = CostReport(TIMES[0], TIMES[-1], STEP, "http://prom", table, summary, recs)
    assert f"- **ranker v2** `{rec.REC_ADD_INSTANCES}`" in to_markdown(report)
    assert f"<strong>ranker v2</strong> <code>{rec.REC_ADD_INSTANCES}</code>" in to_html(report)
    rows = list(csv.DictReader(io.StringIO(recommendations_csv(report))))
    assert [(r["model"], r["version"], r["id"]) for r in rows] == [
        ("ranker", "1", rec.REC_RAISE_QUEUE_DELAY),
        ("ranker", "2", rec.REC_ADD_INSTANCES),
    ]


def test_batching_advice_is_not_triggered_by_failed_requests() -> None:
    """v2 batches its successful requests by 2 (30 executions for 60 inferences) but fails 60 more,
    one by one: Triton counts those 60 executions and no inference, so v2's ratio reads 0.67 and,
    with 30 % of its time queueing, read as "runs one by one". The successful requests' executions
    number at least executions - failures (each failed execution holds a failed request): their
    ratio is at most 60 / (90 - 60) = 2.0, judged instead, so no batching advice. v1
    really runs one by one (failures too): its bound is 1.0, and the advice stays, naming v1."""
    frames = _batching_frames(
        {
            "1": {"ok": 20, "ok_execs": 20, "failed": 5, "failed_execs": 5, "queue": 0.3},
            "2": {"ok": 10, "ok_execs": 5, "failed": 10, "failed_execs": 10, "queue": 0.3},
        }
    )
    table, _ = model_table(RangeData(TIMES[0], TIMES[-1], STEP, frames))
    v2 = table.set_index(["model", "version"]).loc[("ranker", "2")]
    assert v2["batching_ratio"] == pytest.approx(60 / 90) and v2["max_batch_size"] == 8
    recs = rec.recommend(table, None)
    assert [(r.subject, r.id) for r in recs] == [("ranker v1", rec.REC_ENABLE_BATCHING)]
    assert recs[0].value == pytest.approx(1.0)
    assert "at most 1.00 (measured 0.80, lowered by 30 failed requests" in recs[0].why
    # failures reaching the executions leave nothing known of the successful requests' batching
    frames = _batching_frames({"2": {"ok": 10, "ok_execs": 5, "failed": 10, "failed_execs": 5, "queue": 0.3}})
    assert rec.recommend(model_table(RangeData(TIMES[0], TIMES[-1], STEP, frames))[0], None) == []


def test_failed_requests_do_not_read_as_a_model_that_does_not_batch() -> None:
    """journey25's incident window: ranker (dynamic batching on) with v2 failing every request. Triton counts
    a failed batch as an execution, so its total row read 0.66 inferences per execution and the report
    recommended `enable-dynamic-batching`; its requests per execution are 1.67. A model with the same
    figures and no failure still gets the advice."""
    failing = {
        "model": "ranker", "version": ALL_VERSIONS, "requests_per_s": 18.74, "inferences": 4418.0,
        "executions": 6740.0, "requests": 11244.0, "failures": 6826.0, "batching_ratio": 4418 / 6740,
        "max_batch_size": 16.0, "batch_fill": 4418 / 6740 / 16, "queue_share": 0.416,
    }  # fmt: skip
    unbatched = {**failing, "model": "other", "requests": 4418.0, "failures": 0.0}
    recs = rec.recommend(pd.DataFrame([failing, unbatched]), None)
    assert [(r.model, r.id) for r in recs] == [("other", rec.REC_ENABLE_BATCHING)]


def test_failures_of_reason_other_count_no_execution() -> None:
    """OTHER is core's reason for a batch failing its pre-execution checks before the backend ran
    (backend_model_instance.cc, PrepareRequestsOrRespond) and for an ensemble's failed request, which
    adds no ensemble execution: neither is in the execution count (`FAILURE_REASONS_NEVER_EXECUTED`).
    v1: 20 inferences in 20 executions, 10 BACKEND failures that executed, 30 OTHER: its bound is
    20 / (30 - 10) = 1.0 and it gets batching advice; before, the 40 failures counted as executed
    reached its 30 executions and it got none."""
    frames = _batching_frames(
        {
            "1": {"ok": 20, "ok_execs": 20, "failed": 10, "failed_execs": 10, "queue": 0.3},
            "2": {"ok": 10, "ok_execs": 10, "failed": 0, "failed_execs": 0, "queue": 0.3},
        }
    )
    other = counter("ranker", "1", 30, reason=c.FAILURE_REASON_OTHER)
    frames[c.NV_REQUEST_FAILURE] = pd.concat([frames[c.NV_REQUEST_FAILURE], other])
    table, _ = model_table(RangeData(TIMES[0], TIMES[-1], STEP, frames))
    v1 = rec.recommend(table[table["version"] == "1"], None)
    assert [r.id for r in v1] == [rec.REC_ENABLE_BATCHING]
    assert v1[0].value == pytest.approx(1.0) and "180 more failed before any execution" in v1[0].why
    rows = table.set_index(["model", "version"])
    assert rows.loc[("ranker", "1"), "failures_never_executed"] == 30 * 6


def test_failures_rejected_or_cancelled_in_the_queue_do_not_lower_the_bound() -> None:
    """Triton 24.07+ labels each failure with `reason`: REJECTED (a queue policy's timeout) and
    CANCELED requests are released from the queue, never executed (core's schedulers), so they hide no
    execution. v1 runs one by one (20 executions for 20 inferences) while 30 % of its time queues, 10
    failures executed (BACKEND) and 30 timed out in the queue (REJECTED): its bound is 20 / (30 - 10)
    = 1.0, batching advice; before, all 40 counted as executed reached the 30 executions and v1 got no
    advice at all. v2's 40 failures were all REJECTED: its measured ratio is exact, no note under
    the table (before, a bound of 10 / (5 - 40): none)."""
    frames = _batching_frames(
        {
            "1": {"ok": 20, "ok_execs": 20, "failed": 10, "failed_execs": 10, "queue": 0.3},
            "2": {"ok": 10, "ok_execs": 10, "failed": 0, "failed_execs": 0, "queue": 0.3},
        }
    )
    rejected = {"1": 30, "2": 40}
    frames[c.NV_REQUEST_FAILURE] = pd.concat(
        [
            frames[c.NV_REQUEST_FAILURE],
            *(counter("ranker", v, n, reason=c.FAILURE_REASON_REJECTED) for v, n in rejected.items()),
        ]
    )
    table, _ = model_table(RangeData(TIMES[0], TIMES[-1], STEP, frames))
    recs = rec.recommend(table, None)
    assert [(r.subject, r.id) for r in recs] == [("ranker", rec.REC_ENABLE_BATCHING)]
    v1 = rec.recommend(table[table["version"] == "1"], None)[0]
    assert v1.value == pytest.approx(1.0)
    assert (
        "lowered by 60 failed requests" in v1.why
        and "180 more failed before any execution" in v1.why
    )
    rows = table.set_index(["model", "version"])
    assert (
        rows.loc[("ranker", "1"), "failures"] == 40 * 6
        and rows.loc[("ranker", "1"), "failures_never_executed"] == 30 * 6
    )
    assert (
        rows.loc[("ranker", "2"), "failures_never_executed"]
        == rows.loc[("ranker", "2"), "failures"]
        == 40 * 6
    )
    notes = table_notes(table)
    assert len(notes) == 1 and notes[0].startswith(
        "ranker v1: batching ratio 0.67 is lowered by its 60 failed"
    )
