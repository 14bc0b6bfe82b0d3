"""The pure derivations, on hand-checked numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from derive_reference import stage_split

from triton_sre import conventions as c
from triton_sre.counters import increase
from triton_sre.diagnosis.engine import diagnose_reason
from triton_sre.exporter.derive import derive, stage_splits
from triton_sre.exporter.metricsfold import counters_from_samples
from triton_sre.exporter.snapshot import (
    IndexEntry,
    ModelConfigSummary,
    ModelStats,
    Snapshot,
    config_summary,
    counter_row,
    index_from_json,
    row_value,
    stats_from_json,
)
from triton_sre.pricing import Pricing
from triton_sre.triton.exposition import parse

A = ("model_a", "1")
B = ("model_b", "1")


def counters(inferences: float, executions: float, success: float | None = None, **durations: float) -> dict:
    values = {
        c.NV_INFERENCE_COUNT: inferences,
        c.NV_EXEC_COUNT: executions,
        c.NV_REQUEST_SUCCESS: inferences if success is None else success,
    }
    values.update(durations)
    return values


def snap(t: float, by_model: dict | None, stats: dict | None = None, **kw) -> Snapshot:
    return Snapshot(
        taken_at=t,
        counters={k: counter_row(v) for k, v in by_model.items()} if by_model is not None else None,
        gpu_uuids=kw.pop("gpus", frozenset()) if by_model is not None else None,
        stats=stats,
        index=kw.pop("index", None),
        configs=kw.pop("configs", {}),
    )


def test_increase_handles_resets_like_prometheus():
    assert increase([10, 15, 20]) == 10
    # Triton restarted between 20 and 3: the 3 counts from zero, nothing goes negative
    assert increase([10, 20, 3, 8]) == 10 + 3 + 5
    assert increase([5]) == 0
    assert increase([]) == 0
    assert increase([1, float("nan"), 4]) == 3


def test_batching_ratio_over_window_and_fill():
    snaps = [
        snap(0, {A: counters(100, 50)}, configs={"model_a": ModelConfigSummary(16, True)}),
        snap(15, {A: counters(260, 60)}, configs={"model_a": ModelConfigSummary(16, True)}),
        snap(30, {A: counters(420, 70)}, configs={"model_a": ModelConfigSummary(16, True)}),
    ]
    d = derive(snaps, Pricing(), diagnose_reason)
    (m,) = d.models
    assert m.batching_ratio == pytest.approx(320 / 20)
    assert m.batch_fill_ratio == pytest.approx(16 / 16)
    assert d.window_seconds == 30


def test_batching_ratio_absent_without_executions_never_nan():
    d = derive([snap(0, {A: counters(5, 5)}), snap(15, {A: counters(5, 5)})], Pricing(), diagnose_reason)
    (m,) = d.models
    assert m.batching_ratio is None and m.stage_seconds is None and m.batch_fill_ratio is None


def test_no_batching_ratio_when_every_request_of_the_window_failed():
    """Triton counts the executions of failed requests but not their inferences (tests/data/releases/:
    a returned Python error on 2.36-2.46, a raised one on every release): 3 executions, 0 inferences is
    no ratio, not 0; one success among them gives the ratio again."""
    cfg = {"model_a": ModelConfigSummary(16, True)}
    failing = [
        snap(0, {A: counters(0, 0)}, configs=cfg),
        snap(15, {A: counters(0, 3, success=0)}, configs=cfg),
    ]
    (m,) = derive(failing, Pricing(), diagnose_reason).models
    assert m.batching_ratio is None and m.batch_fill_ratio is None
    recovered = [*failing, snap(30, {A: counters(4, 5, success=4)}, configs=cfg)]
    (m,) = derive(recovered, Pricing(), diagnose_reason).models
    assert m.batching_ratio == pytest.approx(4 / 5)


def test_counter_reset_mid_window_gives_no_negative_values():
    snaps = [
        snap(0, {A: counters(1000, 500)}),
        snap(15, {A: counters(40, 10)}),
        snap(30, {A: counters(80, 20)}),
    ]
    (m,) = derive(snaps, Pricing(), diagnose_reason).models
    assert m.batching_ratio == pytest.approx((40 + 40) / (10 + 10))


def test_failed_metrics_polls_are_skipped_not_read_as_zero():
    snaps = [snap(0, {A: counters(0, 0)}), snap(15, None), snap(30, {A: counters(30, 10)})]
    (m,) = derive(snaps, Pricing(), diagnose_reason).models
    assert m.batching_ratio == 3


def test_model_appearing_and_disappearing():
    snaps = [snap(0, {A: counters(0, 0)}), snap(15, {A: counters(10, 5), B: counters(8, 8)})]
    d = derive(snaps, Pricing(), diagnose_reason)
    by_name = {m.model: m for m in d.models}
    assert by_name["model_a"].batching_ratio == 2
    assert by_name["model_b"].batching_ratio is None  # one observation: no increase yet
    snaps.append(snap(30, {B: counters(16, 12)}))
    d = derive(snaps, Pricing(), diagnose_reason)
    assert [m.model for m in d.models] == ["model_b"]


def test_stage_split_sums_to_one_and_other_is_floored():
    seconds, fractions = stage_split(
        {
            c.STAGE_QUEUE: 3_000_000,
            c.STAGE_COMPUTE_INPUT: 100_000,
            c.STAGE_COMPUTE_INFER: 800_000,
            c.STAGE_COMPUTE_OUTPUT: 100_000,
        },
        request_us=5_000_000,
        success=10,
    )
    assert seconds[c.STAGE_QUEUE] == pytest.approx(0.3)
    assert seconds[c.STAGE_OTHER] == pytest.approx(0.1)
    assert math.fsum(fractions.values()) == pytest.approx(1.0)
    assert fractions[c.STAGE_QUEUE] == pytest.approx(0.6)
    seconds, fractions = stage_split({c.STAGE_QUEUE: 2_000_000}, request_us=1_000_000, success=1)
    assert seconds[c.STAGE_OTHER] == 0.0
    assert fractions[c.STAGE_QUEUE] == 1.0
    assert stage_split({}, 100, 0) is None
    one = stage_splits(np.array([[3e6, 1e5, 8e5, 1e5]]), np.array([5e6]), np.array([10.0]))[0]
    assert one is not None and one[0][c.STAGE_QUEUE] == pytest.approx(0.3)
    assert stage_splits(np.zeros((1, 4)), np.array([100.0]), np.array([0.0])) == [None]


def test_cost_worked_example_from_the_readme():
    """CPU host at 0.36 USD per node-hour, 60 s window, model_a computed 12 s, model_b 6 s."""
    pricing = Pricing(currency="USD", node_hour=0.36, cpu_execution_slots=1)
    before = {A: ModelStats(execution_compute_ns=0), B: ModelStats(execution_compute_ns=0)}
    after = {A: ModelStats(execution_compute_ns=12e9), B: ModelStats(execution_compute_ns=6e9)}
    snaps = [
        snap(0, {A: counters(0, 0), B: counters(0, 0)}, before),
        snap(60, {A: counters(1200, 100), B: counters(300, 300)}, after),
    ]
    d = derive(snaps, pricing, diagnose_reason)
    assert d.server_cost_per_hour == pytest.approx(0.36)
    assert d.idle_fraction == pytest.approx(1 - 18 / 60)
    a, b = d.models
    assert a.cost_per_hour == pytest.approx(0.24)  # 2/3 of the server
    assert b.cost_per_hour == pytest.approx(0.12)
    assert a.cost_per_1k == pytest.approx(0.36 * 60 / 3600 * (2 / 3) / 1200 * 1000)  # 0.003333 USD
    assert b.cost_per_1k == pytest.approx(0.36 * 60 / 3600 * (1 / 3) / 300 * 1000)  # 0.006667 USD


def test_cost_on_gpus_uses_gpu_hour_times_gpus_and_idle_over_all_gpus():
    pricing = Pricing(gpu_hour=2.0, node_hour=99.0)
    gpus = frozenset({"GPU-1", "GPU-2"})
    snaps = [
        snap(0, {A: counters(0, 0)}, {A: ModelStats(execution_compute_ns=0)}, gpus=gpus),
        snap(100, {A: counters(500, 50)}, {A: ModelStats(execution_compute_ns=50e9)}, gpus=gpus),
    ]
    d = derive(snaps, pricing, diagnose_reason)
    assert (d.device_kind, d.devices, d.server_cost_per_hour) == ("gpu", 2, 4.0)
    assert d.idle_fraction == pytest.approx(0.75)
    assert d.models[0].cost_per_1k == pytest.approx(4.0 * 100 / 3600 / 500 * 1000)


def test_an_ensemble_s_compute_is_its_steps_and_is_not_counted_again():
    """The worked example with an ensemble E over model_a and model_b: Triton reports E's compute
    as the sum of its steps' (18 s). Counted again, E would take half the price and the idle share
    would fall from 0.70 to 0.40."""
    E = ("ens", "1")
    pricing = Pricing(currency="USD", node_hour=0.36, cpu_execution_slots=1)
    configs = {"ens": ModelConfigSummary(0, False, ensemble=True), "model_a": ModelConfigSummary(0, False)}
    zero = {k: ModelStats(execution_compute_ns=0) for k in (A, B, E)}
    after = {
        A: ModelStats(execution_compute_ns=12e9),
        B: ModelStats(execution_compute_ns=6e9),
        E: ModelStats(execution_compute_ns=18e9),
    }
    snaps = [
        snap(0, {A: counters(0, 0), B: counters(0, 0), E: counters(0, 0)}, zero, configs=configs),
        snap(
            60, {A: counters(1200, 100), B: counters(300, 300), E: counters(300, 300)}, after, configs=configs
        ),
    ]
    d = derive(snaps, pricing, diagnose_reason)
    assert d.idle_fraction == pytest.approx(1 - 18 / 60)
    by_key = {(m.model, m.version): m for m in d.models}
    assert by_key[A].cost_per_hour == pytest.approx(0.24)
    assert by_key[B].cost_per_hour == pytest.approx(0.12)
    assert by_key[E].cost_per_hour is None and by_key[E].cost_per_1k is None
    assert E not in d.compute_seconds


def test_config_summary_reads_the_ensemble_platform():
    assert config_summary({"max_batch_size": 0, "platform": c.PLATFORM_ENSEMBLE}).ensemble
    assert not config_summary({"max_batch_size": 8, "platform": "onnxruntime_onnx"}).ensemble
    assert not config_summary({"max_batch_size": 8, "backend": "python"}).ensemble


def test_config_summary_reads_the_dynamic_batchers_queue_delay():
    """Triton's JSON config writes the uint64 as a string, and omits a zero delay (proto3 JSON)."""
    batcher = {"max_batch_size": 16, "dynamic_batching": {"max_queue_delay_microseconds": "3000"}}
    assert config_summary(batcher).max_queue_delay_us == 3000.0
    assert config_summary({"max_batch_size": 16, "dynamic_batching": {}}).max_queue_delay_us == 0.0
    assert config_summary({"max_batch_size": 0}).max_queue_delay_us is None
    # a delay that does not decode is unknown; the rest of the config is still read
    bad = config_summary({"max_batch_size": 8, "dynamic_batching": {"max_queue_delay_microseconds": "soon"}})
    assert bad.max_queue_delay_us is None and bad.max_batch_size == 8 and bad.dynamic_batching


