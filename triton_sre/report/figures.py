"""Pure: range-query frames -> one row per model with cost, batching, latency split and quantiles.

Latency quantiles (p50, p95, p99): from Triton's histogram ``nv_inference_first_response_histogram_ms``
when the model has one (bucket increases over the range, merged across servers, interpolated
within a bucket as ``histogram_quantile`` does): the quantile of the whole range. Otherwise from
Triton's summaries (a sliding window of about a minute, per server): at each step the worst
server's value, and the median of those over the range (the typical window); column
``latency_source`` says which.

Counters (Triton's ``nv_inference_*``) are read as their increase over the range
(`report/increases.py`, resets included, GPU series folded). Cost gauges
(``triton_sre_cost_per_hour`` ...) are integrated over time: each sample stands for one step.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from triton_sre import conventions as c
from triton_sre.report.ensemble_steps import (
    COMPUTE_COUNTERS,
    SPLIT_COUNTERS,
    STEP_COLUMNS,
    STEP_COUNTERS,
    counter_split,
    step_split,
    time_average,
)
from triton_sre.report.increases import (
    ROW,
    bucket_quantiles,
    counter_increase,
    family_increase,
    fold_increases,
    keyed,
    series_increases,
    split_key,
)

__all__ = [
    "ALL_VERSIONS",
    "COLUMNS",
    "LATENCY_PER_VERSION",
    "RangeData",
    "Summary",
    "integrate",
    "model_rows",
    "model_table",
    "pivot_rates",
    "version_order",
]

COLUMNS = (
    "model",
    "version",
    "inferences",
    "executions",
    "requests",
    "failures",
    "failures_never_executed",
    "requests_per_s",
    "cost",
    "cost_per_1k",
    "cost_share",
    "idle_cost",
    "batching_ratio",
    "max_batch_size",
    "dynamic_batching",
    "max_queue_delay_ms",
    "batch_fill",
    "queue_share",
    "compute_share",
    "queue_step",
    "queue_step_ms",
    "split_from",
    "avg_latency_ms",
    "p50_ms",
    "p95_ms",
    "p99_ms",
    "latency_source",
)
ALL_VERSIONS = "all"
"""Column ``version`` of a model's total row when rows per version follow it, or of an ensemble's row
when its versions are not told apart (`_ensemble_versions`)."""
STEPS_PER_MODEL = f"the model's (version {ALL_VERSIONS}): its steps' counters do not say which version called"
"""Column ``split_from`` of an ensemble's version row when its split is its steps': one split for the
model, on its total row, not a figure copied to each version (its versions share one config and steps)."""
LATENCY_PER_VERSION = "per version"
"""Column ``latency_source`` of such a total row when its quantiles come from summaries: they are on
its versions' rows only."""
HISTOGRAM_BUCKETS = f"{c.NV_FIRST_RESPONSE_HISTOGRAM_MS}_bucket"
_NO_CALLS = f"no {c.M_ENSEMBLE_STEP_CALLS}: an exporter before it"


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

    def increase(self, family: str, versions: bool = False) -> pd.Series:
        """The counter's increase per model (or per model version: `keyed`) over the range."""
        if not versions:
            return family_increase(self.frames, self.increases, family)
        if family in self.increases:
            return fold_increases(keyed(self.increases[family], True), ROW)
        return counter_increase(keyed(self.frame(family), True), ROW)

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


def integrate(frame: pd.DataFrame, step: float, by: str | None = c.LABEL_MODEL) -> pd.Series | float:
    """∫ value dt in value-hours (a per-hour gauge -> an amount), per ``by`` or in total."""
    if frame.empty:
        return pd.Series(dtype=float) if by else 0.0
    hours = frame["value"].where(np.isfinite(frame["value"]), 0.0) * step / 3600.0
    if by is None:
        return float(hours.sum())
    return hours.groupby(frame[by]).sum()


def pivot_rates(frame: pd.DataFrame) -> pd.DataFrame:
    """A range query of per-model rates (long) -> one column per model, indexed by timestamp."""
    if frame.empty or c.LABEL_MODEL not in frame.columns:
        return pd.DataFrame()
    pivot = frame.pivot_table(index="timestamp", columns=c.LABEL_MODEL, values="value", aggfunc="sum")
    return pivot.fillna(0.0)


