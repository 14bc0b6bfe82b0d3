"""The batching ratio and stage split from /v2/models/stats when the window holds no /metrics
counters for a model version (exporter/statsfallback.py), on hand-computed numbers."""

from __future__ import annotations

import math

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_reason
from triton_sre.exporter.collector import ExporterView, render
from triton_sre.exporter.derive import derive, derive_window
from triton_sre.exporter.snapshot import (
    ModelConfigSummary,
    ModelStats,
    Problems,
    Snapshot,
    counter_row,
    stats_from_json,
)
from triton_sre.exporter.window import Window
from triton_sre.pricing import Pricing

A = ("model_a", "1")
B = ("model_b", "1")
CONFIGS = {"model_a": ModelConfigSummary(16, True)}
MS = 1e6  # ns


def stats(inferences: float, executions: float, success: float, request_ns: float, *stages_ns: float):
    """One version's statistics: counts, then inference_stats (success count, request ns, the four
    stages' ns in c.STAGE_COUNTERS' order)."""
    return ModelStats(
        inference_count=inferences,
        execution_count=executions,
        request_stats=(success, request_ns, *stages_ns) if stages_ns else (),
    )


def per_request(n: int, executions: int) -> ModelStats:
    """`n` requests of 5 ms: 2 ms queued, 0.5 ms input, 1.5 ms infer, 0.5 ms output (0.5 ms other)."""
    return stats(n, executions, n, 5 * MS * n, 2 * MS * n, 0.5 * MS * n, 1.5 * MS * n, 0.5 * MS * n)


def snap(t: float, metrics: dict | None, by_model: dict | None) -> Snapshot:
    return Snapshot(
        taken_at=t,
        counters={k: counter_row(v) for k, v in metrics.items()} if metrics is not None else None,
        gpu_uuids=frozenset() if metrics is not None else None,
        stats=by_model,
        index=None,
        configs=CONFIGS,
    )


def metrics_of(n: int, executions: int) -> dict:
    """The /metrics counters of `per_request(n, executions)` (µs)."""
    us = {
        c.NV_REQUEST_DURATION_US: 5000.0,
        c.NV_QUEUE_DURATION_US: 2000.0,
        c.NV_COMPUTE_INPUT_DURATION_US: 500.0,
        c.NV_COMPUTE_INFER_DURATION_US: 1500.0,
        c.NV_COMPUTE_OUTPUT_DURATION_US: 500.0,
    }
    return {
        c.NV_INFERENCE_COUNT: float(n),
        c.NV_EXEC_COUNT: float(executions),
        c.NV_REQUEST_SUCCESS: float(n),
        **{family: value * n for family, value in us.items()},
    }


def only(d, key=A):
    (m,) = [m for m in d.models if (m.model, m.version) == key]
    return m


def test_stats_alone_give_the_batching_ratio_fill_and_stage_split():
    d = derive(
        [snap(0, None, {A: per_request(0, 0)}), snap(15, None, {A: per_request(64, 8)})], Pricing(), str
    )
    m = only(d)
    assert m.source == c.SOURCE_STATS
    assert m.batching_ratio == 64 / 8
    assert m.batch_fill_ratio == 8 / 16
    expected = {
        c.STAGE_QUEUE: 0.002,
        c.STAGE_COMPUTE_INPUT: 0.0005,
        c.STAGE_COMPUTE_INFER: 0.0015,
        c.STAGE_COMPUTE_OUTPUT: 0.0005,
        c.STAGE_OTHER: 0.0005,
    }
    assert m.stage_seconds == pytest.approx(expected, rel=1e-12)
    assert m.stage_fraction == pytest.approx(
        {stage: seconds / 0.005 for stage, seconds in expected.items()}, rel=1e-12
    )
    text = render(ExporterView(up=False, derivation=d))
    assert f'{c.M_DERIVATION_SOURCE}{{model="model_a",version="1",source="{c.SOURCE_STATS}"}} 1.0' in text
    assert f'{c.M_BATCHING_RATIO}{{model="model_a",version="1"}} 8.0' in text


def test_the_same_traffic_gives_the_same_figures_from_either_source():
    from_metrics = only(
        derive([snap(0, {A: metrics_of(0, 0)}, None), snap(15, {A: metrics_of(64, 8)}, None)], Pricing(), str)
    )
    from_stats = only(
        derive(
            [snap(0, None, {A: per_request(0, 0)}), snap(15, None, {A: per_request(64, 8)})], Pricing(), str
        )
    )
    assert (from_metrics.source, from_stats.source) == (c.SOURCE_METRICS, c.SOURCE_STATS)
    assert from_stats.batching_ratio == from_metrics.batching_ratio
    assert from_stats.stage_seconds == pytest.approx(from_metrics.stage_seconds, rel=1e-12)
    assert from_stats.stage_fraction == pytest.approx(from_metrics.stage_fraction, rel=1e-12)


