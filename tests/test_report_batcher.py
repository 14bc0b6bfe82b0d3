"""The report's batching advice knows each model's batcher: the exporter's gauges of the model config
(`triton_sre_model_dynamic_batching`, `triton_sre_model_max_batch_size`) reach the table, and the
advice goes only where it applies (no Prometheus needed)."""

from __future__ import annotations

import math
from collections.abc import Callable

import pandas as pd
import pytest
from test_report_figures import row as figures_row

from triton_sre import conventions as c
from triton_sre.report import recommend as rec
from triton_sre.report.figures import RangeData, model_table
from triton_sre.report.render import CostReport, to_csv

STEP = 10.0
TIMES = [1000.0 + STEP * i for i in range(7)]  # one minute
ON, OFF, UNKNOWN = 1.0, 0.0, math.nan


def row(**values: float) -> dict[str, float | str]:
    """test_report_figures' row, here a model that runs one by one (ratio 1 of 8) while queueing 30 %."""
    unbatched = {"batching_ratio": 1.0, "batch_fill": 0.125, "queue_share": 0.3, "dynamic_batching": UNKNOWN}
    return figures_row(**{**unbatched, **values})


def ids(**values: float) -> list[str]:
    return [r.id for r in rec.recommend(pd.DataFrame([row(**values)]), idle_fraction=None)]


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        # runs one by one while requests wait: enable the batcher where it is off (or unknown) ...
        ({"dynamic_batching": OFF}, [rec.REC_ENABLE_BATCHING]),
        ({"dynamic_batching": UNKNOWN}, [rec.REC_ENABLE_BATCHING]),
        # ... never where it is on (before: "enable dynamic_batching" to a model that has it)
        ({"dynamic_batching": ON}, []),
        # requests queue most of their time in batches that do not fill: the batcher's delay where
        # it is on; without a batcher there is no delay to lower (before: lower-queue-delay)
        ({"dynamic_batching": ON, "queue_share": 0.9}, [rec.REC_LOWER_QUEUE_DELAY]),
        ({"dynamic_batching": OFF, "queue_share": 0.9}, [rec.REC_ENABLE_BATCHING]),
        # a batcher off with client batches, queueing: capacity, not a delay (before: lower-queue-delay)
        (
            {"dynamic_batching": OFF, "batching_ratio": 2.0, "batch_fill": 0.25, "queue_share": 0.6},
            [rec.REC_ADD_INSTANCES],
        ),
        # mostly empty batches, no queueing: wait longer only where a batcher waits (before: raised
        # the delay of a model without one)
        (
            {"dynamic_batching": ON, "batching_ratio": 1.5, "batch_fill": 0.1875, "queue_share": 0.01},
            [rec.REC_RAISE_QUEUE_DELAY],
        ),
        ({"dynamic_batching": OFF, "batching_ratio": 1.5, "batch_fill": 0.1875, "queue_share": 0.01}, []),
        # max_batch_size 0: no batching advice whatever the batcher gauge says
        ({"max_batch_size": 0.0, "batch_fill": math.nan, "dynamic_batching": OFF}, []),
        ({"max_batch_size": 0.0, "batch_fill": math.nan, "dynamic_batching": ON}, []),
        ({"max_batch_size": 0.0, "batch_fill": math.nan, "queue_share": 0.6}, [rec.REC_ADD_INSTANCES]),
    ],
)
def test_batching_advice_goes_where_the_batcher_allows_it(
    values: dict[str, float], expected: list[str]
) -> None:
    assert ids(**values) == expected


def _one(**values: float) -> rec.Recommendation:
    (only,) = rec.recommend(pd.DataFrame([row(**values)]), idle_fraction=None)
    return only


def test_advice_for_a_model_whose_batcher_is_unknown_holds_either_way() -> None:
    """An older exporter (no gauge): the advice says what it assumes; with the gauge, it does not."""
    unsaid = "the exporter did not say whether the model has a dynamic batcher"
    enable = _one(dynamic_batching=UNKNOWN)
    assert enable.action.startswith(f"enable dynamic_batching if it is off ({unsaid})")
    lower = _one(dynamic_batching=UNKNOWN, queue_share=0.9)
    assert lower.id == rec.REC_LOWER_QUEUE_DELAY
    assert lower.action.startswith(
        f"lower max_queue_delay_microseconds, or enable dynamic_batching if it is off ({unsaid})"
    )
    empty = {"batching_ratio": 1.5, "batch_fill": 0.1875, "queue_share": 0.01}
    raise_ = _one(dynamic_batching=UNKNOWN, **empty)
    assert raise_.action.startswith(
        f"raise max_queue_delay_microseconds a little if dynamic_batching is on ({unsaid})"
    )
    for known in (
        _one(dynamic_batching=OFF),
        _one(dynamic_batching=ON, queue_share=0.9),
        _one(dynamic_batching=ON, **empty),
    ):
        assert unsaid not in known.action and " if " not in known.action, known.action


def test_add_instances_says_why_a_model_gets_no_batching_advice() -> None:
    """Before, a known max_batch_size 0 and an unknown one both read "the model cannot batch"."""
    cannot = _one(max_batch_size=0.0, batch_fill=math.nan, queue_share=0.6)
    assert (
        cannot.why == "60% of request time is queueing and the model cannot batch (max_batch_size 0): "
        "no batching advice applies"
    )
    unknown = _one(max_batch_size=math.nan, batch_fill=math.nan, queue_share=0.6)
    assert "cannot batch" not in unknown.why and "max_batch_size is not known" in unknown.why


