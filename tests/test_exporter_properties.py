"""Random and extreme numbers through snapshot → derive → render (issue #12, defects 2 and 3).

Whatever Triton's payloads carry (NaN, ±Inf, negative, 1e308, duplicate series, junk in the
statistics), no exception escapes, no derived value is NaN, infinite or negative, every fraction
is in [0, 1], and the exposition reads back in prometheus_client's parser. Rejected values are
counted (`Problems`), which the exporter reports as parse errors of the target.
"""

from __future__ import annotations

import json
import math

from client_double import PollClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families

from triton_sre import conventions as c
from triton_sre.exporter.collector import ExporterView, render
from triton_sre.exporter.derive import derive
from triton_sre.exporter.metricsfold import counters_from_samples
from triton_sre.exporter.snapshot import ModelConfigSummary, Problems, Snapshot, stats_from_json
from triton_sre.pricing import Pricing
from triton_sre.triton.exposition import parse

FRACTIONS = {c.M_BATCH_FILL_RATIO, c.M_REQUEST_STAGE_FRACTION, c.M_IDLE_COST_FRACTION}
MODELS = ("alpha", "beta")
PRICING = Pricing(currency="USD", gpu_hour=2.5, node_hour=1.0, cpu_execution_slots=2)
CONFIGS = {"alpha": ModelConfigSummary(8, True), "beta": ModelConfigSummary(0, False)}

# What a hostile or broken server may write as a sample value.
EXTREME = st.sampled_from(
    ["NaN", "+Inf", "-Inf", "-1", "-1e308", "1e308", "1.7976931348623157e308", "0", "5e-324", "1e19", "2e19"]
)
VALUE = st.one_of(EXTREME, st.floats(allow_nan=True, allow_infinity=True).map(repr).map(
    lambda r: {"nan": "NaN", "inf": "+Inf", "-inf": "-Inf"}.get(r, r)
), st.integers(0, 10**6).map(str))
JSON_NUMBER = st.one_of(
    st.integers(-(10**30), 10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["nan", "inf", "-inf", "1e400", "x", "", "-0"]),
    st.just(None),
    st.booleans(),
)


def metrics_text(values: list[list[str]], duplicate: bool) -> str:
    lines = []
    for model, row in zip(MODELS, values, strict=False):
        labels = f'model="{model}",version="1"'
        for family, value in zip(c.PER_MODEL_COUNTERS, row, strict=False):
            lines.append(f"{family}{{{labels}}} {value}")
            if duplicate:
                lines.append(f"{family}{{{labels}}} 7")
    return "\n".join(lines) + "\n"


def stats_entries(numbers: list) -> list:
    it = iter(numbers * 4)
    return [
        {
            "name": model,
            "version": "1",
            "inference_count": next(it),
            "execution_count": next(it),
            "batch_stats": [
                {
                    "batch_size": next(it),
                    "compute_input": {"count": next(it), "ns": next(it)},
                    "compute_infer": {"count": next(it), "ns": next(it)},
                    "compute_output": {"count": next(it), "ns": next(it)},
                }
            ],
        }
        for model in MODELS
    ]


def check_exposition(text: str) -> None:
    read = 0
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            read += 1
            if not sample.name.startswith("triton_sre_"):
                continue
            assert math.isfinite(sample.value), sample
            assert sample.value >= 0, sample
            if family.name in FRACTIONS:
                assert 0 <= sample.value <= 1, sample
    assert read


rows = st.lists(st.lists(VALUE, min_size=len(c.PER_MODEL_COUNTERS), max_size=len(c.PER_MODEL_COUNTERS)),
                min_size=1, max_size=2)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    polls=st.lists(st.tuples(rows, st.lists(JSON_NUMBER, min_size=9, max_size=9), st.booleans()),
                   min_size=1, max_size=4),
    gpus=st.booleans(),
)
def test_extreme_numbers_never_give_bad_derived_values(polls, gpus) -> None:
    snapshots = []
    for t, (values, numbers, duplicate) in enumerate(polls):
        problems = Problems()
        counters, uuids = counters_from_samples(parse(metrics_text(values, duplicate)), problems)
        if duplicate:
            assert problems.count >= len(values) * len(c.PER_MODEL_COUNTERS)
        stats = stats_from_json(json.loads(json.dumps(stats_entries(numbers))), problems)
        snapshots.append(
            Snapshot(
                taken_at=1000.0 + 15 * t,
                counters=counters,
                gpu_uuids=frozenset({"GPU-1"}) if gpus else uuids,
                stats=stats,
                index=[],
                configs=CONFIGS,
            )
        )
    derivation = derive(snapshots, PRICING, lambda reason: c.RUNBOOK_UNKNOWN_LOAD_FAILURE)
    check_exposition(render(ExporterView(up=True, derivation=derivation)))


