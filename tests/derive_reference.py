"""Plain reference versions of what the exporter now computes on arrays or over compact totals:
the tests compare the product code with these, value for value."""

from __future__ import annotations

import math
from collections.abc import Sequence

from triton_sre import conventions as c
from triton_sre.exporter.snapshot import Snapshot


def select_window(snapshots: Sequence[Snapshot], window: float, slack: float = 0.0) -> list[Snapshot]:
    """The snapshots within `window` seconds of the newest (plus `slack` for poll jitter): what the
    service kept before `exporter/window.py` stored running totals instead."""
    if not snapshots:
        return []
    start = snapshots[-1].taken_at - window - slack
    return [s for s in snapshots if s.taken_at >= start]


def stage_split(deltas: dict[str, float], request_us: float, success: float) -> tuple[dict, dict] | None:
    """The one-row reference `stage_splits` must equal: seconds per successful request in each
    stage and each stage's share, written the plain way.

    `deltas` maps stage -> Δ duration in µs for the four measured stages; `other` is what the
    request duration leaves over, floored at 0. None when no request succeeded, or when a stage or
    the request duration is NaN: a family Triton did not export cannot be split (not a 0 share).
    """
    if not success > 0 or any(math.isnan(v) for v in (*deltas.values(), request_us)):
        return None
    seconds = {stage: max(0.0, deltas.get(stage, 0.0)) / 1e6 / success for stage in c.STAGE_COUNTERS}
    seconds[c.STAGE_OTHER] = max(0.0, request_us / 1e6 / success - sum(seconds.values()))
    total = sum(seconds.values())
    if not all(0.0 <= v < math.inf for v in seconds.values()) or not total < math.inf:
        return None  # a tiny success count or huge durations: nothing meaningful to export
    fractions = {stage: (min(1.0, value / total) if total > 0 else 0.0) for stage, value in seconds.items()}
    return seconds, fractions
