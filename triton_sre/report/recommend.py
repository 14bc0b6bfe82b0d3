"""Pure: recommendations from the per-model table, each with the number and the threshold behind it.

Thresholds default to the operational settings of ``slos.yaml`` where one exists (the batching
ratio below which batching is ineffective, the request rate below which a model is too quiet to
judge, the queue share of a latency SLO) and to the constants below otherwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

__all__ = [
    "REC_ADD_INSTANCES",
    "REC_ENABLE_BATCHING",
    "REC_LOWER_QUEUE_DELAY",
    "REC_RAISE_QUEUE_DELAY",
    "REC_REDUCE_IDLE",
    "Recommendation",
    "Thresholds",
    "recommend",
]

REC_ENABLE_BATCHING = "enable-dynamic-batching"
REC_RAISE_QUEUE_DELAY = "raise-queue-delay"
REC_LOWER_QUEUE_DELAY = "lower-queue-delay"
REC_ADD_INSTANCES = "add-instances"
REC_REDUCE_IDLE = "reduce-idle-capacity"


@dataclass(frozen=True)
class Thresholds:
    min_request_rate: float = 0.1
    """requests/s below which a model is too quiet for batching or queue advice (slos.yaml)."""
    batching_ratio_max: float = 1.1
    """inferences per execution below which batching does nothing (slos.yaml)."""
    queue_share_batch: float = 0.2
    """share of request time queueing from which an unbatched model would gain from batching."""
    queue_share_high: float = 0.5
    """share of request time queueing that calls for capacity (a latency SLO's queue_time_share)."""
    queue_share_low: float = 0.05
    """share of request time queueing under which the batcher may wait longer."""
    fill_low: float = 0.25
    """batch fill (batching ratio / max_batch_size) under which batches are mostly empty."""
    fill_full: float = 0.8
    """batch fill from which batches are full: more batching cannot absorb more load."""
    idle_fraction_high: float = 0.5
    """share of the server's cost that bought idle time."""


@dataclass(frozen=True)
class Recommendation:
    model: str | None
    id: str
    action: str
    metric: str
    value: float
    comparison: str
    threshold: float
    why: str

    def as_dict(self) -> dict[str, object]:
        return {
            "model": self.model,
            "id": self.id,
            "action": self.action,
            "metric": self.metric,
            "value": self.value,
            "comparison": self.comparison,
            "threshold": self.threshold,
            "why": self.why,
        }


def _num(value: object) -> float | None:
    try:
        f = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def _pct(x: float) -> str:
    return f"{x * 100:.0f}%"


def recommend(
    table: pd.DataFrame, idle_fraction: float | None, thresholds: Thresholds | None = None
) -> list[Recommendation]:
    t = thresholds or Thresholds()
    out: list[Recommendation] = []
    for row in table.to_dict("records"):
        model = str(row["model"])
        rate = _num(row["requests_per_s"]) or 0.0
        if rate < t.min_request_rate:
            continue
        ratio, mbs, fill = _num(row["batching_ratio"]), _num(row["max_batch_size"]), _num(row["batch_fill"])
        queue = _num(row["queue_share"])
        if ratio is None or queue is None:
            continue
        can_batch = mbs is not None and mbs > 1
        waiting_for_batches = (
            can_batch and fill is not None and queue >= t.queue_share_high and fill < t.fill_full
        )
        if waiting_for_batches:
            assert fill is not None
            out.append(
                Recommendation(
                    model,
                    REC_LOWER_QUEUE_DELAY,
                    "lower max_queue_delay_microseconds: requests wait for batches that do not fill",
                    "queue_share",
                    queue,
                    ">=",
                    t.queue_share_high,
                    f"{_pct(queue)} of request time is queueing while batches are only {_pct(fill)} full "
                    f"(< {_pct(t.fill_full)})",
                )
            )
        elif queue >= t.queue_share_high:
            out.append(
                Recommendation(
                    model,
                    REC_ADD_INSTANCES,
                    "raise the instance_group count (or add servers): requests queue for a busy instance",
                    "queue_share",
                    queue,
                    ">=",
                    t.queue_share_high,
                    f"{_pct(queue)} of request time is queueing"
                    + (
                        f" with batches {_pct(fill)} full"
                        if fill is not None
                        else " and the model cannot batch"
                    ),
                )
            )
        elif can_batch and ratio < t.batching_ratio_max and queue >= t.queue_share_batch:
            out.append(
                Recommendation(
                    model,
                    REC_ENABLE_BATCHING,
                    "enable dynamic_batching: requests wait for the instance but run one by one",
                    "batching_ratio",
                    ratio,
                    "<",
                    t.batching_ratio_max,
                    f"{ratio:.2f} inferences per execution while {_pct(queue)} of request time is "
                    f"queueing (>= {_pct(t.queue_share_batch)})",
                )
            )
        elif can_batch and fill is not None and fill < t.fill_low and queue < t.queue_share_low:
            out.append(
                Recommendation(
                    model,
                    REC_RAISE_QUEUE_DELAY,
                    "raise max_queue_delay_microseconds a little: batches are mostly empty",
                    "batch_fill",
                    fill,
                    "<",
                    t.fill_low,
                    f"batches are {_pct(fill)} full (max_batch_size {mbs:.0f}) and requests queue only "
                    f"{_pct(queue)} of their time (< {_pct(t.queue_share_low)}): the batcher can wait longer",
                )
            )
    if idle_fraction is not None and idle_fraction >= t.idle_fraction_high:
        out.append(
            Recommendation(
                None,
                REC_REDUCE_IDLE,
                "consolidate models, lower instance counts or use a smaller host",
                "idle_fraction",
                idle_fraction,
                ">=",
                t.idle_fraction_high,
                f"{_pct(idle_fraction)} of the server's cost paid for idle execution capacity",
            )
        )
    return out
