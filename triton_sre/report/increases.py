"""Pure: counters over a range -> their increase per model (or per model version), and the
histogram's bucket increases -> latency quantiles.

Counters (Triton's ``nv_inference_*``) are read as their increase between the first and last
sample of the range, resets included, with no extrapolation to the range's edges. On GPU servers
Triton reports every per-model family with and without ``gpu_uuid``, counting different things
(an instance's executions on its GPU's series, the rest on the model's): a model's figure is the
sum of its series (`triton_sre.counters`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from triton_sre import conventions as c
from triton_sre.counters import fold_gpus, increase

__all__ = [
    "SAMPLE_COLUMNS",
    "bucket_quantile",
    "bucket_quantiles",
    "counter_increase",
    "family_increase",
    "fold_increases",
    "increase_rows",
    "increases_table",
    "keyed",
    "labels_of",
    "row_key",
    "series_increases",
    "split_key",
]

SAMPLE_COLUMNS = ("timestamp", "value")
ROW = "_row"
"""The column `keyed` adds: the model, or the model and its version (`split_key` parts them)."""
_SEP = "\x1f"


def keyed(frame: pd.DataFrame, versions: bool) -> pd.DataFrame:
    """`frame` with column `ROW`: its model, or (`versions`) its model and version ("" when the series
    has no version label), so figures fold per model or per model version by the same code."""
    if frame.empty or c.LABEL_MODEL not in frame.columns:
        return frame
    model = frame[c.LABEL_MODEL].astype(object).astype(str)
    if not versions:
        return frame.assign(**{ROW: model})
    if c.LABEL_VERSION in frame.columns:
        version = frame[c.LABEL_VERSION].astype(object).fillna("").astype(str)
    else:
        version = pd.Series("", index=frame.index)
    return frame.assign(**{ROW: model + _SEP + version})


def row_key(model: str, version: str) -> str:
    """The `keyed(..., versions=True)` row key of `model` at `version` (`split_key`'s inverse)."""
    return model + _SEP + version


def split_key(key: str) -> tuple[str, str]:
    """A `keyed(..., versions=True)` row key -> (model, version)."""
    model, _, version = str(key).rpartition(_SEP)
    return model, version


def labels_of(frame: pd.DataFrame) -> list[str]:
    return [col for col in frame.columns if col not in SAMPLE_COLUMNS]


def _per_gpu(frame: pd.DataFrame) -> pd.Series:
    if c.LABEL_GPU_UUID not in frame.columns:
        return pd.Series(False, index=frame.index)
    uuid = frame[c.LABEL_GPU_UUID].astype(object)
    return uuid.notna() & (uuid != "")


def increases_table(series: Iterable[tuple[Mapping[str, object], np.ndarray]]) -> pd.DataFrame:
    """(labels, values in time order) per series -> one row per series: its labels and
    ``increase`` over the range (`triton_sre.counters.increase`: resets counted, NaN, infinite
    and negative samples skipped)."""
    return increase_rows((labels, increase(values)) for labels, values in series)


def increase_rows(increases: Iterable[tuple[Mapping[str, object], float]]) -> pd.DataFrame:
    """(labels, increase over the range) per series -> one row per series: its labels and ``increase``."""
    rows = [{**labels, "increase": value} for labels, value in increases]
    return pd.DataFrame(rows) if rows else pd.DataFrame(columns=["increase"])


def series_increases(frame: pd.DataFrame) -> pd.DataFrame:
    """`increases_table` of a long frame of counters."""
    if frame.empty:
        return pd.DataFrame(columns=["increase"])
    labels = labels_of(frame)
    groups = frame.sort_values("timestamp", kind="stable").groupby(
        labels, dropna=False, sort=False, observed=True
    )
    return increases_table(
        (dict(zip(labels, key if isinstance(key, tuple) else (key,), strict=True)), part["value"].to_numpy())
        for key, part in groups
    )


def fold_increases(table: pd.DataFrame, by: str = c.LABEL_MODEL) -> pd.Series:
    """Per-series increases (`series_increases`) summed per ``by``: a GPU model's series without
    `gpu_uuid` plus its per-GPU ones (`triton_sre.counters.fold_gpus`: disjoint reporters)."""
    if table.empty or by not in table.columns:
        return pd.Series(dtype=float)
    totals: dict[str, dict[str, float]] = {}
    per_gpu: list[tuple[str, dict[str, float]]] = []
    gpu = _per_gpu(table).tolist()
    for name, value, on_gpu in zip(table[by].astype(object), table["increase"], gpu, strict=True):
        if on_gpu:
            per_gpu.append((name, {"": float(value)}))
        else:
            row = totals.setdefault(name, {})
            row[""] = row.get("", 0.0) + float(value)
    folded = fold_gpus(totals, per_gpu)
    return pd.Series({name: values[""] for name, values in folded.items()}, dtype=float)


def family_increase(
    frames: Mapping[str, pd.DataFrame], increases: Mapping[str, pd.DataFrame], family: str
) -> pd.Series:
    """A counter's increase per model: from its per-series increases when it was reduced as read
    (`increases`), else from its frame."""
    if family in increases:
        return fold_increases(increases[family])
    return counter_increase(frames.get(family, pd.DataFrame()))


def counter_increase(frame: pd.DataFrame, by: str = c.LABEL_MODEL) -> pd.Series:
    """Increase of a counter per ``by`` over the frame's range (sum over series, resets handled)."""
    if frame.empty or by not in frame.columns:
        return pd.Series(dtype=float)
    return fold_increases(series_increases(frame), by)


def bucket_quantile(q: float, bounds: list[float], counts: list[float]) -> float:
    """Prometheus' histogram_quantile over cumulative `counts` at ascending upper `bounds` (last is +Inf).

    As Prometheus does, counts that fall from one bound to the next are raised to the largest before
    them: the increases of a range need not be cumulative (a bucket's series missing for part of the
    range, a reset seen in one bucket's series and not another's, buckets a client wrote per bucket).
    Read as given, the report's p99 differed from the rules' (0.079 s against Prometheus 2.42's 0.099 s
    for increases 10, 5, 8, 8 at 0.1, 0.5, 1, +Inf). No +Inf bucket, fewer than two: NaN, as there."""
    if len(bounds) < 2 or not math.isinf(bounds[-1]):
        return math.nan
    counts = list(itertools.accumulate(counts, max))
    total = counts[-1]
    if total <= 0:
        return math.nan
    rank = q * total
    lower, below = 0.0, 0.0
    for bound, cumulative in zip(bounds, counts, strict=True):
        if cumulative >= rank:
            if math.isinf(bound):
                return lower  # in the +Inf bucket: the highest finite bound
            inside = cumulative - below
            return lower + (bound - lower) * ((rank - below) / inside if inside > 0 else 1.0)
        lower, below = bound, cumulative
    return lower


def bucket_quantiles(
    table: pd.DataFrame, quantiles: tuple[str, ...], by: str = c.LABEL_MODEL
) -> pd.DataFrame:
    """ms per `by` and quantile from the histogram buckets' per-series increases over the range (all
    servers; `increase_rows`, `series_increases`)."""
    if table.empty or c.LABEL_LE not in table.columns or by not in table.columns:
        return pd.DataFrame()
    # object columns: the report's frames hold labels as categoricals, which cannot be concatenated
    key = table[by].astype(object) + "\x1e" + table[c.LABEL_LE].astype(object)
    increase = fold_increases(table.assign(_key=key), by="_key")
    rows: dict[str, dict[str, float]] = {}
    per_model: dict[str, list[tuple[float, float]]] = {}
    for key, value in increase.items():
        model, le = str(key).rsplit("\x1e", 1)
        per_model.setdefault(model, []).append((float(le), float(value)))
    for model, buckets in per_model.items():
        buckets.sort()
        bounds, counts = [b for b, _ in buckets], [n for _, n in buckets]
        rows[model] = {q: bucket_quantile(float(q), bounds, counts) for q in quantiles}
    return pd.DataFrame.from_dict(rows, orient="index")