def _quantile(frame: pd.DataFrame, q: str) -> pd.Series:
    """ms per `ROW` from Triton's summary (µs): the worst server at each step, median over the range."""
    if frame.empty or c.LABEL_QUANTILE not in frame.columns or ROW not in frame.columns:
        return pd.Series(dtype=float)
    rows = frame[frame[c.LABEL_QUANTILE] == q]  # a GPU model: its series without gpu_uuid reads NaN
    rows = rows[np.isfinite(rows["value"])]
    if rows.empty:
        return pd.Series(dtype=float)
    worst = rows.groupby([ROW, "timestamp"])["value"].max()
    return worst.groupby(level=0).median() / 1000.0


def _max_batch_size(data: RangeData, versions: bool) -> pd.Series:
    """max_batch_size per `ROW` as the exporter read it from the config: ratio / fill."""
    ratio = keyed(data.frame(c.M_BATCHING_RATIO), versions)
    fill = keyed(data.frame(c.M_BATCH_FILL_RATIO), versions)
    if ratio.empty or fill.empty or ROW not in ratio.columns or ROW not in fill.columns:
        return pd.Series(dtype=float)
    keys = [ROW, "timestamp"]
    both = (
        ratio.groupby(keys)["value"]
        .mean()
        .to_frame("ratio")
        .join(fill.groupby(keys)["value"].mean().to_frame("fill"), how="inner")
    )
    both = both[both["fill"] > 0]
    return (both["ratio"] / both["fill"]).groupby(level=0).median().round()


def _config_fact(data: RangeData, family: str, index: pd.Index, versions: bool) -> pd.Series:
    """A fact of the model config the exporter wrote per model (`CONFIG_FAMILIES`: its last sample in
    the range, the largest among servers), for each row of `index` (a version's row takes its
    model's); NaN where the exporter wrote none (an older exporter, or no config read)."""
    frame = data.frame(family)
    if frame.empty or c.LABEL_MODEL not in frame.columns:
        return pd.Series(np.nan, index=index, dtype=float)
    last = frame[np.isfinite(frame["value"])].sort_values("timestamp")
    per_model = last.groupby(last[c.LABEL_MODEL].astype(object).astype(str))["value"].last()
    models = [split_key(key)[0] if versions else key for key in index]
    return pd.Series(per_model.reindex(models).to_numpy(dtype=float), index=index)


def _failures_never_executed(data: RangeData, versions: bool) -> pd.Series:
    """Failed requests per `ROW` whose `reason` (Triton 24.07+) says they were never in an execution
    (`FAILURE_REASONS_NEVER_EXECUTED`); empty without the label (an older Triton)."""
    table = data.increases.get(c.NV_REQUEST_FAILURE)
    if table is None:
        table = series_increases(data.frame(c.NV_REQUEST_FAILURE))
    if table.empty or c.LABEL_REASON not in table.columns:
        return pd.Series(dtype=float)
    never = table[table[c.LABEL_REASON].astype(object).isin(c.FAILURE_REASONS_NEVER_EXECUTED)]
    return fold_increases(keyed(never, versions), ROW)


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