def test_a_restart_counts_from_zero_never_negative_or_nan():
    # Triton restarted between 15 and 30: the statistics start again from zero
    snaps = [
        snap(0, None, {A: stats(1000, 500, 1000, 9000 * MS, 10 * MS, 1 * MS, 1 * MS, 1 * MS)}),
        snap(15, None, {A: stats(1040, 510, 1040, 9040 * MS, 12 * MS, 1 * MS, 3 * MS, 1 * MS)}),
        snap(30, None, {A: stats(40, 10, 40, 40 * MS, 2 * MS, 0, 2 * MS, 0)}),
    ]
    m = only(derive(snaps, Pricing(), str))
    assert m.batching_ratio == (40 + 40) / (10 + 10)
    # 80 requests: 80 ms in all, 4 ms queued, 4 ms computing -> 72 ms other
    assert m.stage_seconds == pytest.approx(
        {
            c.STAGE_QUEUE: 0.004 / 80,
            c.STAGE_COMPUTE_INPUT: 0.0,
            c.STAGE_COMPUTE_INFER: 0.004 / 80,
            c.STAGE_COMPUTE_OUTPUT: 0.0,
            c.STAGE_OTHER: 0.072 / 80,
        },
        rel=1e-12,
    )
    assert all(v >= 0 and not math.isnan(v) for v in (*m.stage_seconds.values(), *m.stage_fraction.values()))


def test_no_inference_stats_is_no_split_not_a_zero_one():
    m = only(
        derive(
            [snap(0, None, {A: stats(0, 0, 0, 0)}), snap(15, None, {A: stats(30, 10, 0, 0)})], Pricing(), str
        )
    )
    assert m.source == c.SOURCE_STATS and m.batching_ratio == 3
    assert m.stage_seconds is None and m.stage_fraction is None


def test_one_poll_of_statistics_gives_no_figure():
    d = derive([snap(0, None, {A: per_request(64, 8)})], Pricing(), str)
    m = only(d)
    assert m.batching_ratio is None and m.stage_seconds is None
    assert f"{c.M_DERIVATION_SOURCE}{{" not in render(ExporterView(up=False, derivation=d))


def test_metrics_stay_the_source_and_the_fallback_keeps_nothing_while_they_are_read():
    window = Window(60.0)
    for t, n in ((0, 0), (15, 32), (30, 64)):
        window.add(snap(t, {A: metrics_of(n, n // 8)}, {A: per_request(n, n // 8)}))
    d = derive_window(window, Pricing(), str)
    assert only(d).source == c.SOURCE_METRICS and only(d).batching_ratio == 8
    assert len(window.fallback) == 0 and not list(window.fallback.keys())
    # the usual source is said by the absence of a series (no cost on the usual path)
    assert f"{c.M_DERIVATION_SOURCE}{{" not in render(ExporterView(up=True, derivation=d))


def test_a_version_the_metrics_do_not_carry_takes_the_statistics():
    snaps = [
        snap(0, {A: metrics_of(0, 0)}, {A: per_request(0, 0), B: per_request(0, 0)}),
        snap(15, {A: metrics_of(64, 8)}, {A: per_request(64, 8), B: per_request(20, 10)}),
    ]
    d = derive(snaps, Pricing(), str)
    assert [(m.model, m.source) for m in d.models] == [
        ("model_a", c.SOURCE_METRICS),
        ("model_b", c.SOURCE_STATS),
    ]
    assert only(d, B).batching_ratio == 2


def test_switching_sources_once_each_way_without_flapping():
    """60 s window, a poll every 15 s: the metrics fail from t=30 to t=120 and come back at 135."""
    window = Window(60.0)
    sources = []
    for poll in range(12):
        t, n = poll * 15.0, poll * 16
        down = 2 <= poll <= 8
        window.add(snap(t, None if down else {A: metrics_of(n, n // 8)}, {A: per_request(n, n // 8)}))
        m = only(derive_window(window, Pricing(), str))
        sources.append(m.source if m.batching_ratio is not None else None)
        assert m.batching_ratio in (None, 8.0)
    # polls 2..4 still have the metrics' polls 0 and 1 in the window; at 5 (t=75) poll 0 has left
    # it and the statistics of polls 2..5 serve; at 9 the metrics are back but read once (the
    # statistics recorded at 75..120 serve); from 10 on they are read twice in the window
    assert sources == [None, *[c.SOURCE_METRICS] * 4, *[c.SOURCE_STATS] * 5, *[c.SOURCE_METRICS] * 2]


def test_stats_json_reads_inference_stats_and_rejects_bad_numbers():
    entry = {
        "name": "m",
        "version": "1",
        "inference_count": 10,
        "execution_count": 5,
        c.STATS_INFERENCE_STATS: {
            "success": {"count": 10, "ns": 5000},
            "fail": {"count": 2, "ns": 99},
            "queue": {"count": 10, "ns": 2000},
            "compute_input": {"count": 10, "ns": 100},
            "compute_infer": {"count": 10},  # proto3 JSON leaves a 0 out
            "compute_output": {"count": 10, "ns": "-3"},
            "cache_hit": {"count": 1, "ns": 7},
        },
    }
    problems = Problems()
    figures = stats_from_json([entry, {"name": "n", "version": "1"}], problems)
    got = figures[("m", "1")].request_stats
    assert got[:5] == (10.0, 5000.0, 2000.0, 100.0, 0.0) and math.isnan(got[5])
    assert problems.count == 1 and "compute_output.ns" in problems.first
    assert figures[("n", "1")].request_stats == ()
    # a duration that is bad in every poll of the window is never observed: no split (not a 0
    # share), while the batching ratio still flows
    later = stats_from_json([{**entry, "inference_count": 30, "execution_count": 10}], Problems())
    m = only(
        derive(
            [snap(0, None, {A: figures[("m", "1")]}), snap(15, None, {A: later[("m", "1")]})],
            Pricing(),
            diagnose_reason,
        )
    )
    assert m.batching_ratio == 4 and m.stage_seconds is None
