"""The exporter's compact window storage (exporter/window.py) against a straightforward reference.

The reference keeps every poll's raw values and computes each increase over the window with
`counters.increase` (Prometheus' reset-aware increase, NaN skipped); the window storage keeps only
running totals per poll. Both must agree on restarts, models leaving and coming back, windows
shorter than two polls, and the window sliding past old polls, on randomized histories too.
"""

from __future__ import annotations

import math
import random

import pytest
from derive_reference import select_window, stage_split

from triton_sre import conventions as c
from triton_sre.counters import increase
from triton_sre.exporter.capacity import CapacityReading
from triton_sre.exporter.derive import derive, derive_window
from triton_sre.exporter.series import CHECKPOINTS, SeriesWindow
from triton_sre.exporter.snapshot import ROW_FAMILIES, ModelConfigSummary, ModelStats, Snapshot, counter_row
from triton_sre.exporter.window import Window
from triton_sre.pricing import Pricing

A = ("model_a", "1")
B = ("model_b", "1")
FAMILIES = (
    c.NV_INFERENCE_COUNT,
    c.NV_EXEC_COUNT,
    c.NV_REQUEST_SUCCESS,
    c.NV_REQUEST_DURATION_US,
    *c.STAGE_COUNTERS.values(),
)
PRICING = Pricing(node_hour=0.5)


def reference_increase(history: list[tuple[float, dict]], start: float, key: tuple, field: int) -> float:
    """Increase of `key`'s `field` over the polls taken at or after `start`, from the raw values."""
    return increase(rows[key][field] for t, rows in history if t >= start and key in rows)


def test_restart_inside_the_window_counts_from_zero() -> None:
    series = SeriesWindow((0,))
    for t, value in ((0, 100.0), (2, 150.0), (4, 20.0), (6, 50.0)):  # Triton restarted before t=4
        series.add(t, {A: (value,)})
    assert series.increase(A, 0) == 50 + 20 + 30
    series.trim(2)  # the window slides past the first poll
    assert series.increase(A, 0) == 20 + 30
    series.trim(4)  # now the restart is the window's first observation
    assert series.increase(A, 0) == 30


def test_model_leaving_and_coming_back() -> None:
    series = SeriesWindow((0,))
    series.add(0, {A: (10.0,), B: (1.0,)})
    series.add(2, {B: (2.0,)})  # A unloaded
    series.add(4, {A: (16.0,), B: (3.0,)})  # A back, counters kept: +6
    assert series.increase(A, 0) == 6
    series.add(6, {A: (4.0,), B: (4.0,)})  # A reloaded with fresh counters: a reset
    assert series.increase(A, 0) == 6 + 4
    assert series.increase(B, 0) == 3
    # A gone for longer than the window: forgotten, its slot reused, nothing leaks into B or back
    for t in (8, 10, 12):
        series.add(t, {B: (t,)})
        series.trim(t - 4)
    assert A not in list(series.keys())
    series.add(14, {A: (1.0,), B: (14.0,)})
    series.trim(10)
    assert series.increase(A, 0) == 0  # one observation in the window
    series.add(16, {A: (3.0,), B: (16.0,)})
    assert series.increase(A, 0) == 2
    assert series.increase(B, 0) == 16 - 10


def test_window_shorter_than_two_polls_derives_no_ratios() -> None:
    window = Window(1.0, slack=0.0, max_polls=3)  # --window 1 --interval 2: one poll at a time
    for t, n in ((0, 10.0), (2, 20.0), (4, 40.0)):
        window.add(snapshot(t, {A: dict.fromkeys(FAMILIES, n)}))
        d = derive_window(window, PRICING, str)
        assert d.window_seconds == 0
        (model,) = d.models
        assert model.batching_ratio is None and model.stage_seconds is None
    assert len(window.polls) == 1 and len(window.counters) == 1


def test_memory_does_not_grow_with_polls_or_churn() -> None:
    window = Window(10.0, slack=1.0, max_polls=7)
    for poll in range(200):
        keys = [(f"m{(poll // 20) * 10 + i}", "1") for i in range(10)]  # models churn every 20 polls
        window.add(snapshot(poll * 2.0, {k: dict.fromkeys(FAMILIES, float(poll)) for k in keys}))
        assert len(window.polls) <= 7
        assert len(window.counters.polls) <= 7
        assert len(list(window.counters.keys())) <= 20
        assert len(window.counters._last) <= 20 * len(FAMILIES)