def test_no_price_no_cost_metrics_but_idle_share():
    snaps = [
        snap(0, {A: counters(0, 0)}, {A: ModelStats()}),
        snap(10, {A: counters(10, 10)}, {A: ModelStats(execution_compute_ns=1e9)}),
    ]
    d = derive(snaps, Pricing(), diagnose_reason)
    assert d.server_cost_per_hour is None and d.models[0].cost_per_1k is None
    assert d.idle_fraction == pytest.approx(0.9)


def test_states_and_runbook_for_unavailable_models():
    index = index_from_json(
        [
            {"name": "ok", "version": "1", "state": "READY"},
            {
                "name": "bad",
                "version": "1",
                "state": "UNAVAILABLE",
                "reason": "Internal: ModuleNotFoundError: No module named 'x'",
            },
            {"name": "weird", "version": "2", "state": "UNAVAILABLE", "reason": "something new"},
            {"name": "never"},
        ]
    )
    assert index[3] == IndexEntry("never", "", c.STATE_UNKNOWN, "")
    d = derive([snap(0, {}, index=index)], Pricing(), diagnose_reason)
    runbooks = {s.model: s.runbook for s in d.states}
    assert runbooks == {
        "ok": None,
        "bad": c.RUNBOOK_PYTHON_MODULE_MISSING,
        "weird": c.RUNBOOK_UNKNOWN_LOAD_FAILURE,
        "never": None,
    }