def test_queue_delay_advice_names_the_configured_delay_and_none_to_lower_from_zero() -> None:
    """With the exporter's delay gauge: the advice says the delay now; a batcher that waits 0 has no
    delay to lower (before: "lower max_queue_delay_microseconds" to it), so its queue is capacity's."""
    lower = _one(dynamic_batching=ON, queue_share=0.9, max_queue_delay_ms=3.0)
    assert lower.id == rec.REC_LOWER_QUEUE_DELAY
    assert lower.action.startswith("lower max_queue_delay_microseconds (now 3 ms): ")
    assert ids(dynamic_batching=ON, queue_share=0.9, max_queue_delay_ms=0.0) == [rec.REC_ADD_INSTANCES]
    empty = {"batching_ratio": 1.5, "batch_fill": 0.1875, "queue_share": 0.01}
    raise_ = _one(dynamic_batching=ON, max_queue_delay_ms=0.5, **empty)
    assert raise_.action.startswith("raise max_queue_delay_microseconds (now 0.5 ms) a little: ")


def counter(model: str, version: str, per_step: float) -> pd.DataFrame:
    values = [per_step * i for i in range(len(TIMES))]
    return pd.DataFrame({"model": model, "version": version, "timestamp": TIMES, "value": values})


def gauge(value: float, **labels: str) -> pd.DataFrame:
    return pd.DataFrame({**labels, "timestamp": TIMES, "value": value})


def one_by_one(each: Callable[[float], pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Triton's counters of models that each serve 10 requests a step run one by one (an execution
    per request), 30 % of their time queueing; `each(per_step)` is a counter's frame for them all."""
    return {
        c.NV_REQUEST_SUCCESS: each(10),
        c.NV_INFERENCE_COUNT: each(10),
        c.NV_EXEC_COUNT: each(10),
        c.NV_REQUEST_FAILURE: each(0),
        c.NV_REQUEST_DURATION_US: each(100_000),
        c.NV_QUEUE_DURATION_US: each(30_000),
    }


def _data(config: bool) -> RangeData:
    """ranker (two versions, each 10 requests a step run one by one, 30 % of their time queueing) on
    a dynamic batcher; plain (max_batch_size 0, no batcher: the exporter writes no fill for it) the
    same. With `config`, the exporter's config gauges, per model (no version label), as the report
    reads them: the last sample per model."""
    models = {("ranker", "1"), ("ranker", "2"), ("plain", "1")}

    def each(per_step: float) -> pd.DataFrame:
        return pd.concat(counter(m, v, per_step) for m, v in sorted(models))

    frames = {
        **one_by_one(each),
        c.M_BATCHING_RATIO: pd.concat(gauge(1.0, model="ranker", version=v) for v in "12"),
        c.M_BATCH_FILL_RATIO: pd.concat(gauge(0.125, model="ranker", version=v) for v in "12"),
    }
    if config:
        last = TIMES[-1:]
        frames[c.M_MODEL_DYNAMIC_BATCHING] = pd.DataFrame(
            {"model": ["ranker", "plain"], "timestamp": last * 2, "value": [1.0, 0.0]}
        )
        frames[c.M_MODEL_MAX_BATCH_SIZE] = pd.DataFrame(
            {"model": ["ranker", "plain"], "timestamp": last * 2, "value": [8.0, 0.0]}
        )
        frames[c.M_MODEL_MAX_QUEUE_DELAY] = pd.DataFrame(
            {"model": ["ranker"], "timestamp": last, "value": [0.003]}
        )
    return RangeData(TIMES[0], TIMES[-1], STEP, frames)


def test_the_config_gauges_reach_every_row_and_the_advice() -> None:
    """Before, the table knew max_batch_size only as the exporter's ratio / fill (none for a model of
    max_batch_size 0) and nothing of the batcher: ranker, on a dynamic batcher, was told to enable it."""
    table, summary = model_table(_data(config=True))
    rows = table.set_index(["model", "version"])
    assert rows.loc[("ranker", "all"), "dynamic_batching"] == 1.0
    assert list(rows.loc["ranker", "dynamic_batching"]) == [1.0, 1.0, 1.0]  # the total, then each version
    assert list(rows.loc["ranker", "max_batch_size"]) == [8.0, 8.0, 8.0]
    assert (
        rows.loc[("plain", "1"), "max_batch_size"] == 0.0
        and rows.loc[("plain", "1"), "dynamic_batching"] == 0
    )
    assert math.isnan(rows.loc[("plain", "1"), "batch_fill"])
    assert list(rows.loc["ranker", "max_queue_delay_ms"]) == [3.0, 3.0, 3.0]
    assert math.isnan(rows.loc[("plain", "1"), "max_queue_delay_ms"])
    assert rec.recommend(table, None) == []
    header = to_csv(CostReport(TIMES[0], TIMES[-1], STEP, "p", table, summary, [])).splitlines()[0]
    assert ",max_batch_size,dynamic_batching,max_queue_delay_ms,batch_fill," in header
    # the same traffic without the gauges (an older exporter): the advice, worded for either case
    table, _ = model_table(_data(config=False))
    assert table["dynamic_batching"].isna().all()
    recs = rec.recommend(table, None)
    assert [(r.subject, r.id) for r in recs] == [("ranker", rec.REC_ENABLE_BATCHING)]
    assert "if it is off" in recs[0].action