def snapshot(t: float, by_model: dict | None, stats: dict | None = None, **kw) -> Snapshot:
    return Snapshot(
        taken_at=t,
        counters={k: counter_row(v) for k, v in by_model.items()} if by_model is not None else None,
        gpu_uuids=frozenset() if by_model is not None else None,
        stats=stats,
        index=kw.get("index"),
        configs=kw.get("configs", {}),
        capacity=kw.get("capacity"),
    )


def random_history(rng: random.Random, polls: int, interval: float) -> list[Snapshot]:
    """Polls with counter resets, models leaving and returning, NaN values and failed fetches."""
    keys = [(f"model_{i}", str(v)) for i in range(5) for v in (1, 2)]
    level = {(k, f): rng.uniform(0, 1e6) for k in keys for f in FAMILIES}
    compute = dict.fromkeys(keys, 0.0)
    configs = {k[0]: ModelConfigSummary(rng.choice((0, 8)), dynamic_batching=True) for k in keys}
    out = []
    t = 0.0
    for _ in range(polls):
        t += interval * rng.choice((1.0, 1.0, 1.0, 0.6, 1.7))  # jitter and missed ticks
        if rng.random() < 0.05:  # Triton restarted: every counter starts again
            level = {kf: 0.0 for kf in level}
            compute = dict.fromkeys(compute, 0.0)
        present = [k for k in keys if rng.random() < 0.85]
        by_model = {}
        for key in present:
            row = {}
            for family in FAMILIES:
                level[(key, family)] += rng.choice((0.0, rng.uniform(0, 500)))
                row[family] = level[(key, family)] if rng.random() > 0.03 else math.nan
            by_model[key] = row
        stats = {}
        # the statistics carry the counters' own figures (durations in ns), and now and then a
        # version the metrics do not (an excerpt): the fallback's rows (exporter/statsfallback.py)
        for key in [*present, *(k for k in keys if k not in present and rng.random() < 0.1)]:
            compute[key] += rng.uniform(0, 1e8)
            stats[key] = ModelStats(
                inference_count=level[(key, c.NV_INFERENCE_COUNT)],
                execution_count=level[(key, c.NV_EXEC_COUNT)],
                execution_compute_ns=compute[key],
                request_stats=(
                    level[(key, c.NV_REQUEST_SUCCESS)],
                    *(level[(key, f)] * 1e3 for f in (c.NV_REQUEST_DURATION_US, *c.STAGE_COUNTERS.values())),
                )
                if rng.random() > 0.05
                else (),
            )
        reading = CapacityReading(
            gpus={"GPU-0": {c.NV_ENERGY_CONSUMPTION: t * 100.0}}, host={}, load_seconds={}, placement={}
        )
        metrics_ok = rng.random() > 0.1
        out.append(
            snapshot(
                t,
                by_model if metrics_ok else None,
                stats if rng.random() > 0.1 else None,
                configs=configs,
                capacity=reading if metrics_ok else None,
            )
        )
    return out


@pytest.mark.parametrize("seed", range(25))
def test_series_window_equals_reference_on_random_histories(seed: int) -> None:
    rng = random.Random(seed)
    history = []
    series = SeriesWindow((0, 1))
    window = rng.choice((4.0, 10.0, 30.0))
    for snap in random_history(rng, 60, 2.0):
        if snap.counters is None:
            continue
        rows = {k: (v[0], v[3]) for k, v in snap.counters.items()}
        history.append((snap.taken_at, rows))
        series.add(snap.taken_at, rows)
        start = snap.taken_at - window
        series.trim(start)
        for key in {k for _, r in history for k in r}:
            for field in (0, 1):
                expected = reference_increase(history, start, key, field)
                assert series.increase(key, field) == pytest.approx(expected, rel=1e-9, abs=1e-6)