def _figures(data: RangeData, versions: bool, idle_ratio: float) -> pd.DataFrame:
    """The table's figures per model, or (`versions`) per model version, indexed by `ROW`."""
    inc = {family: data.increase(family, versions) for family in c.PER_MODEL_COUNTERS}
    cost_frame = keyed(data.frame(c.M_COST_PER_HOUR), versions)
    cost = integrate(cost_frame, data.step, ROW) if ROW in cost_frame.columns else pd.Series(dtype=float)
    assert isinstance(cost, pd.Series)
    rows = sorted(set().union(*(s.index for s in inc.values()), cost.index))
    table = pd.DataFrame(index=pd.Index(rows, name=ROW))
    # NaN where the model has no series of the family: a counter the scrape lacks (a server started with
    # --metrics-config counter_latencies=false, a posted excerpt) gives no figure, not 0
    for family in c.PER_MODEL_COUNTERS:
        table[family] = inc[family].reindex(table.index)
    out = pd.DataFrame(index=table.index)
    out["inferences"] = table[c.NV_INFERENCE_COUNT]
    out["executions"] = table[c.NV_EXEC_COUNT]
    out["requests"] = table[c.NV_REQUEST_SUCCESS].add(table[c.NV_REQUEST_FAILURE], fill_value=0.0)
    out["failures"] = table[c.NV_REQUEST_FAILURE].fillna(0.0).where(out["requests"].notna())
    out["failures_never_executed"] = _failures_never_executed(data, versions).reindex(out.index).fillna(0.0)
    out["requests_per_s"] = out["requests"] / data.seconds if data.seconds > 0 else np.nan
    out["cost"] = cost.reindex(out.index) if not cost.empty else np.nan
    out["cost_per_1k"] = _div(out["cost"] * 1000.0, out["inferences"])
    total_cost = out["cost"].sum(min_count=1)
    out["cost_share"] = out["cost"] / total_cost if total_cost and total_cost > 0 else np.nan
    out["idle_cost"] = out["cost"] * idle_ratio
    out["batching_ratio"] = _div(out["inferences"], out["executions"])
    configured = _config_fact(data, c.M_MODEL_MAX_BATCH_SIZE, out.index, versions)
    out["max_batch_size"] = configured.fillna(_max_batch_size(data, versions).reindex(out.index))
    out["dynamic_batching"] = _config_fact(data, c.M_MODEL_DYNAMIC_BATCHING, out.index, versions)
    out["max_queue_delay_ms"] = _config_fact(data, c.M_MODEL_MAX_QUEUE_DELAY, out.index, versions) * 1000.0
    out["batch_fill"] = _div(out["batching_ratio"], out["max_batch_size"])
    # An ensemble has no batcher (its steps do): Triton's counters give it rows per request as its
    # ratio. Its batching figures are left empty, and with them any batching advice.
    ensemble = (_config_fact(data, c.M_MODEL_ENSEMBLE, out.index, versions) == 1).to_numpy()
    out["_ensemble"] = ensemble  # read by _ensemble_versions, not a column of the table
    out.loc[ensemble, ["batching_ratio", "dynamic_batching", "max_queue_delay_ms", "batch_fill"]] = np.nan
    request_us = table[c.NV_REQUEST_DURATION_US]
    out["queue_share"] = _div(table[c.NV_QUEUE_DURATION_US], request_us)
    computes = table[list(COMPUTE_COUNTERS)]  # the compute families the model has, none: no share
    compute_us = computes.fillna(0.0).sum(axis=1).where(computes.notna().any(axis=1))
    out["compute_share"] = _div(compute_us, request_us)
    # An ensemble's steps' queue is in none of its own stages: its split is its steps' (ensemble_steps.py),
    # from their counters weighted by requests, else the exporter's samples averaged over time
    per_version = {family: data.increase(family, True) for family in STEP_COUNTERS}
    counted = counter_split(data.frame(c.M_ENSEMBLE_STEP_CALLS), per_version, out.index, versions)
    averaged = step_split(data.frame(c.M_ENSEMBLE_STEP_SECONDS), versions).reindex(out.index)
    by_counters = counted["split_from"] == SPLIT_COUNTERS
    steps = averaged.where(~by_counters, counted[list(STEP_COLUMNS)])
    out["queue_step"] = steps["queue_step"].fillna("").astype(object)
    out["queue_step_ms"] = steps["queue_step_ms"].astype(float)
    read = steps["queue_share"].notna() | steps["compute_share"].notna()
    for column in STEP_COLUMNS[:2]:
        out[column] = out[column].where(~read, steps[column].astype(float))
    averaged_ok = averaged["queue_share"].notna() | averaged["compute_share"].notna()
    fallback = counted["split_from"].where(counted["split_from"].notna(), time_average(_NO_CALLS))
    out["split_from"] = np.where(by_counters, SPLIT_COUNTERS, np.where(averaged_ok, fallback, ""))
    out["avg_latency_ms"] = _div(request_us / 1000.0, table[c.NV_REQUEST_SUCCESS])
    summary_frame = keyed(data.frame(c.NV_REQUEST_SUMMARY_US), versions)
    hist = bucket_quantiles(keyed(data.histogram(HISTOGRAM_BUCKETS), versions), c.LATENCY_QUANTILES, ROW)
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
    return out


def _served(out: pd.DataFrame) -> pd.Series:
    return (out["inferences"] > 0) | (out["requests"] > 0)


def version_order(version: str) -> tuple[bool, int, str]:
    """Sort key of a model's versions: numbers in order, then any other name."""
    return (not version.isdigit(), int(version) if version.isdigit() else 0, version)


