"""`report` on fleet-sized Prometheus answers: thousands of series read in slices give the same
arrays as one answer; a query too big for the sample budget coarsens the default step (said on
stderr) or, with `--step`, is one clear error and exit 2; an answer over the byte cap is refused
before it is decoded; charts of thousands of models stay drawable.

Stand-in: tests/fleet_standins.py (counters a function of time alone: 0.5/s, reset every 2 h), so
expected figures are computed here from that law. Correctness only; figures in bench/RESULTS.md.
"""

from __future__ import annotations

import csv
import json
import struct
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from fleet_standins import BUCKETS, FleetPrometheus, model_name

from triton_sre import conventions as c
from triton_sre.prom import PromError, Prometheus
from triton_sre.promcore import PROMETHEUS_MAX_POINTS, range_points
from triton_sre.report import prom as report_prom
from triton_sre.report.capacity import REDUCED
from triton_sre.report.charts import MAX_MODELS, draw_all
from triton_sre.report.command import build_report
from triton_sre.report.figures import HISTOGRAM_BUCKETS
from triton_sre.report.llm import TOKEN_FAMILIES
from triton_sre.report.prom import PrometheusClient, TooManySamples, fitting_step
from triton_sre.report.steps import report_plan
from triton_sre.slo import load_spec

END = 1_764_003_600  # END % 7200 == 3600: the hour before it holds no reset
START = END - 3600
MODELS, TRITONS = 150, 10
LLM_MODELS = 20  # of the fleet with the histogram, token and capacity families


@pytest.fixture(scope="module")
def prom() -> FleetPrometheus:
    with FleetPrometheus(0, models=MODELS, tritons=TRITONS) as server:
        yield server


def test_sliced_reads_equal_one_answer(prom: FleetPrometheus, monkeypatch: pytest.MonkeyPatch) -> None:
    client = PrometheusClient(prom.url)
    whole = list(client.iter_range_arrays(c.NV_INFERENCE_COUNT, START, END, 30))
    monkeypatch.setattr(report_prom, "SAMPLES_PER_ANSWER", MODELS * TRITONS * 12)  # slices of 12 points
    before = prom.requests["/api/v1/query_range"]
    sliced = client.read_range(c.NV_INFERENCE_COUNT, START, END, 30)
    assert prom.requests["/api/v1/query_range"] - before == 1 + -(
        -(121 - report_prom.FIRST_SLICE_POINTS) // 12
    )
    assert len(sliced) == len(whole) == MODELS * TRITONS
    for (labels, stamps, values), (labels2, stamps2, values2) in zip(sliced, whole, strict=True):
        assert labels == labels2
        np.testing.assert_array_equal(stamps, stamps2)
        np.testing.assert_array_equal(values, values2)
    assert whole[0][2][-1] == 1800.0  # 0.5/s over the hour


def test_arrays_check_the_matrix_as_query_range_does() -> None:
    good = {"metric": {"a": "1"}, "values": [[1, "NaN"], [2, "+Inf"], [3, "1e3"], [4, "-2"]]}
    null = {"metric": {"a": "1"}, "values": [[1, None]]}
    bad_point = {"metric": {"a": "1"}, "values": [[1, "2", "3"]]}
    for series in (good, null, bad_point):
        body = json.dumps(
            {"status": "success", "data": {"resultType": "matrix", "result": [series]}}
        ).encode()
        with FleetPrometheus(0) as server:
            server.range_answer = lambda query, stamps, body=body: body  # type: ignore[method-assign]
            other = PrometheusClient(server.url)
            try:
                expected = other.query_range("x", 0, 4, 1)
            except PromError as exc:
                with pytest.raises(PromError) as raised:
                    list(other.iter_range_arrays("x", 0, 4, 1))
                assert str(raised.value) == str(exc)
                continue
            ((labels, stamps, values),) = list(other.iter_range_arrays("x", 0, 4, 1))
            assert labels == expected[0]["metric"]
            np.testing.assert_array_equal(stamps, [float(p[0]) for p in expected[0]["values"]])
            np.testing.assert_array_equal(
                values, np.array([p[1] for p in expected[0]["values"]], dtype=float)
            )


