"""The report's SLO section: per availability SLO of the spec, what the range did to it.

Events are the alert rules' (`generate/slo_rules.py`, one source of truth): valid requests are Triton's
success and failure counters of the SLO's job and models, bad ones the failures with the SLO's bad
reasons (the same matchers). Per model (and per version when a model served several in the range):
the increase of each counter over the range (the models table's per-series increases, read once with
labels job and reason, filtered as the matchers select), the error ratio, the budget the range
spent as a share of the SLO period's budget, and the first and last step whose trailing window's
error ratio is above the objective's allowed ratio.

Budget spent = bad / (allowed ratio × expected events over the period), the expected events being
the range's request rate over the whole period: the assumption the report states beside it.
Latency and LLM SLOs are named as left out (their time-slice and histogram SLIs are not read here).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from triton_sre import conventions as c
from triton_sre.generate.rulefile import model_matchers
from triton_sre.generate.slo_rules import bad_reason_matcher, is_bad_reason
from triton_sre.promql import Matcher, by, selector
from triton_sre.report.figures import ALL_VERSIONS, version_order
from triton_sre.report.increases import ROW, fold_increases, keyed, split_key
from triton_sre.report.queries import MODEL_VERSION
from triton_sre.slo import SLO, Spec

__all__ = [
    "BAD",
    "PARTS",
    "SLOSection",
    "SLOTable",
    "slo_section",
    "slo_selectors",
    "slo_table",
    "slo_totals",
    "step_expr",
]

BAD = c.SLO_PART_BAD
SUCCESS = c.SLO_PART_SUCCESS
FAILURE = c.SLO_PART_FAILURE
PARTS = (BAD, SUCCESS, FAILURE)
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


@dataclass(frozen=True)
class SLOSection:
    tables: tuple[SLOTable, ...] = ()
    left_out: tuple[SLO, ...] = ()
    window: str = ""  # the trailing window each step's error ratio is over
    seconds: float = 0.0  # the range's length
    source: str = ""  # the spec the SLOs come from


def judged(spec: Spec) -> tuple[tuple[SLO, ...], tuple[SLO, ...]]:
    """The spec's SLOs the section computes (availability), and those it names as left out."""
    kept = tuple(s for s in spec.slos if s.type == c.SLO_AVAILABILITY)
    return kept, tuple(s for s in spec.slos if s.type != c.SLO_AVAILABILITY)


def slo_selectors(spec: Spec, slo: SLO) -> dict[str, str]:
    """The counters of `slo`'s events, with the alert rules' job, model and reason matchers."""
    ms: list[Matcher] = [(c.LABEL_JOB, "=", spec.triton_job), *model_matchers(slo)]
    return {
        BAD: selector(c.NV_REQUEST_FAILURE, [*ms, bad_reason_matcher(slo)]),
        SUCCESS: selector(c.NV_REQUEST_SUCCESS, ms),
        FAILURE: selector(c.NV_REQUEST_FAILURE, ms),
    }


def step_expr(counter: str, window: str) -> str:
    """The counter's increase over the trailing `window` at each step, per model version."""
    return f"sum {by(MODEL_VERSION)} (increase({counter}[{window}]))"


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


def slo_table(
    slo: SLO, totals: Mapping[str, pd.DataFrame], steps: Mapping[str, pd.DataFrame], seconds: float
) -> pd.DataFrame:
    """`slo`'s rows over a range of `seconds`: `totals` the increase rows of each part (`PARTS`) over
    the range, `steps` each part's per-step increase over the trailing window, per model version.

    A row per model with requests; a model with requests in several versions gets a total row
    (version `ALL_VERSIONS`) and a row per such version. Budget spent: bad / (allowed ratio ×
    requests × period / `seconds`), the range's request rate held over the whole period; a version's
    is its share of its model's budget."""
    allowed = float(slo.budget)
    bad, success, failure = (_per_version(totals[p]) for p in PARTS)
    valid = success.add(failure, fill_value=0.0)
    valid = valid[valid > 0]
    if valid.empty:
        return pd.DataFrame(columns=list(COLUMNS))
    versions = pd.DataFrame({"requests": valid, "bad": bad.reindex(valid.index, fill_value=0.0)})
    models = versions.groupby(level=c.LABEL_MODEL, sort=False).sum()
    count = versions.groupby(level=c.LABEL_MODEL, sort=False).size()
    expected = models["requests"] * slo.period_s / seconds
    per_bad = 1.0 / (allowed * expected)  # of the model's budget, for its versions too
    s_bad, s_success, s_failure = (_steps(steps[p]) for p in PARTS)
    s_valid = s_success.add(s_failure, fill_value=0.0)
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
    """The per-series increase rows of each part (`PARTS`) of `slo`: the report's request counters
    (read once, with labels job and reason) kept where the rules' matchers select them (`models`
    None: every model)."""

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


