"""The report gives an ensemble no batching figures and no batching advice; its step keeps its own
(journey26). Triton counts an ensemble request as one execution of the request's rows, so the
ensemble's ratio from Triton's counters is rows per request, and its config has no dynamic_batching
(it cannot: `ensemble_scheduling` and `dynamic_batching` are one `oneof` in model_config.proto)."""

from __future__ import annotations

import math

import pandas as pd
from test_report_batcher import STEP, TIMES, counter, one_by_one

from triton_sre import conventions as c
from triton_sre.report import recommend as rec
from triton_sre.report.figures import RangeData, model_table

PIPELINE, EMBEDDER = "pipeline", "embedder"


def config(values: dict[str, float]) -> pd.DataFrame:
    """One config gauge as the exporter writes it: per model, the range's last sample."""
    return pd.DataFrame(
        {"model": list(values), "timestamp": TIMES[-1:] * len(values), "value": list(values.values())}
    )


def _data(ensemble_gauge: bool) -> RangeData:
    """pipeline (an ensemble, max_batch_size 16, one row a request) and its step embedder (max_batch_size
    32, no batcher), each 10 requests a step run one by one, 30 % of their time queueing."""
    models = [PIPELINE, EMBEDDER]

    def each(per_step: float) -> pd.DataFrame:
        return pd.concat(counter(m, "1", per_step) for m in models)

    frames = {
        **one_by_one(each),
        c.M_MODEL_DYNAMIC_BATCHING: config({PIPELINE: 0.0, EMBEDDER: 0.0}),
        c.M_MODEL_MAX_BATCH_SIZE: config({PIPELINE: 16.0, EMBEDDER: 32.0}),
    }
    if ensemble_gauge:
        frames[c.M_MODEL_ENSEMBLE] = config({PIPELINE: 1.0})
    return RangeData(TIMES[0], TIMES[-1], STEP, frames)


def test_an_ensemble_gets_no_batching_row_or_advice_and_its_step_keeps_its_own() -> None:
    """Before: pipeline's row read batching ratio 1.0, dynamic_batching 0, fill 1/16, and it was told to
    enable dynamic_batching, which an ensemble cannot have."""
    table, _summary = model_table(_data(ensemble_gauge=True))
    rows = table.set_index("model")
    for column in ("batching_ratio", "dynamic_batching", "batch_fill", "max_queue_delay_ms"):
        assert math.isnan(rows.loc[PIPELINE, column]), column
    assert rows.loc[PIPELINE, "max_batch_size"] == 16.0  # the config's, still a fact of the ensemble
    assert rows.loc[PIPELINE, "requests"] == rows.loc[EMBEDDER, "requests"]  # traffic figures stay
    assert rows.loc[EMBEDDER, "batching_ratio"] == 1.0 and rows.loc[EMBEDDER, "dynamic_batching"] == 0.0
    advice = [(r.subject, r.id) for r in rec.recommend(table, None)]
    assert advice == [(EMBEDDER, rec.REC_ENABLE_BATCHING)]


def test_without_the_ensemble_gauge_the_rows_are_judged_as_before() -> None:
    """An exporter before triton_sre_model_ensemble: nothing tells the report which model is an ensemble."""
    table, _summary = model_table(_data(ensemble_gauge=False))
    advice = sorted((r.subject, r.id) for r in rec.recommend(table, None))
    assert advice == [(EMBEDDER, rec.REC_ENABLE_BATCHING), (PIPELINE, rec.REC_ENABLE_BATCHING)]