def reference(snapshots: list[Snapshot], pricing: Pricing) -> dict:
    """The derivation computed directly from the raw values of every snapshot in the window."""
    metrics = [s for s in snapshots if s.counters is not None]
    stats = [s for s in snapshots if s.stats is not None]
    configs = snapshots[-1].configs if snapshots else {}
    span = metrics[-1].taken_at - metrics[0].taken_at if metrics else 0.0
    stats_span = stats[-1].taken_at - stats[0].taken_at if stats else 0.0
    price = pricing.node_hour  # the random histories have no GPUs
    compute = {}
    if len(stats) >= 2:
        for key in stats[-1].stats:
            compute[key] = increase(s.stats[key].execution_compute_ns for s in stats if key in s.stats) / 1e9
    total = sum(compute.values())
    idle = None
    if stats_span > 0:
        idle = max(0.0, min(1.0, 1.0 - min(1.0, total / (stats_span * pricing.cpu_execution_slots))))

    def grow(key: tuple, family: str) -> float:
        """The increase over the window; NaN when the family has no valid value in it at all
        (Triton did not export it: nothing is derived from it)."""
        index = ROW_FAMILIES.index(family)
        values = [s.counters[key][index] for s in metrics if key in s.counters]
        if not any(0.0 <= v < math.inf for v in values):
            return math.nan
        return increase(values)

    # The statistics' figures of the polls whose metrics had no counters for a version; those
    # versions of the latest statistics take their figures from them while fewer than two polls of
    # the window read the metrics, or when the latest metrics do not carry them.
    fallback = [
        (s, key) for s in stats for key in s.stats if s.counters is None or key not in s.counters
    ]
    latest_metrics = metrics[-1].counters if metrics else {}
    from_stats = {
        key
        for key in (stats[-1].stats if stats else ())
        if any(k == key for _, k in fallback) and (len(metrics) < 2 or key not in latest_metrics)
    }

    def grow_stats(key: tuple, field: int) -> float:
        """The fallback's increase: field 0 inferences, 1 executions, 2 successes, 3 request µs,
        4.. the stages' µs; NaN when no valid value."""
        values = []
        for s, k in fallback:
            if k == key:
                figures = s.stats[key]
                row = (figures.inference_count, figures.execution_count, *figures.request_stats)
                values.append(row[field] / (1e3 if field >= 3 else 1.0) if field < len(row) else math.nan)
        if not any(0.0 <= v < math.inf for v in values):
            return math.nan
        return increase(values)

    models = []
    for key in sorted({*latest_metrics, *from_stats}):
        if key in from_stats:
            inferences, executions = grow_stats(key, 0), grow_stats(key, 1)
            deltas = {stage: grow_stats(key, 4 + i) for i, stage in enumerate(c.STAGE_COUNTERS)}
            split = stage_split(deltas, grow_stats(key, 3), grow_stats(key, 2))
        else:
            inferences, executions = grow(key, c.NV_INFERENCE_COUNT), grow(key, c.NV_EXEC_COUNT)
            split = stage_split(
                {stage: grow(key, family) for stage, family in c.STAGE_COUNTERS.items()},
                grow(key, c.NV_REQUEST_DURATION_US),
                grow(key, c.NV_REQUEST_SUCCESS),
            )
        # no successful inference in the window: no ratio (failed executions count, their inferences not)
        batching = inferences / executions if executions > 0 and inferences > 0 else None
        size = configs[key[0]].max_batch_size if key[0] in configs else 0
        fill = min(1.0, batching / size) if batching is not None and size > 0 else None
        cost_hour = cost_1k = None
        if total > 0 and key in compute:
            share = min(1.0, compute[key] / total)
            cost_hour = price * share
            if inferences > 0:
                cost_1k = price * stats_span / 3600.0 * share / inferences * 1000.0
        models.append(
            (key[0], key[1], batching, fill, split[0] if split else None, split[1] if split else None,
             cost_hour, cost_1k, c.SOURCE_STATS if key in from_stats else c.SOURCE_METRICS)
        )
    return {
        "window": span,
        "models": models,
        "idle": idle,
        "compute": compute,
        "devices": ("cpu", pricing.cpu_execution_slots, price),
        "configs": configs,
    }


def comparable(d) -> dict:
    return {
        "window": d.window_seconds,
        "models": [
            (m.model, m.version, m.batching_ratio, m.batch_fill_ratio, m.stage_seconds, m.stage_fraction,
             m.cost_per_hour, m.cost_per_1k, m.source)
            for m in d.models
        ],
        "idle": d.idle_fraction,
        "compute": d.compute_seconds,
        "devices": (d.device_kind, d.devices, d.server_cost_per_hour),
        "configs": d.configs,
    }


