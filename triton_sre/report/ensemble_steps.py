"""Pure: an ensemble's latency split read from its steps (reportens).

On the real Triton 2.51 an ensemble's own queue counter holds only the hand-off to its first step; its
steps' queue is in none of its stages, so its own split put it under "other" (docs/exporter.md,
"Ensembles: where the time goes"). The exporter computes each step's seconds per ensemble request by
stage (`exporter/ensembles.py`, `triton_sre_ensemble_step_seconds`); the report reads those figures
rather than computing them again: per row (model, or model version) and step and stage, the mean of the
series' samples in the range (the range query averages servers first). An ensemble's row then takes
its queue and compute shares of the steps' total, and names the step with the most queue seconds per
request (``queue_step``, ``queue_step_ms``). A row without the family (not an ensemble, an exporter
before it, no step served in the range) keeps its own counters' split.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from triton_sre import conventions as c
from triton_sre.report.increases import ROW, keyed

__all__ = ["STEP_COLUMNS", "step_split"]

STEP_COLUMNS = ("queue_share", "compute_share", "queue_step", "queue_step_ms")
_COMPUTE = (c.STAGE_COMPUTE_INPUT, c.STAGE_COMPUTE_INFER, c.STAGE_COMPUTE_OUTPUT)


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