@given(value=EXTREME)
def test_a_bad_counter_value_is_missing_and_counted(value: str) -> None:
    problems = Problems()
    text = f'nv_inference_count{{model="m",version="1"}} {value}\n'
    counters, _ = counters_from_samples(parse(text), problems)
    number = float(value)
    if 0 <= number <= 2.0**64:
        assert not problems
    else:
        assert problems.count == 1
        assert math.isnan(counters[("m", "1")][0])  # treated as missing


def test_counter_values_cycling_through_nan_inf_and_negative() -> None:
    """The issue's probe: counters through NaN, +Inf, negative, -Inf between good values."""
    cycle = ["10", "NaN", "20", "+Inf", "30", "-5", "40", "-Inf", "50"]
    snapshots = []
    rejected = 0
    for t, value in enumerate(cycle):
        problems = Problems()
        text = "".join(
            f'{family}{{model="m",version="1"}} {value}\n'
            for family in (
                c.NV_INFERENCE_COUNT, c.NV_EXEC_COUNT, c.NV_REQUEST_SUCCESS, *c.STAGE_COUNTERS.values()
            )
        ) + f'{c.NV_REQUEST_DURATION_US}{{model="m",version="1"}} {value}\n'
        counters, _ = counters_from_samples(parse(text), problems)
        rejected += problems.count
        config = {"m": ModelConfigSummary(4, True)}
        snapshots.append(Snapshot(float(t), counters, frozenset(), None, [], config))
    assert rejected == 4 * 8  # four bad polls, eight families each
    d = derive(snapshots, PRICING, str)
    (m,) = d.models
    assert m.batching_ratio == 1.0  # 40 inferences over 40 executions: the bad ones skipped
    assert m.batch_fill_ratio == 0.25
    assert m.stage_seconds is not None and all(math.isfinite(v) and v >= 0 for v in m.stage_seconds.values())
    check_exposition(render(ExporterView(up=True, derivation=d)))


def test_negative_compute_time_keeps_idle_fraction_and_cost_in_range() -> None:
    """Negative compute ns pushed idle_cost_fraction to 42–548 and made cost series vanish."""

    def stats(t: int, ns: float) -> dict:
        entry = {"name": "m", "version": "1", "inference_count": 10 * t, "execution_count": 10 * t,
                 "batch_stats": [{"batch_size": 1, "compute_infer": {"count": 10 * t, "ns": ns}}]}
        other = {"name": "n", "version": "1", "inference_count": 5 * t, "execution_count": 5 * t,
                 "batch_stats": [{"batch_size": 1, "compute_infer": {"count": 5 * t, "ns": 1e9 * t}}]}
        problems = Problems()
        result = stats_from_json([entry, other], problems)
        return result, problems.count

    snapshots = []
    rejected = 0
    for t, ns in enumerate([1e9, -4e13, 3e9, -8e14]):
        result, bad = stats(t + 1, ns)
        rejected += bad
        counters, _ = counters_from_samples(parse(
            f'nv_inference_count{{model="m",version="1"}} {10 * (t + 1)}\n'
            f'nv_inference_count{{model="n",version="1"}} {5 * (t + 1)}\n'))
        snapshots.append(Snapshot(15.0 * t, counters, frozenset(), result, [], {}))
    assert rejected == 2
    d = derive(snapshots, Pricing(node_hour=1.0), str)
    assert d.idle_fraction is not None and 0 <= d.idle_fraction <= 1
    costs = {m.model: m.cost_per_hour for m in d.models}
    assert costs["m"] is not None and costs["n"] is not None  # neither vanishes
    assert math.isclose(costs["m"] + costs["n"], 1.0)
    check_exposition(render(ExporterView(up=True, derivation=d)))