def test_fitting_step_keeps_within_the_budget() -> None:
    for series in (1, 7, 4000, 200_000, 2_000_000):
        step = fitting_step(START, END, series)
        assert step is not None
        points = int((END - START) // step) + 1
        assert series * points <= report_prom.MAX_SAMPLES_PER_QUERY
        if step > 1:  # one second finer would not fit
            assert series * (int((END - START) // (step - 1)) + 1) > report_prom.MAX_SAMPLES_PER_QUERY
    assert fitting_step(START, END, report_prom.MAX_SAMPLES_PER_QUERY + 1) is None


def test_too_many_samples_coarsens_the_default_step_once(
    prom: FleetPrometheus, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(report_prom, "MAX_SAMPLES_PER_QUERY", MODELS * TRITONS * 40)
    notes: list[str] = []
    reads: list[tuple[str, float]] = []
    iter_range_arrays = PrometheusClient.iter_range_arrays

    def recorded(self: PrometheusClient, expr: str, start: float, end: float, step: float):
        reads.append((expr, start))
        return iter_range_arrays(self, expr, start, end, step)

    monkeypatch.setattr(PrometheusClient, "iter_range_arrays", recorded)
    report = build_report(prom.url, START, END, on_note=notes.append)
    # the counters (one series per model and Triton) are the largest query: the summary is read as
    # its worst server per model and quantile, MODELS x 3 series
    assert report.step == fitting_step(START, END, MODELS * TRITONS)
    assert len(notes) == 1 and f"{MODELS * TRITONS:,} series in one query" in notes[0]
    points = int((END - START) // report.step) + 1
    assert MODELS * TRITONS * points <= report_prom.MAX_SAMPLES_PER_QUERY
    assert set(report.table["inferences"]) == {0.5 * (points - 1) * report.step * TRITONS}
    # the step was chosen from the counts before any range was read: no query is read twice
    assert len(reads) == len(set(reads))
    assert sum(start == START for _, start in reads) == len(report_plan(END - START))
    with pytest.raises(TooManySamples, match="give --step"):
        build_report(prom.url, START, END, step=2.0)


def test_a_fine_step_over_a_long_range_is_read_in_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--step 0.25` over an hour is 14,401 points per series, more than Prometheus answers in one query
    (refused before any query until the client split long ranges): each range query now asks at most
    PROMETHEUS_MAX_POINTS points, the shared splitter's seams, and the figures are the whole hour's."""
    asked: list[int] = []
    reads: list[list[int]] = []  # the slices of each range read
    iter_range_arrays, slices_of = PrometheusClient.iter_range_arrays, PrometheusClient._slices

    def recorded(self: PrometheusClient, expr: str, start: float, end: float, step: float):
        asked.append(range_points(start, end, step))
        reads[-1].append(asked[-1])
        return iter_range_arrays(self, expr, start, end, step)

    def read(self: PrometheusClient, *args: Any):
        reads.append([])
        return slices_of(self, *args)

    monkeypatch.setattr(PrometheusClient, "iter_range_arrays", recorded)
    monkeypatch.setattr(PrometheusClient, "_slices", read)
    with FleetPrometheus(0, models=2, tritons=1) as small:
        report = build_report(small.url, START, END, step=0.25)
    assert report.step == 0.25 and range_points(START, END, 0.25) == 14_401
    assert max(asked) == PROMETHEUS_MAX_POINTS  # the long queries were split at the limit
    # a query of no series too (the LLM families here): one small first slice, then the largest ones
    assert max(len(slices) for slices in reads) <= 3, [r for r in reads if len(r) > 3]
    assert {sum(slices) for slices in reads} == {14_401, 1}  # (the TTFT p99: one point, at the end)
    assert set(report.table["inferences"]) == {1800.0}  # 0.5/s over the hour, no point lost or doubled


def _no_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stand-in answers every series count with an empty vector (counts that say nothing)."""
    empty = json.dumps({"status": "success", "data": {"resultType": "vector", "result": []}}).encode()
    monkeypatch.setattr(FleetPrometheus, "count_answer", lambda self, query: empty)


def test_a_series_count_short_of_the_read_still_starts_again(
    prom: FleetPrometheus, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Prometheus whose counts say nothing (an empty answer): the first slice learns the series and
    the report starts again at the step that fits, as before counts were asked."""
    monkeypatch.setattr(report_prom, "MAX_SAMPLES_PER_QUERY", MODELS * TRITONS * 40)
    _no_counts(monkeypatch)
    notes: list[str] = []
    report = build_report(prom.url, START, END, on_note=notes.append)
    assert report.step == fitting_step(START, END, MODELS * TRITONS)
    assert len(notes) == 1


def test_an_answer_over_the_byte_cap_is_refused(prom: FleetPrometheus) -> None:
    small = Prometheus(prom.url, max_bytes=100_000)
    with pytest.raises(PromError, match="more than the 100,000 bytes this client reads"):
        small.query_range(c.NV_INFERENCE_COUNT, START, END, 60)
    assert Prometheus(prom.url).query_range(c.NV_INFERENCE_COUNT, START, END, 600)


def _png_height(png: bytes) -> int:
    return struct.unpack(">I", png[20:24])[0]


def test_charts_of_thousands_of_models_show_the_first_ones() -> None:
    models = [f"model_{i:05d}" for i in range(5000)]
    table = pd.DataFrame(
        {
            "model": models,
            "cost": np.linspace(5000, 1, 5000),
            "idle_cost": 0.5,
            "cost_per_1k": 0.01,
            "queue_share": 0.2,
            "compute_share": 0.5,
        }
    )
    throughput = pd.DataFrame(
        np.ones((3, 5000)) * np.arange(5000), index=[0.0, 60.0, 120.0], columns=pd.Index(models, name="model")
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a layout matplotlib cannot fit warns ("Tight layout not applied")
        charts = draw_all(table, throughput, "USD")
    few = draw_all(table.head(MAX_MODELS), throughput[models[-MAX_MODELS:]], "USD")
    for name, png in charts.items():
        assert png.startswith(b"\x89PNG")
        assert _png_height(png) == _png_height(few[name])  # as tall as a chart of MAX_MODELS models


def test_cli_report_of_many_series(prom: FleetPrometheus, tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "triton_sre.cli",
            "report",
            "--prometheus-url",
            prom.url,
            "--start",
            str(START),
            "--end",
            str(END),
            "--step",
            "60",
            "--out",
            str(tmp_path),
            "--format",
            "csv,md",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == c.EXIT_OK, done.stderr
    assert "Traceback" not in done.stderr
    with (tmp_path / "models.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == MODELS
    assert {float(r["inferences"]) for r in rows} == {1800.0 * TRITONS}
    assert {float(r["requests"]) for r in rows} == {2 * 1800.0 * TRITONS}  # success + failure


@pytest.fixture(scope="module")
def llm_fleet() -> FleetPrometheus:
    with FleetPrometheus(0, models=LLM_MODELS, tritons=TRITONS, families=True) as server:
        yield server


def _reads(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """The expressions the report reads as frames and as per-series increases."""
    reads: dict[str, list[str]] = {"frame": [], "increases": []}
    frame_range, read_increases = PrometheusClient.frame_range, PrometheusClient.read_increases

    def framed(self: PrometheusClient, expr: str, *args: Any, **kwargs: Any) -> pd.DataFrame:
        reads["frame"].append(expr)
        return frame_range(self, expr, *args, **kwargs)

    def reduced(self: PrometheusClient, expr: str, *args: Any, **kwargs: Any) -> Any:
        reads["increases"].append(expr)
        return read_increases(self, expr, *args, **kwargs)

    monkeypatch.setattr(PrometheusClient, "frame_range", framed)
    monkeypatch.setattr(PrometheusClient, "read_increases", reduced)
    return reads


def test_histogram_and_token_counters_are_reduced_as_read(
    llm_fleet: FleetPrometheus, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first-response histogram's buckets (5 per model and Triton) and the LLM token counters
    become per-series increases as read, never frames; the figures are the stand-in's law."""
    reads = _reads(monkeypatch)
    report = build_report(llm_fleet.url, START, END, step=60.0)
    counters = (HISTOGRAM_BUCKETS, *TOKEN_FAMILIES)
    assert set(counters) <= set(reads["increases"])
    assert not set(counters) & set(reads["frame"])
    table = report.table.set_index("model")
    assert set(table["latency_source"]) == {c.LATENCY_SOURCE_HISTOGRAM}
    # every bucket the same count: the quantiles interpolate within the first one (0-100 ms)
    assert table.loc[model_name(0), ["p50_ms", "p95_ms", "p99_ms"]].tolist() == pytest.approx([50, 95, 99])
    llm = report.llm.set_index("model")
    assert len(llm) == 20
    assert set(llm["input_tokens"]) == set(llm["output_tokens"]) == {1800.0 * TRITONS}


def test_capacity_families_are_read_as_one_sample_per_series(
    llm_fleet: FleetPrometheus, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Of the capacity families only the energy cost (averaged and integrated) is read as a frame; the
    others reduced as read to the one sample per series the section uses."""
    reads = _reads(monkeypatch)
    reduced: list[str] = []
    read_reduced = PrometheusClient.read_reduced

    def recorded(self: PrometheusClient, expr: str, *args: Any, **kwargs: Any) -> Any:
        reduced.append(expr)
        return read_reduced(self, expr, *args, **kwargs)

    monkeypatch.setattr(PrometheusClient, "read_reduced", recorded)
    capacity = build_report(llm_fleet.url, START, END, step=60.0).capacity
    assert set(REDUCED) <= set(reduced) and not set(REDUCED) & set(reads["frame"])
    assert c.M_ENERGY_COST_PER_HOUR in reads["frame"]
    assert len(capacity.memory) == 20 * TRITONS and len(capacity.loads) == 20
    assert len(capacity.gpus) == TRITONS * llm_fleet.gpus
    assert capacity.host_headroom_bytes == 0.25 and capacity.unlabelled == ()


def _read_steps(monkeypatch: pytest.MonkeyPatch) -> dict[str, set[float]]:
    """The steps each expression is read at per series (`read_increases`)."""
    steps: dict[str, set[float]] = {}
    read_increases = PrometheusClient.read_increases

    def recorded(self: PrometheusClient, expr: str, start: float, end: float, step: float, *a: Any) -> Any:
        steps.setdefault(expr, set()).add(step)
        return read_increases(self, expr, start, end, step, *a)

    monkeypatch.setattr(PrometheusClient, "read_increases", recorded)
    return steps


def test_the_histogram_is_read_at_its_own_step_and_the_counters_do_not_depend_on_it(
    llm_fleet: FleetPrometheus, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A budget the counters fit at one step and the histogram's 5 buckets per series do not: the
    buckets are read at their own coarser step, every other family at the step of a fleet without
    the histogram, and the per-model figures other than the latency quantiles are the same."""
    series = LLM_MODELS * TRITONS
    monkeypatch.setattr(report_prom, "MAX_SAMPLES_PER_QUERY", series * 40)
    steps = _read_steps(monkeypatch)
    notes: list[str] = []
    with FleetPrometheus(0, models=LLM_MODELS, tritons=TRITONS) as base:
        without = build_report(base.url, START, END, on_note=notes.append)
    assert not any(HISTOGRAM_BUCKETS in note for note in notes)
    steps.clear()
    with_histogram = build_report(llm_fleet.url, START, END, on_note=notes.append)
    counter_step = fitting_step(START, END, series)
    bucket_step = fitting_step(START, END, series * len(BUCKETS))
    assert counter_step is not None and bucket_step is not None and bucket_step > counter_step
    assert without.step == with_histogram.step == counter_step
    assert steps.pop(HISTOGRAM_BUCKETS) == {bucket_step}
    assert set(steps) >= set(c.PER_MODEL_COUNTERS)
    assert all(read == {counter_step} for read in steps.values())
    assert (
        f"{series * len(BUCKETS):,} series of {HISTOGRAM_BUCKETS}: read at step {bucket_step:g}s"
        in (notes[-1])
    )
    latency = ["p50_ms", "p95_ms", "p99_ms", "latency_source"]
    pd.testing.assert_frame_equal(
        without.table.drop(columns=latency), with_histogram.table.drop(columns=latency)
    )
    table = with_histogram.table.set_index("model")
    assert set(table["latency_source"]) == {c.LATENCY_SOURCE_HISTOGRAM}
    assert table.loc[model_name(0), ["p50_ms", "p95_ms", "p99_ms"]].tolist() == pytest.approx([50, 95, 99])


def test_a_histogram_larger_than_counted_raises_only_its_own_step(
    llm_fleet: FleetPrometheus, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No counts answered: the histogram's first slice learns its series, and the report starts again
    with only the buckets' step raised (the counters fit the default step's budget)."""
    series = LLM_MODELS * TRITONS
    points = int((END - START) // 2) + 1  # the default step of an hour: 2 s
    monkeypatch.setattr(report_prom, "MAX_SAMPLES_PER_QUERY", series * points)
    _no_counts(monkeypatch)
    steps = _read_steps(monkeypatch)
    notes: list[str] = []
    report = build_report(llm_fleet.url, START, END, on_note=notes.append)
    bucket_step = fitting_step(START, END, series * len(BUCKETS))
    assert report.step == 2.0
    assert steps[HISTOGRAM_BUCKETS] == {2.0, bucket_step}  # the first slice, then its own step
    assert steps[c.NV_INFERENCE_COUNT] == {2.0}
    assert len(notes) == 1 and HISTOGRAM_BUCKETS in notes[0]


def test_the_slo_sections_series_are_counted_before_any_read(
    llm_fleet: FleetPrometheus, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A histogram latency SLO reads the threshold's bucket per series (5 buckets per model and
    Triton in the stand-in, which ignores matchers): more than the counters, which fit the default
    step. Its series are counted with the others', so the step is raised once before anything is
    read (no query read twice), not after the whole report was read at the default step."""
    path = tmp_path / "slos.yaml"
    path.write_text(
        f"scrape: {{triton_job: {c.DEFAULT_TRITON_JOB}, latency_metrics: [{c.LATENCY_SOURCE_HISTOGRAM}]}}\n"
        f"slos:\n  - {{name: fast, type: {c.SLO_LATENCY}, models: all, objective: 99, period: 30d,\n"
        f"     threshold: 500ms, latency_sli: {c.LATENCY_SLI_HISTOGRAM}}}\n"
    )
    series = LLM_MODELS * TRITONS
    monkeypatch.setattr(report_prom, "MAX_SAMPLES_PER_QUERY", series * (int((END - START) // 2) + 1))
    reads: list[tuple[str, float, float]] = []
    iter_range_arrays = PrometheusClient.iter_range_arrays

    def recorded(self: PrometheusClient, expr: str, start: float, end: float, step: float):
        reads.append((expr, start, step))
        return iter_range_arrays(self, expr, start, end, step)

    monkeypatch.setattr(PrometheusClient, "iter_range_arrays", recorded)
    notes: list[str] = []
    report = build_report(llm_fleet.url, START, END, on_note=notes.append, slo_spec=load_spec(path))
    fit = fitting_step(START, END, series * len(BUCKETS))
    assert report.step == fit and fit > 2.0
    assert len(notes) == 1 and f"{series * len(BUCKETS):,} series in one query" in notes[0]
    assert {step for _, _, step in reads} == {fit}
    assert len(reads) == len(set(reads))