def test_gpu_models_sum_their_instance_and_model_series():
    """Triton's core counts a GPU instance's executions on its `gpu_uuid` series and the rest
    (scheduler rejections, cache hits) on the model's series without it: disjoint, summed."""
    text = (
        'nv_inference_count{gpu_uuid="GPU-a",model="m",version="1"} 10\n'
        'nv_inference_count{gpu_uuid="GPU-b",model="m",version="1"} 20\n'
        'nv_inference_count{model="m",version="1"} 0\n'
        'nv_inference_count{gpu_uuid="GPU-a",model="old",version="1"} 4\n'
        'nv_inference_count{gpu_uuid="GPU-b",model="old",version="1"} 5\n'
        'nv_inference_request_failure{model="m",reason="BACKEND",version="1"} 0\n'
        'nv_inference_request_failure{model="m",reason="REJECTED",version="1"} 3\n'
        'nv_inference_request_failure{gpu_uuid="GPU-a",model="m",reason="BACKEND",version="1"} 2\n'
        'nv_gpu_utilization{gpu_uuid="GPU-a"} 0.5\n'
        'nv_gpu_utilization{gpu_uuid="GPU-b"} 0.1\n'
    )
    by_model, gpus = counters_from_samples(parse(text))
    assert row_value(by_model[("m", "1")], c.NV_INFERENCE_COUNT) == 30  # 10 + 20 + the model's 0
    assert row_value(by_model[("old", "1")], c.NV_INFERENCE_COUNT) == 9  # per-GPU series only (21.x)
    assert row_value(by_model[("m", "1")], c.NV_REQUEST_FAILURE) == 5
    assert math.isnan(row_value(by_model[("m", "1")], c.NV_EXEC_COUNT))  # not exported: absent
    assert gpus == {"GPU-a", "GPU-b"}