def test_duplicate_series_first_wins_and_is_counted() -> None:
    text = (
        'nv_inference_count{model="m",version="1"} 10\n'
        'nv_inference_exec_count{model="m",version="1"} 5\n'
        'nv_inference_count{model="m",version="1"} 10\n'
        'nv_inference_count{version="1",model="m"} 99\n'  # the same series, labels in another order
    )
    problems = Problems()
    counters, _ = counters_from_samples(parse(text), problems)
    assert problems.count == 2
    assert counters[("m", "1")][0] == 10


def test_duplicate_statistics_entries_first_wins_and_is_counted() -> None:
    entry = {"name": "m", "version": "1", "inference_count": 3}
    problems = Problems()
    result = stats_from_json([entry, {**entry, "inference_count": 300}], problems)
    assert problems.count == 1
    assert result[("m", "1")].inference_count == 3


# -- the whole poll, with random payloads where Triton's answers would be --------------------------
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**25), 10**25) | st.floats() | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=8,
)
ODD_NUMBER = st.one_of(JSON, st.sampled_from(["1e400", "-1e400", '"nan"', "NaN", "-3", "1.5", '"7"']).map(
    lambda raw: json.loads(raw) if raw not in ("1e400", "-1e400", "NaN") else float(raw)
))


NAMES = [*MODELS, "lone\ud800"]  # JSON can carry lone surrogates; no exposition can


class StubClient(PollClient):
    """Answers with given payloads; statistics go through the real client's entry decoder."""

    def __init__(self, metrics: bytes, index: list, stats: str, config: object) -> None:
        self._metrics, self._index, self._stats, self._config = metrics, index, stats, config

    def metrics(self) -> bytes:
        return self._metrics

    def repository_index(self) -> list:
        return self._index

    def all_stats(self):
        from triton_sre.triton.client import iter_model_stats

        return iter_model_stats(self._stats)

    def model_config(self, name: str) -> object:
        return self._config


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    polls=st.lists(
        st.tuples(
            rows,
            st.booleans(),
            st.lists(
                st.tuples(st.sampled_from(NAMES), JSON, st.sampled_from([*c.MODEL_STATES, "x"])),
                max_size=3,
            ),
            st.lists(ODD_NUMBER, min_size=9, max_size=9),
            st.dictionaries(st.sampled_from(["max_batch_size", "dynamic_batching"]), ODD_NUMBER),
        ),
        min_size=1,
        max_size=3,
    )
)
def test_a_poll_never_fails_inside_whatever_triton_answers(polls) -> None:
    from triton_sre.config import ExporterSettings
    from triton_sre.exporter.service import Exporter

    settings_ = ExporterSettings(triton_url="http://stub:8000", interval=15, window=60)
    clock = iter(range(0, 10**6, 15)).__next__
    exporter = Exporter(settings_, client=StubClient(b"", [], "", {}), clock=clock)
    for values, duplicate, index, numbers, config in polls:
        stats = json.dumps({"model_stats": stats_entries(numbers)})  # 1e400 and NaN written as such
        exporter.client = StubClient(
            metrics_text(values, duplicate).encode(),
            [{"name": n, "version": v, "state": s} for n, v, s in index],
            stats.replace("Infinity", "1e400"),
            {**config, "name": "alpha"},
        )
        exporter._configs.entries.clear()  # fetch the (new) config on every poll
        assert exporter.poll_once() is not None  # None: the exporter's own code failed
        check_exposition(exporter.metrics_text().decode())


def test_names_that_are_not_valid_unicode_are_exportable_and_counted() -> None:
    """JSON may carry lone surrogates (\\ud800): /metrics once failed to encode and went dark."""
    from triton_sre.exporter.snapshot import index_from_json

    raw = '[{"name": "m\\ud800", "version": "1\\udc80", "state": "UNAVAILABLE", "reason": "r\\udfff"}]'
    problems = Problems()
    index = index_from_json(json.loads(raw), problems)
    assert problems.count == 3
    stats = stats_from_json(json.loads('[{"name": "m\\ud800", "version": "1"}]'), problems)
    assert problems.count == 4 and list(stats) == [("m?", "1")]
    d = derive([Snapshot(0.0, {}, frozenset(), stats, index, {})], PRICING, str)
    text = render(ExporterView(up=True, derivation=d)).encode("utf-8")  # strict
    assert b'model="m?"' in text
    check_exposition(text.decode())