@pytest.mark.parametrize("seed", range(15))
def test_service_window_equals_derive_over_selected_snapshots(seed: int) -> None:
    """The incremental window (as the service keeps it) gives the same derivation as deriving
    over the whole snapshots of the window, at every poll of a random history."""
    rng = random.Random(1000 + seed)
    interval = 2.0
    span = rng.choice((1.0, 6.0, 20.0, 60.0))
    max_polls = math.ceil(span / interval) + 2
    window = Window(span, slack=interval / 2, max_polls=max_polls)
    kept: list[Snapshot] = []
    for snap in random_history(rng, 50, interval):
        window.add(snap)
        kept = select_window([*kept, snap], span, slack=interval / 2)[-max_polls:]
        derived = derive_window(window, PRICING, str)
        assert _approx_equal(comparable(derived), reference(kept, PRICING)), (seed, snap.taken_at)
        assert _approx_equal(comparable(derived), comparable(derive(kept, PRICING, str)))


def _approx_equal(got, want) -> bool:
    if isinstance(want, dict):
        return isinstance(got, dict) and got.keys() == want.keys() and all(
            _approx_equal(got[k], want[k]) for k in want
        )
    if isinstance(want, list | tuple):
        return len(got) == len(want) and all(_approx_equal(g, w) for g, w in zip(got, want, strict=True))
    if isinstance(want, float) and isinstance(got, float):
        return got == pytest.approx(want, rel=1e-9, abs=1e-9)
    return got == want


def test_long_window_keeps_bounded_checkpoints() -> None:
    """`--window 300 --interval 2` is 151 polls: at most CHECKPOINTS totals arrays are kept, and
    the increase is exact over the span they cover, which starts within window ÷ CHECKPOINTS."""
    span, interval = 300.0, 2.0
    window = Window(span, slack=interval / 2, max_polls=math.ceil(span / interval) + 2)
    value = {}
    for poll in range(400):
        t = poll * interval
        value[t] = 7.0 * poll * poll  # any growing counter; the reference is its raw values
        window.add(snapshot(t, {A: dict.fromkeys(FAMILIES, value[t])}))
        polls = window.counters.polls
        assert len(polls) <= CHECKPOINTS
        first_t = polls[0][0]
        assert window.counters.increase(A, 0) == value[t] - value[first_t]
        assert first_t - max(0.0, t - span - interval / 2) <= 2 * span / CHECKPOINTS + interval
        assert derive_window(window, PRICING, str).window_seconds == t - first_t


@pytest.mark.parametrize("seed", range(8))
def test_counter_tables_and_dicts_give_the_same_window(seed: int) -> None:
    """The replay's matrix rows (`CounterTable`) and plain dict rows make identical windows, and
    the increases of many keys at once equal each key's own `increase`."""
    import numpy as np

    from triton_sre.exporter.replay import CounterTable

    rng = random.Random(seed)
    history = [s for s in random_history(rng, 60, 2.0) if s.counters is not None]
    fields = range(len(ROW_FAMILIES))
    by_dict, by_table = SeriesWindow(fields, checkpoints=16), SeriesWindow(fields, checkpoints=16)
    for snap in history:
        order = tuple(snap.counters)
        matrix = np.array([snap.counters[k] for k in order]).reshape(-1, len(fields))
        table = CounterTable(order, {k: i for i, k in enumerate(order)}, matrix)
        by_dict.add(snap.taken_at, snap.counters)
        by_table.add(snap.taken_at, table)
        start = snap.taken_at - rng.choice((5.0, 20.0, 60.0))
        by_dict.trim(start)
        by_table.trim(start)
        assert [t for t, _ in by_dict.polls] == [t for t, _ in by_table.polls]
        for (_, a), (_, b) in zip(by_dict.polls, by_table.polls, strict=True):
            assert np.array_equal(a, b, equal_nan=True)
        keys = [*sorted(by_dict.keys()), ("absent", "1")]
        many = by_table.increases_of(keys)
        for row, key in zip(many.tolist(), keys, strict=True):
            assert row == [by_dict.increase(key, i) for i in fields]
