"""Pure: range-query frames -> one row per model with cost, batching, latency split and quantiles.

Latency quantiles (p50, p95, p99): from Triton's histogram ``nv_inference_first_response_histogram_ms``
when the model has one (bucket increases over the range, merged across servers, interpolated
within a bucket as ``histogram_quantile`` does): the quantile of the whole range. Otherwise from
Triton's summaries (a sliding window of about a minute, per server): at each step the worst
server's value, and the median of those over the range (the typical window); column
``latency_source`` says which.

Counters (Triton's ``nv_inference_*``) are read as their increase between the first and last
sample of the range, resets included, with no extrapolation to the range's edges. Cost gauges
(``triton_sre_cost_per_hour`` ...) are integrated over time: each sample stands for one step.
On GPU servers Triton reports every per-model family with and without ``gpu_uuid``, counting
different things (an instance's executions on its GPU's series, the rest on the model's): a model's
figure is the sum of its series (`triton_sre.counters`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from triton_sre import conventions as c
from triton_sre.counters import fold_gpus, increase

__all__ = [
    "COLUMNS",
    "RangeData",
    "Summary",
    "bucket_quantiles",
    "counter_increase",
    "family_increase",
    "histogram_quantiles",
    "integrate",
    "model_table",
    "pivot_rates",
    "rate_series",
]

SAMPLE_COLUMNS = ("timestamp", "value")
COLUMNS = (
    "model",
    "inferences",
    "executions",
    "requests",
    "failures",
    "requests_per_s",
    "cost",
    "cost_per_1k",
    "cost_share",
    "idle_cost",
    "batching_ratio",
    "max_batch_size",
    "batch_fill",
    "queue_share",
    "compute_share",
    "avg_latency_ms",
    "p50_ms",
    "p95_ms",
    "p99_ms",
    "latency_source",
)
HISTOGRAM_BUCKETS = f"{c.NV_FIRST_RESPONSE_HISTOGRAM_MS}_bucket"
COMPUTE_FAMILIES = (
    c.NV_COMPUTE_INPUT_DURATION_US,
    c.NV_COMPUTE_INFER_DURATION_US,
    c.NV_COMPUTE_OUTPUT_DURATION_US,
)


@dataclass(frozen=True)
class RangeData:
    """What the report reads: one long frame per metric family over [start, end] at ``step``."""

    start: float
    end: float
    step: float
    frames: Mapping[str, pd.DataFrame]
    # counters read straight into per-series increases (`increase_rows`), without a frame
    increases: Mapping[str, pd.DataFrame] = field(default_factory=dict)

    def frame(self, family: str) -> pd.DataFrame:
        return self.frames.get(family, pd.DataFrame())

    def increase(self, family: str) -> pd.Series:
        """The counter's increase per model over the range."""
        return family_increase(self.frames, self.increases, family)

    def histogram(self, family: str) -> pd.DataFrame:
        """The per-series increases of a histogram's buckets (`family` its `_bucket` series)."""
        if family in self.increases:
            return self.increases[family]
        frame = self.frame(family)
        return series_increases(frame) if c.LABEL_LE in frame.columns else pd.DataFrame()

    @property
    def seconds(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class Summary:
    seconds: float
    currency: str | None
    server_cost: float | None
    idle_cost: float | None
    idle_fraction: float | None
    inferences: float
    models: int
    # summary line -> why it has no figure (every sample in the range NaN or infinite, ...)
    no_data: Mapping[str, str] = field(default_factory=dict)


def _labels(frame: pd.DataFrame) -> list[str]:
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
    labels = _labels(frame)
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


def integrate(frame: pd.DataFrame, step: float, by: str | None = c.LABEL_MODEL) -> pd.Series | float:
    """∫ value dt in value-hours (a per-hour gauge -> an amount), per ``by`` or in total."""
    if frame.empty:
        return pd.Series(dtype=float) if by else 0.0
    hours = frame["value"].where(np.isfinite(frame["value"]), 0.0) * step / 3600.0
    if by is None:
        return float(hours.sum())
    return hours.groupby(frame[by]).sum()


def rate_series(frame: pd.DataFrame, by: str = c.LABEL_MODEL) -> pd.DataFrame:
    """Per-second rate of a counter per ``by`` over time (columns: one per ``by`` value)."""
    if frame.empty:
        return pd.DataFrame()
    labels = _labels(frame)
    parts = []
    for _key, series in frame.sort_values("timestamp").groupby(labels, dropna=False, sort=False):
        ts = series["timestamp"].to_numpy(dtype=float)
        values = series["value"].to_numpy(dtype=float)
        if len(ts) < 2:
            continue
        diffs = np.diff(values)
        diffs = np.where(diffs < 0, values[1:], diffs)
        parts.append(pd.DataFrame({"timestamp": ts[1:], by: series[by].iloc[0], "rate": diffs / np.diff(ts)}))
    if not parts:
        return pd.DataFrame()
    rates = pd.concat(parts)
    return rates.pivot_table(index="timestamp", columns=by, values="rate", aggfunc="sum").fillna(0.0)


def pivot_rates(frame: pd.DataFrame, by: str = c.LABEL_MODEL) -> pd.DataFrame:
    """A range query of per-`by` rates (long) -> one column per `by` value, indexed by timestamp."""
    if frame.empty or by not in frame.columns:
        return pd.DataFrame()
    return frame.pivot_table(index="timestamp", columns=by, values="value", aggfunc="sum").fillna(0.0)


def _quantile(frame: pd.DataFrame, q: str) -> pd.Series:
    """ms per model from Triton's summary (µs): the worst server at each step, median over the range."""
    if frame.empty or c.LABEL_QUANTILE not in frame.columns:
        return pd.Series(dtype=float)
    rows = frame[frame[c.LABEL_QUANTILE] == q]  # a GPU model: its series without gpu_uuid reads NaN
    rows = rows[np.isfinite(rows["value"])]
    if rows.empty:
        return pd.Series(dtype=float)
    worst = rows.groupby([c.LABEL_MODEL, "timestamp"])["value"].max()
    return worst.groupby(level=0).median() / 1000.0


def bucket_quantile(q: float, bounds: list[float], counts: list[float]) -> float:
    """Prometheus' histogram_quantile over cumulative `counts` at upper `bounds` (last is +Inf)."""
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


def histogram_quantiles(frame: pd.DataFrame, quantiles: tuple[str, ...]) -> pd.DataFrame:
    """ms per model and quantile from the histogram's bucket increases over the range (all servers)."""
    if frame.empty or c.LABEL_LE not in frame.columns:
        return pd.DataFrame()
    return bucket_quantiles(series_increases(frame), quantiles)


def bucket_quantiles(table: pd.DataFrame, quantiles: tuple[str, ...]) -> pd.DataFrame:
    """`histogram_quantiles` from the buckets' per-series increases (`increase_rows`, `series_increases`)."""
    if table.empty or c.LABEL_LE not in table.columns or c.LABEL_MODEL not in table.columns:
        return pd.DataFrame()
    # object columns: the report's frames hold labels as categoricals, which cannot be concatenated
    key = table[c.LABEL_MODEL].astype(object) + "\x1f" + table[c.LABEL_LE].astype(object)
    increase = fold_increases(table.assign(_key=key), by="_key")
    rows: dict[str, dict[str, float]] = {}
    per_model: dict[str, list[tuple[float, float]]] = {}
    for key, value in increase.items():
        model, le = str(key).split("\x1f", 1)
        per_model.setdefault(model, []).append((float(le), float(value)))
    for model, buckets in per_model.items():
        buckets.sort()
        bounds, counts = [b for b, _ in buckets], [n for _, n in buckets]
        rows[model] = {q: bucket_quantile(float(q), bounds, counts) for q in quantiles}
    return pd.DataFrame.from_dict(rows, orient="index")


def _max_batch_size(data: RangeData) -> pd.Series:
    """max_batch_size per model as the exporter read it from the config: ratio / fill."""
    ratio, fill = data.frame(c.M_BATCHING_RATIO), data.frame(c.M_BATCH_FILL_RATIO)
    if ratio.empty or fill.empty:
        return pd.Series(dtype=float)
    keys = [c.LABEL_MODEL, "timestamp"]
    both = (
        ratio.groupby(keys)["value"]
        .mean()
        .to_frame("ratio")
        .join(fill.groupby(keys)["value"].mean().to_frame("fill"), how="inner")
    )
    both = both[both["fill"] > 0]
    return (both["ratio"] / both["fill"]).groupby(level=0).median().round()


def _finite_only(frame: pd.DataFrame, what: str, no_data: dict[str, str]) -> pd.DataFrame:
    """`frame` without its NaN and infinite samples; when that leaves none, `no_data[what]` says why."""
    if frame.empty:
        return frame
    finite = frame[np.isfinite(frame["value"])]
    if finite.empty:
        name = str(frame["__name__"].iloc[0]) if "__name__" in frame.columns else "its series"
        no_data[what] = f"every sample of {name} in the range is NaN or infinite ({len(frame)} samples)"
    return finite


def _figure(value: float | None, what: str, no_data: dict[str, str]) -> float | None:
    """A summary figure, or None (with the reason in `no_data`) when it is not a finite number."""
    if value is None or math.isfinite(value):
        return value
    no_data.setdefault(what, f"the samples in the range add up to {value} (NaN or infinite values)")
    return None


def _div(a: pd.Series, b: pd.Series) -> pd.Series:
    return a.div(b.where(b > 0))


def model_table(data: RangeData) -> tuple[pd.DataFrame, Summary]:
    """One row per model that served or cost anything in the range; plus the server summary."""
    inc = {family: data.increase(family) for family in c.PER_MODEL_COUNTERS}
    cost = integrate(data.frame(c.M_COST_PER_HOUR), data.step)
    assert isinstance(cost, pd.Series)
    models = sorted(set().union(*(s.index for s in inc.values()), cost.index))
    table = pd.DataFrame(index=pd.Index(models, name="model"))
    for family in c.PER_MODEL_COUNTERS:
        table[family] = inc[family].reindex(table.index).fillna(0.0)
    no_data: dict[str, str] = {}
    server_frame = _finite_only(data.frame(c.M_SERVER_COST_PER_HOUR), "server cost", no_data)
    server_cost = integrate(server_frame, data.step, None) if not server_frame.empty else None
    idle_frame = _finite_only(data.frame(c.M_IDLE_COST_FRACTION), "idle share", no_data)
    idle_fraction = idle_cost = None
    if not idle_frame.empty:
        idle_fraction = float(idle_frame["value"].mean())
        if not server_frame.empty:
            joined = (
                server_frame.groupby("timestamp")["value"]
                .sum()
                .to_frame("cost")
                .join(idle_frame.groupby("timestamp")["value"].mean().to_frame("idle"), how="inner")
            )
            idle_cost = float((joined["cost"] * joined["idle"]).sum() * data.step / 3600.0)
    out = pd.DataFrame(index=table.index)
    out["inferences"] = table[c.NV_INFERENCE_COUNT]
    out["executions"] = table[c.NV_EXEC_COUNT]
    out["requests"] = table[c.NV_REQUEST_SUCCESS] + table[c.NV_REQUEST_FAILURE]
    out["failures"] = table[c.NV_REQUEST_FAILURE]
    out["requests_per_s"] = out["requests"] / data.seconds if data.seconds > 0 else np.nan
    out["cost"] = cost.reindex(out.index) if not cost.empty else np.nan
    out["cost_per_1k"] = _div(out["cost"] * 1000.0, out["inferences"])
    total_cost = out["cost"].sum(min_count=1)
    out["cost_share"] = out["cost"] / total_cost if total_cost and total_cost > 0 else np.nan
    idle_ratio = idle_cost / server_cost if idle_cost is not None and server_cost else np.nan
    out["idle_cost"] = out["cost"] * idle_ratio
    out["batching_ratio"] = _div(out["inferences"], out["executions"])
    out["max_batch_size"] = _max_batch_size(data).reindex(out.index)
    out["batch_fill"] = _div(out["batching_ratio"], out["max_batch_size"])
    request_us = table[c.NV_REQUEST_DURATION_US]
    out["queue_share"] = _div(table[c.NV_QUEUE_DURATION_US], request_us)
    out["compute_share"] = _div(sum(table[f] for f in COMPUTE_FAMILIES), request_us)
    out["avg_latency_ms"] = _div(request_us / 1000.0, table[c.NV_REQUEST_SUCCESS])
    summary_frame = data.frame(c.NV_REQUEST_SUMMARY_US)
    hist = bucket_quantiles(data.histogram(HISTOGRAM_BUCKETS), c.LATENCY_QUANTILES)
    has_hist = pd.Series(out.index.isin(hist.index), index=out.index)
    for q in c.LATENCY_QUANTILES:
        column = f"{c.quantile_name(q)}_ms"
        from_summary = _quantile(summary_frame, q).reindex(out.index)
        from_hist = hist[q].reindex(out.index) if q in hist.columns else from_summary * np.nan
        out[column] = from_hist.where(has_hist, from_summary)
    out["latency_source"] = np.where(
        has_hist,
        c.LATENCY_SOURCE_HISTOGRAM,
        np.where(out["p99_ms"].notna(), c.LATENCY_SOURCE_SUMMARY, ""),
    )
    numbers = out.select_dtypes("number").columns
    out[numbers] = out[numbers].where(np.isfinite(out[numbers]))  # an infinite figure is no figure
    out = out[(out["inferences"] > 0) | (out["requests"] > 0) | (out["cost"].fillna(0) > 0)]
    out = out.sort_values(["cost", "inferences"], ascending=False, na_position="last").reset_index()
    currency = None
    for frame in (data.frame(c.M_COST_PER_HOUR), server_frame):
        if not frame.empty and c.L_CURRENCY in frame.columns:
            currency = str(frame[c.L_CURRENCY].dropna().iloc[0])
            break
    reason = no_data.get("idle share") or no_data.get("server cost")
    if idle_cost is None and reason:
        no_data["idle cost"] = reason
    summary = Summary(
        seconds=data.seconds,
        currency=currency,
        server_cost=_figure(server_cost if isinstance(server_cost, float) else None, "server cost", no_data),
        idle_cost=_figure(idle_cost, "idle cost", no_data),
        idle_fraction=_figure(idle_fraction, "idle share", no_data),
        inferences=float(out["inferences"].sum()),
        models=len(out),
        no_data=no_data,
    )
    return out[list(COLUMNS)], summary