def slo_section(
    client: Any,
    spec: Spec,
    span: tuple[float, float, float],
    window: str,
    increases: Mapping[str, pd.DataFrame],
) -> SLOSection:
    """The section of `spec`'s SLOs over `span` (start, end, step): the totals from the report's
    per-series `increases` of the request counters (`slo_totals`), and from Prometheus (`client`,
    the report's `PrometheusClient`) each part's increase per model version over the trailing
    `window` (the charts' rate window) at each step, aggregated by Prometheus."""
    start, end, step = span
    kept, left_out = judged(spec)
    tables = []
    for slo in kept:
        totals = slo_totals(spec, slo, increases, _models(client, spec, slo, end, end - start))
        steps = {
            part: client.frame_range(step_expr(sel, window), start, end, step)
            for part, sel in slo_selectors(spec, slo).items()
        }
        tables.append(SLOTable(slo, slo_table(slo, totals, steps, end - start)))
    return SLOSection(tuple(tables), left_out, window, end - start, spec.source)


# -- presentation (render.py lays it out as Markdown, HTML and CSV) ----------------------------------
HEADERS = {
    "model": "model",
    "version": "version",
    "requests": "requests",
    "bad": "bad",
    "error_ratio": "error ratio",
    "budget_spent": "budget spent",
    "first_above": "first step above objective",
    "last_above": "last step above objective",
}


def _clock(ts: float) -> str:
    return (
        "–" if not math.isfinite(ts) else pd.Timestamp(ts, unit="s", tz="UTC").strftime("%Y-%m-%d %H:%M:%S")
    )


def _cell(column: str, value: Any) -> str:
    if column in ("model", "version"):
        return str(value) or "–"
    if column in ("first_above", "last_above"):
        return _clock(float(value))
    number = float(value)
    if not math.isfinite(number):
        return "–"
    if column in ("requests", "bad"):
        return f"{number:,.0f}"
    if column == "error_ratio":
        return f"{number * 100:.3g}%"
    return f"{number * 100:.3g}%"  # budget spent


def section_intro(section: SLOSection) -> list[str]:
    """The lines under the section's title: where the SLOs come from, what the columns assume."""
    lines = [
        f"SLOs of {section.source}; events as the alert rules count them (valid requests: successes and "
        "failures of the SLO's job and models; bad: failures with its bad reasons), per model.",
        f"Budget spent: bad / (allowed ratio × expected requests over the SLO's period), assuming the "
        f"request rate of these {section.seconds / 60:.1f} min holds over the whole period; a version's "
        "share is of its model's budget.",
        f"First and last step above objective: steps whose error ratio over the trailing {section.window} "
        f"is above the allowed ratio (errors began up to {section.window} before the first; ended before "
        "the last).",
    ]
    lines += [
        f"Left out: {s.name} ({s.type}): the section computes availability SLOs only."
        for s in section.left_out
    ]
    return lines


def slo_blocks(section: SLOSection) -> list[tuple[str, list[list[str]]]]:
    """(title, rows of cells under `HEADERS`) per SLO."""
    blocks = []
    for table in section.tables:
        slo = table.slo
        title = (
            f"{slo.name}: {slo.objective}% over {slo.period} ({slo.models.describe()}), "
            f"allowed error ratio {float(slo.budget) * 100:g}%"
        )
        rows = [[_cell(k, row[k]) for k in HEADERS] for row in table.rows.to_dict("records")]
        blocks.append((title, rows))
    return blocks


def slo_frame(section: SLOSection) -> pd.DataFrame:
    """Every SLO's rows in one frame (column ``slo`` first; step times as RFC 3339)."""
    frames = [
        table.rows.assign(
            first_above=table.rows["first_above"].map(_rfc3339),
            last_above=table.rows["last_above"].map(_rfc3339),
        ).assign(slo=table.slo.name, objective_percent=float(table.slo.objective), period=table.slo.period)
        for table in section.tables
    ]
    columns = ["slo", "objective_percent", "period", *COLUMNS]
    return pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)


def _rfc3339(ts: float) -> str:
    return (
        "" if not math.isfinite(ts) else pd.Timestamp(ts, unit="s", tz="UTC").strftime("%Y-%m-%dT%H:%M:%SZ")
    )