def _with_versions(models: pd.DataFrame, versions: pd.DataFrame) -> pd.DataFrame:
    """`models` (one row per model, in order) with column ``version``: the model's one version with
    traffic, or `ALL_VERSIONS` followed by a row per version with traffic when it has several. Such a
    total row's summary quantiles are left out: Triton's summaries cannot be merged across versions,
    and the worst version's beside an average over all of them read as a contradiction."""
    versions, together = _ensemble_versions(versions)
    served = versions[_served(versions)]
    parts = [split_key(key) for key in served.index]
    served = served.assign(model=[m for m, _ in parts], version=[v for _, v in parts])
    count = served.groupby("model")["version"].agg(["size", "first"])
    several = count.index[count["size"] > 1]
    out = models.assign(version=models["model"].map(count["first"]).fillna("").astype(object))
    out.loc[out["model"].isin(together), "version"] = ALL_VERSIONS
    if several.empty:
        return out
    total = out["model"].isin(several)
    out.loc[total, "version"] = ALL_VERSIONS
    merged = total & (out["latency_source"] == c.LATENCY_SOURCE_SUMMARY)
    out.loc[merged, [f"{c.quantile_name(q)}_ms" for q in c.LATENCY_QUANTILES]] = np.nan
    out.loc[merged, "latency_source"] = LATENCY_PER_VERSION
    rows = served[served["model"].isin(several)].reset_index(drop=True)
    place = pd.Series(range(len(out)), index=out["model"])
    order = [
        (place[m], 1 + version_order(v)[0], version_order(v)[1], v)
        for m, v in zip(rows["model"], rows["version"], strict=True)
    ]
    keys = [(p, 0, 0, "") for p in range(len(out))] + order
    both = pd.concat([out, rows[out.columns]], ignore_index=True)
    return both.iloc[sorted(range(len(both)), key=keys.__getitem__)].reset_index(drop=True)


def _ensemble_versions(versions: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """An ensemble with series of several versions, as `_with_versions` is to show it. Its steps' split
    is the model's: on its versions' rows the step columns and shares are left empty and ``split_from``
    says STEPS_PER_MODEL (the same split was copied to each). Triton 2.51 counts every version's requests
    of an ensemble on one version's series (measured: 3 to v1 and 5 to v2 read 8 on v1, 0 on v2; the
    statistics API counts them apart), so where one version alone has requests, the model's row is
    every version's: its ``version`` is ALL_VERSIONS, with no rows per version (those models returned)."""
    model_of = pd.Series([split_key(key)[0] for key in versions.index], index=versions.index)
    ensembles = model_of[versions["_ensemble"].astype(bool)]
    several = ensembles.groupby(ensembles).size()
    several = several.index[several > 1]
    if several.empty:
        return versions, []
    rows = model_of.isin(several) & (versions["split_from"] != "")
    versions = versions.copy()
    versions.loc[rows, ["queue_share", "compute_share", "queue_step_ms"]] = np.nan
    versions.loc[rows, "queue_step"] = ""
    versions.loc[rows, "split_from"] = STEPS_PER_MODEL
    served = model_of[_served(versions)].value_counts()
    together = [str(m) for m in several if served.get(m, 0) == 1]
    return versions[~model_of.isin(together)], together


def model_rows(table: pd.DataFrame) -> pd.DataFrame:
    """The table's rows that stand for a whole model (not a version's row under its model's total):
    the charts are per model."""
    if table.empty or "version" not in table.columns:
        return table
    totals = set(table.loc[table["version"] == ALL_VERSIONS, "model"])
    return table[~table["model"].isin(totals) | (table["version"] == ALL_VERSIONS)]


def model_table(data: RangeData) -> tuple[pd.DataFrame, Summary]:
    """One row per model that served or cost anything in the range, and under a model served in several
    versions in the range (a canary, a rollout) one row per version; plus the server summary."""
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
    idle_ratio = idle_cost / server_cost if idle_cost is not None and server_cost else np.nan
    out = _figures(data, False, idle_ratio)
    out = out[_served(out) | (out["cost"].fillna(0) > 0)]
    out = out.sort_values(["cost", "inferences"], ascending=False, na_position="last")
    out = out.rename_axis("model").reset_index()
    table = _with_versions(out, _figures(data, True, idle_ratio))
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
        inferences=float(out["inferences"].sum()),  # the model rows: versions' are in their total
        models=len(out),
        no_data=no_data,
    )
    return table[list(COLUMNS)], summary