def test_stats_from_json_counts_batches_once_and_tolerates_junk():
    stats = stats_from_json(
        [
            {
                "name": "m",
                "version": "1",
                "inference_count": 20,
                "execution_count": 2,
                "batch_stats": [
                    {
                        "batch_size": 16,
                        "compute_input": {"count": 1, "ns": 10},
                        "compute_infer": {"count": 1, "ns": 1000},
                        "compute_output": {"count": 1, "ns": 5},
                    },
                    {"batch_size": 4, "compute_infer": {"count": 1, "ns": 300}},
                ],
            },
            "junk",
            {"name": 3},
            {"name": "empty"},
        ]
    )
    assert stats[("m", "1")].execution_compute_ns == 1315
    assert stats[("m", "1")].executions_by_batch_size == {16: 1, 4: 1}
    assert stats[("empty", "")] == ModelStats()


def test_stage_splits_equal_stage_split_row_by_row() -> None:
    """The vectorised split the service uses gives `stage_split`'s dicts, bit for bit."""
    import random

    rng = random.Random(7)
    special = [0.0, -0.0, -5.0, 1e-300, 5e-324, 1e308, math.inf, math.nan, 3.0, 1e6]
    rows = []
    for _ in range(3000):
        pick = lambda: rng.choice(special) if rng.random() < 0.2 else rng.uniform(0, 1e7)  # noqa: E731
        success = rng.choice([0.0, -1.0, 1e-310, 1.0, pick()])
        rows.append(([pick() for _ in c.STAGE_COUNTERS], pick(), success))
    deltas = np.array([d for d, _, _ in rows])
    got = stage_splits(deltas, np.array([r for _, r, _ in rows]), np.array([s for _, _, s in rows]))
    for (d, request_us, success), split in zip(rows, got, strict=True):
        want = stage_split(dict(zip(c.STAGE_COUNTERS, d, strict=True)), request_us, success)
        assert (split is None) == (want is None)
        if want is not None:
            assert split == want
            assert list(split[0]) == list(want[0]) == list(c.STAGES)
