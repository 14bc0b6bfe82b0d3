"""The report's SLO section: per SLO of the spec, what the range did to it.

Events are the alert rules' (`generate/slo_rules.py`, one source of truth). Availability: valid
requests are Triton's success and failure counters of the SLO's job and models, bad ones the failures
with the SLO's bad reasons (the same matchers; the models table's per-series increases, read once
with labels job and reason, filtered as the matchers select). Request-based latency and LLM SLIs:
the histogram's count and the threshold's bucket the rules rate (`histogram_selectors`), their
increase over the range per series (resets counted, no extrapolation); bad = count - bucket. Time
slices: the rules' bad-slice expression (`slice_bad_expr`) evaluated once per slice over the range,
per model. Per model (and per version when a model served several in the range): the events, the
error ratio, the budget the range spent as a share of the SLO period's budget, and the first and last
step whose trailing window's error ratio is above the objective's allowed ratio.

Budget spent = bad / (allowed ratio × expected events over the period), the expected events being
the range's event rate over the whole period: the assumption the report states beside it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from triton_sre import conventions as c
from triton_sre.durations import format_duration
from triton_sre.generate.rulefile import model_matchers
from triton_sre.generate.slo_rules import (
    bad_reason_matcher,
    histogram_selectors,
    is_bad_reason,
    slice_bad_expr,
)
from triton_sre.promql import Matcher, by, selector
from triton_sre.report.figures import ALL_VERSIONS, version_order
from triton_sre.report.increases import ROW, fold_increases, increase_rows, keyed, split_key
from triton_sre.report.queries import MODEL_VERSION, RangeQuery, count_expr
from triton_sre.slo import SLO, Spec, window_seconds

__all__ = [
    "BAD",
    "SLOSection",
    "SLOTable",
    "slo_queries",
    "slo_section",
    "slo_selectors",
    "slo_table",
    "slo_totals",
    "step_expr",
]

BAD = c.SLO_PART_BAD
SUCCESS = c.SLO_PART_SUCCESS
FAILURE = c.SLO_PART_FAILURE
TOTAL = c.SLO_PART_TOTAL
GOOD = c.SLO_PART_GOOD
Counts = Mapping[str, "int | None"]  # `slo_queries`' name -> the series counted (None: not known)
NO_COUNTS: Counts = MappingProxyType({})
SLICES, PER_STEP = "slices", " per step"  # of `query_name`
# how a table's SLI counts its events (SLOTable.sli)
SLI_REQUESTS, SLI_HISTOGRAM, SLI_SLICES = "requests", "histogram", "time slices"
COLUMNS = (
    "model",
    "version",
    "requests",
    "bad",
    "error_ratio",
    "budget_spent",
    "first_above",
    "last_above",
)


@dataclass(frozen=True)
class SLOTable:
    """One SLO's rows (`COLUMNS`) over the range."""

    slo: SLO
    rows: pd.DataFrame
    sli: str = SLI_REQUESTS  # SLI_REQUESTS (availability), SLI_HISTOGRAM or SLI_SLICES
    sources: tuple[str, ...] = ()  # time slices: the latency sources the rules' expression used
    cluster: str | None = None  # the cluster's value when the spec has a cluster_label (a table each)
    # (model, state) of each model it covers not served at the range's end (slo_text.with_unserved)
    unserved: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class SLOSection:
    tables: tuple[SLOTable, ...] = ()
    window: str = ""  # the trailing window each step's error ratio is over
    seconds: float = 0.0  # the range's length
    source: str = ""  # the spec the SLOs come from
    # (cluster, model, state) of each model not served at the range's end (report/unserved.py): no data,
    # not 100 % (the cluster None without a cluster_label)
    unserved: tuple[tuple[str | None, str, str], ...] = ()


