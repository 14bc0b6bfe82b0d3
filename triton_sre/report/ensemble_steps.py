"""Pure: an ensemble's latency split read from its steps (reportens, reportsplit).

On the real Triton 2.51 an ensemble's own queue counter holds only the hand-off to its first step; its
steps' queue is in none of its stages, so its own split put it under "other" (docs/exporter.md,
"Ensembles: where the time goes"). The exporter computes each step's seconds per ensemble request by
stage (`exporter/ensembles.py`, `triton_sre_ensemble_step_seconds`); the report reads those figures
rather than computing them again: per row (model, or model version) and step and stage, the mean of the
series' samples in the range (the range query averages servers first). An ensemble's row then takes
its queue and compute shares of the steps' total, and names the step with the most queue seconds per
request (``queue_step``, ``queue_step_ms``). A row without the family (not an ensemble, an exporter
before it, no step served in the range) keeps its own counters' split.

That mean is of time, not of requests: the exporter's window (60 s) holds less of the load in a
range's first samples. So where the exporter writes its steps (`M_ENSEMBLE_STEP_CALLS`, from the
config's ``ensemble_scheduling``) the split is the steps' own counters over the range instead
(`counter_split`), combined as Triton's ensemble scheduler sends them requests: one step request per
ensemble request per time the step is named. Per step, its seconds per successful request in each
stage (its increases over the range); the ensemble's, their sum weighted by those times. The time
average stays only for a row whose steps' counters are missing, and ``split_from`` says which.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from triton_sre import conventions as c
from triton_sre.report.increases import ROW, keyed, row_key, split_key

__all__ = [
    "COMPUTE_COUNTERS",
    "SPLIT_COUNTERS",
    "STEP_COLUMNS",
    "STEP_COUNTERS",
    "counter_split",
    "step_split",
    "time_average",
]

STEP_COLUMNS = ("queue_share", "compute_share", "queue_step", "queue_step_ms")
_COMPUTE = (c.STAGE_COMPUTE_INPUT, c.STAGE_COMPUTE_INFER, c.STAGE_COMPUTE_OUTPUT)
COMPUTE_COUNTERS = (
    c.NV_COMPUTE_INPUT_DURATION_US,
    c.NV_COMPUTE_INFER_DURATION_US,
    c.NV_COMPUTE_OUTPUT_DURATION_US,
)
"""Triton's compute counters: a request's compute share is theirs over its duration."""
STEP_COUNTERS = (c.NV_REQUEST_SUCCESS, c.NV_REQUEST_DURATION_US, c.NV_QUEUE_DURATION_US, *COMPUTE_COUNTERS)
"""The counters `counter_split` reads per step model version (their increases over the range)."""
SPLIT_COUNTERS = "steps' counters"
"""Column ``split_from`` of an ensemble's row split by its steps' counters, weighted by requests."""


def time_average(why: str) -> str:
    """Column ``split_from`` of an ensemble's row split by the exporter's samples, and `why`."""
    return f"time average ({why})"


def step_split(frame: pd.DataFrame, versions: bool) -> pd.DataFrame:
    """`STEP_COLUMNS` per `ROW` (`versions`: per model version) of each ensemble in `frame`, the range
    query of `M_ENSEMBLE_STEP_SECONDS`; empty when it holds none."""
    frame = keyed(frame, versions)
    needed = (ROW, c.L_STEP, c.L_STAGE)
    if frame.empty or any(col not in frame.columns for col in needed):
        return pd.DataFrame(columns=list(STEP_COLUMNS))
    # the client's labels are categorical: plain strings, so a row's "no step" can be written
    labels = {col: frame[col].astype(object).astype(str) for col in (c.L_STEP, c.L_STAGE)}
    frame = frame.assign(**labels)[np.isfinite(frame["value"])]
    seconds = frame.groupby(list(needed))["value"].mean().unstack(c.L_STAGE, fill_value=0.0)
    seconds = seconds.reindex(columns=list(c.STAGES), fill_value=0.0)
    total = seconds.sum(axis=1).groupby(level=0).sum()
    queue = seconds[c.STAGE_QUEUE].unstack(c.L_STEP, fill_value=0.0)
    compute = seconds[list(_COMPUTE)].sum(axis=1).groupby(level=0).sum()
    out = pd.DataFrame(index=total.index)
    out["queue_share"] = queue.sum(axis=1).div(total.where(total > 0))
    out["compute_share"] = compute.div(total.where(total > 0))
    most = queue.max(axis=1)
    out["queue_step"] = queue.idxmax(axis=1).where(most > 0, "")
    out["queue_step_ms"] = (most * 1000.0).where(most > 0)
    return out


def _latest(calls: pd.DataFrame) -> pd.DataFrame:
    """The calls gauge's series of each ensemble's config at the range's end (a config reloaded in the
    range leaves series of its former steps, older), with plain-string labels."""
    needed = (c.LABEL_MODEL, c.L_STEP, c.L_STEP_VERSION)
    if calls.empty or any(col not in calls.columns for col in needed):
        return pd.DataFrame(columns=[*needed, "value"])
    calls = calls[np.isfinite(calls["value"]) & (calls["value"] > 0)]
    calls = calls.assign(**{col: calls[col].astype(object).astype(str) for col in needed})
    newest = calls.groupby(c.LABEL_MODEL)["timestamp"].transform("max")
    latest = calls[calls["timestamp"] == newest]
    return latest.groupby(list(needed), as_index=False)["value"].max()


def _step_row(step: str, version: str, success: pd.Series, latest: dict[str, int]) -> str | None:
    """The per-version key of the step an ensemble calls: the version its config names, else (-1) the
    highest numeric version with successful requests in the range (`latest`), as Triton sends to the
    latest."""
    if version != "-1":
        key = row_key(step, version)
        return key if success.get(key, 0.0) > 0 else None
    return row_key(step, str(latest[step])) if step in latest else None


def _latest_versions(success: pd.Series) -> dict[str, int]:
    """Model -> its highest numeric version with successful requests (`success` per version row)."""
    latest: dict[str, int] = {}
    for key, count in success.items():
        model, version = split_key(str(key))
        if count > 0 and version.isdigit():
            latest[model] = max(latest.get(model, -1), int(version))
    return latest


def _prefixes(model: str) -> list[str]:
    """What a step's row name may carry before the step's name, as the ensemble's row `model` does: its
    `<cluster>/<namespace>::` (report/namespaces.py: each added only where needed), its cluster's, none."""
    whole = model[: model.rfind("::") + 2] if "::" in model else model[: model.rfind("/") + 1]
    return list(dict.fromkeys((whole, model[: model.find("/") + 1], "")))