def slo_selectors(spec: Spec, slo: SLO) -> dict[str, str]:
    """The counters of `slo`'s events, with the alert rules' job, model and reason matchers."""
    ms: list[Matcher] = [(c.LABEL_JOB, "=", spec.triton_job), *model_matchers(slo)]
    return {
        BAD: selector(c.NV_REQUEST_FAILURE, [*ms, bad_reason_matcher(slo)]),
        SUCCESS: selector(c.NV_REQUEST_SUCCESS, ms),
        FAILURE: selector(c.NV_REQUEST_FAILURE, ms),
    }


def step_expr(counter: str, window: str, cluster_label: str | None = None) -> str:
    """The counter's increase over the trailing `window` at each step, per model version (and
    cluster, with a `cluster_label`)."""
    return f"sum {by((*_clusters(cluster_label), *MODEL_VERSION))} (increase({counter}[{window}]))"


def _clusters(cluster_label: str | None) -> tuple[str, ...]:
    return (cluster_label,) if cluster_label else ()


def cluster_tables(
    slo: SLO,
    parts: tuple[Mapping[str, pd.DataFrame], Mapping[str, pd.DataFrame]],
    seconds: float,
    cluster_label: str | None,
    sli: str = SLI_REQUESTS,
    sources: tuple[str, ...] = (),
) -> list[SLOTable]:
    """`slo`'s tables from `parts` (the totals and steps of `slo_table`): one, or with a
    `cluster_label` one per cluster among the parts' series (the rules judge each cluster's model
    apart: their budgets are not added up)."""
    totals, steps = parts
    if not cluster_label:
        return [SLOTable(slo, slo_table(slo, totals, steps, seconds), sli, sources)]

    # Each frame's rows of each cluster found once (fleet34): comparing every row's cluster with each
    # cluster in turn was clusters x rows (100 clusters' per-step frames: quadratic in the clusters).
    empty = np.empty(0, dtype=np.intp)

    def rows_of(frame: pd.DataFrame) -> dict[str, np.ndarray]:
        if cluster_label not in frame.columns:
            return {}
        key = frame[cluster_label].fillna("").astype(str)
        return {str(k): rows for k, rows in key.groupby(key, sort=False).indices.items()}

    def of(frame: pd.DataFrame, rows: dict[str, np.ndarray], value: str) -> pd.DataFrame:
        if cluster_label not in frame.columns:
            return frame.iloc[0:0]
        return frame.iloc[rows.get(value, empty)]  # the rows `frame[key == value]` selects, in order

    split = [{p: (f, rows_of(f)) for p, f in part.items()} for part in parts]
    found = set().union(*(rows.keys() for part in split for _, rows in part.values()))
    return [
        SLOTable(
            slo,
            slo_table(
                slo,
                {p: of(f, rows, value) for p, (f, rows) in split[0].items()},
                {p: of(f, rows, value) for p, (f, rows) in split[1].items()},
                seconds,
            ),
            sli,
            sources,
            value,
        )
        for value in sorted(found)
    ]


def _empty_index(names: list[str]) -> pd.Index:
    """An empty index on `names`: an empty part added to, or joined with, the others keeps their levels."""
    return (
        pd.MultiIndex.from_arrays([[]] * len(names), names=names)
        if len(names) > 1
        else pd.Index([], name=names[0])
    )


def _per_version(rows: pd.DataFrame) -> pd.Series:
    """Increase rows (labels, ``increase``) summed per (model, version), as the models table sums them
    (`fold_increases`: a GPU model's per-GPU series added to its other ones)."""
    if rows.empty or c.LABEL_MODEL not in rows.columns:
        return pd.Series(index=_empty_index([c.LABEL_MODEL, c.LABEL_VERSION]), dtype=float)
    folded = fold_increases(keyed(rows, True), ROW)
    index = pd.MultiIndex.from_tuples(
        [split_key(k) for k in folded.index], names=[c.LABEL_MODEL, c.LABEL_VERSION]
    )
    return pd.Series(folded.to_numpy(), index=index, dtype=float).sort_index()