def _per_request(
    steps: pd.DataFrame, counters: dict[str, pd.Series], prefixes: list[str], latest: dict[str, int]
) -> tuple[dict[str, float], dict[str, float], dict[str, float]]:
    """Per ensemble request: queue µs per step, and compute and total (request) µs of all: each step's
    increases per successful request of it, times the times the ensemble names it; and the steps whose
    row has no successful request in the range."""
    success = counters.get(c.NV_REQUEST_SUCCESS, pd.Series(dtype=float))
    queue: dict[str, float] = {}
    spent = {"compute": 0.0, "total": 0.0}
    missing: dict[str, float] = {}
    for step, version, times in zip(steps[c.L_STEP], steps[c.L_STEP_VERSION], steps["value"], strict=True):
        key = next((k for p in prefixes if (k := _step_row(p + step, version, success, latest))), None)
        if key is None:
            missing[step] = times
            continue

        def per(family: str, key: str = key, times: float = times) -> float:
            return float(counters.get(family, pd.Series(dtype=float)).get(key, 0.0)) * times / success[key]

        queue[step] = queue.get(step, 0.0) + per(c.NV_QUEUE_DURATION_US)
        spent["compute"] += sum(per(family) for family in COMPUTE_COUNTERS)
        spent["total"] += per(c.NV_REQUEST_DURATION_US)
    return queue, spent, missing


def counter_split(
    calls: pd.DataFrame, counters: dict[str, pd.Series], index: pd.Index, versions: bool
) -> pd.DataFrame:
    """`STEP_COLUMNS` and ``split_from`` per row of `index` (model rows, or `versions` rows) of each
    ensemble in `calls` (`M_ENSEMBLE_STEP_CALLS`, one sample per series), from its steps' `counters`
    (`STEP_COUNTERS`' increases per model version, keyed as `keyed(..., True)`). A row whose step has
    no successful request in the range gets ``split_from`` only (``time_average`` naming the step)."""
    out = pd.DataFrame(index=index, columns=[*STEP_COLUMNS, "split_from"], dtype=object)
    latest = _latest_versions(counters.get(c.NV_REQUEST_SUCCESS, pd.Series(dtype=float)))
    rows_of: dict[str, list[str]] = {}
    for key in index:
        rows_of.setdefault(split_key(key)[0] if versions else key, []).append(key)
    for model, steps in _latest(calls).groupby(c.LABEL_MODEL):
        rows = rows_of.get(str(model))
        if not rows:
            continue
        queue, spent, missing = _per_request(steps, counters, _prefixes(str(model)), latest)
        if missing or spent["total"] <= 0:
            why = f"no request of {', '.join(sorted(missing))} counted" if missing else "no step time"
            out.loc[rows, "split_from"] = time_average(why)
            continue
        most = max(sorted(queue), key=queue.__getitem__)
        out.loc[rows, "queue_share"] = sum(queue.values()) / spent["total"]
        out.loc[rows, "compute_share"] = spent["compute"] / spent["total"]
        out.loc[rows, "queue_step"] = most if queue[most] > 0 else ""
        out.loc[rows, "queue_step_ms"] = queue[most] / 1000.0 if queue[most] > 0 else np.nan
        out.loc[rows, "split_from"] = SPLIT_COUNTERS
    return out