def _steps(frame: pd.DataFrame) -> pd.Series:
    """A long frame of per-step values (model, version, timestamp, value) -> a Series on that index."""
    if frame.empty or c.LABEL_MODEL not in frame.columns:
        return pd.Series(index=_empty_index([c.LABEL_MODEL, c.LABEL_VERSION, "timestamp"]), dtype=float)
    keyed = frame.assign(version=frame[c.LABEL_VERSION] if c.LABEL_VERSION in frame.columns else "")
    keyed = keyed.astype({c.LABEL_MODEL: str, c.LABEL_VERSION: str})
    return keyed.groupby([c.LABEL_MODEL, c.LABEL_VERSION, "timestamp"])["value"].sum()


def _above(bad: pd.Series, valid: pd.Series, allowed: float, keys: list[str]) -> pd.DataFrame:
    """Per `keys` (the index levels but timestamp): the first and last timestamp whose bad / valid
    is above `allowed`."""
    if valid.empty:
        return pd.DataFrame(columns=["first_above", "last_above"], index=_empty_index(keys), dtype=float)
    bad = bad.reindex(valid.index, fill_value=0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = bad / valid.where(valid > 0)
    stamps = ratio[(ratio > allowed).to_numpy()].index.to_frame(index=False)
    grouped = stamps.groupby(keys)["timestamp"]
    return pd.DataFrame({"first_above": grouped.min(), "last_above": grouped.max()})


def _valid_bad(parts: Mapping[str, pd.Series]) -> tuple[pd.Series, pd.Series]:
    """(valid, bad) events from an SLI's parts: availability's success + failure and bad; a histogram
    SLI's total and total - good (never below 0); time slices' total and bad."""
    if TOTAL not in parts:
        return parts[SUCCESS].add(parts[FAILURE], fill_value=0.0), parts[BAD]
    total = parts[TOTAL]
    if BAD in parts:
        return total, parts[BAD]
    return total, total.sub(parts[GOOD], fill_value=0.0).clip(lower=0.0)


def slo_table(
    slo: SLO, totals: Mapping[str, pd.DataFrame], steps: Mapping[str, pd.DataFrame], seconds: float
) -> pd.DataFrame:
    """`slo`'s rows over a range of `seconds`: `totals` the increase rows of each part (availability's BAD,
    SUCCESS and FAILURE, or a histogram's or time slices' parts: `_valid_bad`) over the range, `steps`
    each part's per-step increase over the trailing window, per model version.

    A row per model with requests; a model with requests in several versions gets a total row
    (version `ALL_VERSIONS`) and a row per such version. Budget spent: bad / (allowed ratio ×
    requests × period / `seconds`), the range's request rate held over the whole period; a version's
    is its share of its model's budget."""
    allowed = float(slo.budget)
    valid, bad = _valid_bad({p: _per_version(rows) for p, rows in totals.items()})
    valid = valid[valid > 0]
    if valid.empty:
        return pd.DataFrame(columns=list(COLUMNS))
    versions = pd.DataFrame({"requests": valid, "bad": bad.reindex(valid.index, fill_value=0.0)})
    models = versions.groupby(level=c.LABEL_MODEL, sort=False).sum()
    count = versions.groupby(level=c.LABEL_MODEL, sort=False).size()
    expected = models["requests"] * slo.period_s / seconds
    per_bad = 1.0 / (allowed * expected)  # of the model's budget, for its versions too
    s_valid, s_bad = _valid_bad({p: _steps(frame) for p, frame in steps.items()})
    model_keys, version_keys = [c.LABEL_MODEL], [c.LABEL_MODEL, c.LABEL_VERSION]

    def per_model(series: pd.Series) -> pd.Series:
        return series.groupby(level=[c.LABEL_MODEL, "timestamp"]).sum()

    model_above = _above(per_model(s_bad), per_model(s_valid), allowed, model_keys)
    version_above = _above(s_bad, s_valid, allowed, version_keys)
    first_version = versions.reset_index().groupby(c.LABEL_MODEL, sort=False)[c.LABEL_VERSION].first()
    totals_rows = models.assign(
        version=[ALL_VERSIONS if count[m] > 1 else first_version[m] for m in models.index],
        budget_spent=models["bad"] * per_bad,
    ).join(model_above)
    several = count.index[count > 1]
    detail = versions[versions.index.get_level_values(c.LABEL_MODEL).isin(several)]
    detail = detail.assign(
        budget_spent=detail["bad"] * per_bad.reindex(detail.index.get_level_values(c.LABEL_MODEL)).to_numpy()
    ).join(version_above)
    place = {m: i for i, m in enumerate(models.index)}
    rows = pd.concat([totals_rows.reset_index(), detail.reset_index()], ignore_index=True)
    first = [False] * len(totals_rows) + [True] * len(detail)  # a model's total row before its versions
    order = [
        (place[m], v, version_order(str(version)) if v else ())
        for m, v, version in zip(rows[c.LABEL_MODEL], first, rows[c.LABEL_VERSION], strict=True)
    ]
    rows = rows.iloc[sorted(range(len(rows)), key=order.__getitem__)].reset_index(drop=True)
    rows["error_ratio"] = rows["bad"] / rows["requests"]
    rows = rows.rename(columns={c.LABEL_MODEL: "model", c.LABEL_VERSION: "version"})
    return rows.reindex(columns=list(COLUMNS)).astype({"first_above": float, "last_above": float})


def _models(client: Any, spec: Spec, slo: SLO, end: float, seconds: float) -> set[str] | None:
    """The models `slo` covers: None for all; a list's names; a regex's, as Prometheus matches it
    (RE2, anchored, with the rules' matcher) among the models whose request counters had a sample."""
    if slo.models.kind == "all":
        return None
    if slo.models.kind == "list":
        return set(slo.models.names)
    ms: list[Matcher] = [(c.LABEL_JOB, "=", spec.triton_job), *model_matchers(slo)]
    window = f"last_over_time({selector(c.NV_REQUEST_SUCCESS, ms)}[{max(1, math.ceil(seconds))}s])"
    return {
        labels.get(c.LABEL_MODEL, "")
        for labels, _ in client.vector(f"count {by((c.LABEL_MODEL,))} ({window})", end)
    }


def slo_totals(
    spec: Spec, slo: SLO, increases: Mapping[str, pd.DataFrame], models: set[str] | None
) -> dict[str, pd.DataFrame]:
    """The per-series increase rows of each part (BAD, SUCCESS, FAILURE) of `slo`: the report's request
    counters (read once, with labels job and reason) kept where the rules' matchers select them
    (`models` None: every model)."""

    def own(family: str) -> pd.DataFrame:
        rows = increases.get(family, pd.DataFrame())
        if rows.empty or c.LABEL_MODEL not in rows.columns:
            return pd.DataFrame(columns=["increase"])
        job = rows[c.LABEL_JOB] if c.LABEL_JOB in rows.columns else pd.Series("", index=rows.index)
        keep = job.fillna("") == spec.triton_job
        if models is not None:
            keep &= rows[c.LABEL_MODEL].isin(models)
        return rows[keep]

    failure = own(c.NV_REQUEST_FAILURE)
    reason = (
        failure[c.LABEL_REASON] if c.LABEL_REASON in failure.columns else pd.Series("", index=failure.index)
    )
    bad = reason.fillna("").map(lambda r: is_bad_reason(slo, str(r))).astype(bool)
    return {BAD: failure[bad], SUCCESS: own(c.NV_REQUEST_SUCCESS), FAILURE: failure}


KEEP = (c.LABEL_MODEL, c.LABEL_VERSION, c.LABEL_GPU_UUID)  # a histogram part's labels, per series


def histogram_tables(
    client: Any,
    spec: Spec,
    slo: SLO,
    span: tuple[float, float, float],
    window: str,
    counts: Counts = NO_COUNTS,
) -> list[SLOTable]:
    """A request-based latency or LLM SLO's rows: the increase over the range of each series of the
    rules' parts (`histogram_selectors`), and each part's increase over the trailing `window` per step."""
    start, end, step = span
    selectors, keep = histogram_selectors(spec, slo), (*KEEP, *_clusters(spec.cluster_label))
    totals = {
        part: increase_rows(
            client.read_increases(sel, start, end, step, keep, counts.get(query_name(slo, part)))
        )
        for part, sel in selectors.items()
    }
    steps = {
        part: client.frame_range(
            step_expr(sel, window, spec.cluster_label), *span, per_step(slo, part, counts)
        )
        for part, sel in selectors.items()
    }
    return cluster_tables(slo, (totals, steps), end - start, spec.cluster_label, SLI_HISTOGRAM)


def slices_tables(
    client: Any,
    spec: Spec,
    slo: SLO,
    span: tuple[float, float, float],
    window: str,
    skip: set[tuple[str, str]],
    counts: Counts = NO_COUNTS,
) -> list[SLOTable]:
    """A latency SLO's time-slice rows, per model but the (cluster, model) pairs in `skip` (judged on
    the histogram): the rules' bad-slice expression at the end of each slice of the range (TOTAL:
    slices with traffic, BAD: the bad ones), and per step, over the trailing window (at least a
    slice), the same two counts."""
    start, end, _step = span
    expr, slice_s = slice_bad_expr(spec, slo), window_seconds(slo.time_slice)
    trailing = format_duration(max(window_seconds(window), slice_s))
    cluster = _clusters(spec.cluster_label)
    labels = [*cluster, c.LABEL_MODEL]

    def own(rows: pd.DataFrame) -> pd.DataFrame:
        if rows.empty or c.LABEL_MODEL not in rows.columns:
            return pd.DataFrame(columns=[*labels, "timestamp", "value"])
        rows = rows.assign(**{label: rows.get(label, "") for label in cluster})
        keys = zip(rows[cluster[0]] if cluster else [""] * len(rows), rows[c.LABEL_MODEL], strict=True)
        return rows[[key not in skip for key in keys]]

    series = counts.get(query_name(slo, SLICES))  # per (cluster,) model, as each query below
    frame = own(client.frame_range(expr, start + slice_s, end, slice_s, series))
    sources = tuple(sorted(set(frame.get(c.L_LATENCY_SOURCE, pd.Series(dtype=object)).dropna())))
    if not sources and not frame.empty:  # nothing but averages: the rule carries no label on its branches
        sources = (c.LATENCY_SOURCE_AVERAGE,)
    grouped = frame.groupby(labels)["value"]
    totals = {
        part: folded.rename("increase").reset_index().assign(version="")
        for part, folded in ((TOTAL, grouped.count()), (BAD, grouped.sum()))
    }
    steps = {
        part: own(
            client.frame_range(
                f"sum {by(labels)} ({fn}(({expr})[{trailing}:{slo.time_slice}]))", *span, series
            )
        )
        for part, fn in ((TOTAL, "count_over_time"), (BAD, "sum_over_time"))
    }
    return cluster_tables(slo, (totals, steps), end - start, spec.cluster_label, SLI_SLICES, sources)


def latency_tables(
    client: Any,
    spec: Spec,
    slo: SLO,
    span: tuple[float, float, float],
    window: str,
    counts: Counts = NO_COUNTS,
) -> list[SLOTable]:
    """A latency or LLM SLO's tables, as its rules judge it: an LLM SLO and `latency_sli: histogram` on
    the histogram; `time_slice` on slices; `auto` on the histogram for models that have it, slices for
    the rest (a table each, the histogram's left out when no model has it)."""
    tables = []
    skip: set[tuple[str, str]] = set()
    if slo.type in c.LLM_SLO_TYPES or slo.latency_sli != c.LATENCY_SLI_TIME_SLICE:
        histogram = histogram_tables(client, spec, slo, span, window, counts)
        skip = {(t.cluster or "", str(m)) for t in histogram for m in t.rows["model"]}
        if skip or slo.latency_sli == c.LATENCY_SLI_HISTOGRAM or slo.type in c.LLM_SLO_TYPES:
            tables.extend(histogram)
    if slo.type == c.SLO_LATENCY and slo.latency_sli != c.LATENCY_SLI_HISTOGRAM:
        tables.extend(slices_tables(client, spec, slo, span, window, skip, counts))
    return tables


def per_step(slo: SLO, part: str, counts: Counts) -> int | None:
    """The series counted of `slo`'s per-step query of `part` (per model version and cluster)."""
    return counts.get(query_name(slo, f"{part}{PER_STEP}"))


def query_name(slo: SLO, part: str) -> str:
    """The name of `slo`'s range query `part` in `slo_queries` and in the counts the reads are given."""
    return f"SLO {slo.name} {part}"


def slo_queries(spec: Spec, seconds: float) -> dict[str, RangeQuery]:
    """The SLO section's range queries over a range of `seconds`, each with the count of its series
    (`queries.count_expr`), for the report's step chosen before anything is read (`expr`: the selector
    the query reads; the per-step ones depend on the rate window, their series do not). Availability's
    totals are the models table's counters, already counted."""
    queries = {}
    for slo in spec.slos:
        per_step = (*_clusters(spec.cluster_label), *MODEL_VERSION)
        if slo.type == c.SLO_AVAILABILITY:
            parts = slo_selectors(spec, slo)
        elif slo.type in c.LLM_SLO_TYPES or slo.latency_sli != c.LATENCY_SLI_TIME_SLICE:
            parts = histogram_selectors(spec, slo)
            for part, sel in parts.items():  # read per series (`histogram_tables`)
                queries[query_name(slo, part)] = RangeQuery(sel, count_expr(sel, seconds))
        else:
            parts = {}
        if slo.type == c.SLO_LATENCY and slo.latency_sli != c.LATENCY_SLI_HISTOGRAM:
            # the slices' subqueries at each step: per (cluster,) model, as the rules' expression
            ms: list[Matcher] = [(c.LABEL_JOB, "=", spec.triton_job), *model_matchers(slo)]
            sel = selector(c.NV_REQUEST_DURATION_US, ms)
            labels = (*_clusters(spec.cluster_label), c.LABEL_MODEL)
            queries[query_name(slo, SLICES)] = RangeQuery(sel, count_expr(sel, seconds, labels))
        for part, sel in parts.items():
            queries[query_name(slo, f"{part}{PER_STEP}")] = RangeQuery(
                sel, count_expr(sel, seconds, per_step)
            )
    return queries


def slo_section(
    client: Any,
    spec: Spec,
    span: tuple[float, float, float],
    window: str,
    increases: Mapping[str, pd.DataFrame],
    counts: Counts = NO_COUNTS,
) -> SLOSection:
    """The section of `spec`'s SLOs over `span` (start, end, step). Availability: the totals from the
    report's per-series `increases` of the request counters (`slo_totals`), and from Prometheus
    (`client`, the report's `PrometheusClient`) each part's increase per model version over the
    trailing `window` (the charts' rate window) at each step, aggregated by Prometheus. Latency and
    LLM SLOs: `latency_tables`."""
    start, end, step = span
    tables = []
    for slo in spec.slos:
        if slo.type != c.SLO_AVAILABILITY:
            tables.extend(latency_tables(client, spec, slo, span, window, counts))
            continue
        totals = slo_totals(spec, slo, increases, _models(client, spec, slo, end, end - start))
        steps = {
            part: client.frame_range(
                step_expr(sel, window, spec.cluster_label), start, end, step, per_step(slo, part, counts)
            )
            for part, sel in slo_selectors(spec, slo).items()
        }
        tables.extend(cluster_tables(slo, (totals, steps), end - start, spec.cluster_label))
    return SLOSection(tuple(tables), window, end - start, spec.source)
