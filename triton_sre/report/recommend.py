"""Pure: recommendations from the per-model table, each with the number and the threshold behind it.

Thresholds default to the operational settings of ``slos.yaml`` where one exists (the batching
ratio below which batching is ineffective, the request rate below which a model is too quiet to
judge, the queue share of a latency SLO) and to the constants below otherwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import partial

import pandas as pd

from triton_sre.report.figures import ALL_VERSIONS

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
    version: str | None = None
    """The version the recommendation holds for, when it holds for some of the model's versions only."""

    @property
    def subject(self) -> str | None:
        """The model (and version) named: "ranker v2", "ranker"; None for the server."""
        if self.model is None:
            return None
        return f"{self.model} v{self.version}" if self.version else self.model

    def as_dict(self) -> dict[str, object]:
        return {
            "model": self.model,
            "version": self.version,
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


_UNSAID = "(the exporter did not say whether the model has a dynamic batcher)"


def _batcher(row: dict[str, object]) -> bool | None:
    """Whether the model's config enables dynamic_batching (the exporter's gauge); None when unknown."""
    on = _num(row.get("dynamic_batching"))
    return None if on is None else on > 0


def _judged(row: dict[str, object], t: Thresholds) -> Recommendation | None:
    """The recommendation one table row calls for, if any (None too when the row is too quiet).
    Batching advice goes to a model that can batch (max_batch_size > 1) only: enabling the dynamic
    batcher where it is off, its queue delay where it is on; where the exporter did not say
    (an older exporter), the advice says what it assumes."""
    rate = _num(row["requests_per_s"]) or 0.0
    if rate < t.min_request_rate:
        return None
    mbs, queue = _num(row["max_batch_size"]), _num(row["queue_share"])
    ratio, lowered = _success_ratio(row)
    if ratio is None or queue is None:
        return None
    can_batch = mbs is not None and mbs > 1
    batcher = _batcher(row)
    fill = _num(row["batch_fill"])
    if lowered and can_batch and mbs is not None:
        fill = ratio / mbs  # the successful requests' batches
    version = str(row.get("version") or "")
    rec = partial(Recommendation, str(row["model"]), version=None if version == ALL_VERSIONS else version)
    unbatched = can_batch and batcher is not True and ratio < t.batching_ratio_max
    if unbatched and batcher is False and queue >= t.queue_share_batch:
        return _enable(rec, ratio, queue, t, lowered, "")
    delay = can_batch and batcher is not False and fill is not None  # the batcher's delay to judge
    now_ms = _num(row.get("max_queue_delay_ms"))
    now = "" if now_ms is None else f" (now {now_ms:g} ms)"
    lowerable = now_ms is None or now_ms > 0  # a delay of 0 has nothing to lower: capacity, below
    if delay and lowerable and fill is not None and queue >= t.queue_share_high and fill < t.fill_full:
        return rec(
            REC_LOWER_QUEUE_DELAY,
            f"lower max_queue_delay_microseconds{now}"
            + ("" if batcher else f", or enable dynamic_batching if it is off {_UNSAID}")
            + ": requests wait for batches that do not fill",
            "queue_share",
            queue,
            ">=",
            t.queue_share_high,
            f"{_pct(queue)} of request time is queueing while batches are only {_pct(fill)} full "
            f"(< {_pct(t.fill_full)}){lowered}",
        )
    if queue >= t.queue_share_high:
        return rec(
            REC_ADD_INSTANCES,
            "raise the instance_group count (or add servers): requests queue for a busy instance",
            "queue_share",
            queue,
            ">=",
            t.queue_share_high,
            f"{_pct(queue)} of request time is queueing" + _batching_state(mbs, fill, lowered),
        )
    if unbatched and queue >= t.queue_share_batch:
        return _enable(rec, ratio, queue, t, lowered, f" if it is off {_UNSAID}")
    if delay and fill is not None and fill < t.fill_low and queue < t.queue_share_low:
        return rec(
            REC_RAISE_QUEUE_DELAY,
            f"raise max_queue_delay_microseconds{now} a little"
            + ("" if batcher else f" if dynamic_batching is on {_UNSAID}")
            + ": batches are mostly empty",
            "batch_fill",
            fill,
            "<",
            t.fill_low,
            f"batches are {_pct(fill)} full (max_batch_size {mbs:.0f}) and requests queue only "
            f"{_pct(queue)} of their time (< {_pct(t.queue_share_low)}): the batcher can wait "
            f"longer{lowered}",
        )
    return None


def _enable(
    rec: partial[Recommendation], ratio: float, queue: float, t: Thresholds, lowered: str, unsure: str
) -> Recommendation:
    return rec(
        REC_ENABLE_BATCHING,
        f"enable dynamic_batching{unsure}: requests wait for the instance but run one by one",
        "batching_ratio",
        ratio,
        "<",
        t.batching_ratio_max,
        f"{ratio:.2f} inferences per execution while {_pct(queue)} of request time is "
        f"queueing (>= {_pct(t.queue_share_batch)}){lowered}",
    )


def _batching_state(mbs: float | None, fill: float | None, lowered: str) -> str:
    """What the add-instances advice says of the model's batching."""
    if mbs is not None and mbs <= 1:
        return f" and the model cannot batch (max_batch_size {mbs:.0f}): no batching advice applies"
    if fill is not None:
        return f" with batches {_pct(fill)} full{lowered}"
    return " (the model's max_batch_size is not known: its batching was not judged)"


def _success_ratio(row: dict[str, object]) -> tuple[float | None, str]:
    """The batching ratio the advice judges, and what to say of it. Triton counts a failed batch as
    an execution but its requests not as inferences (core's UpdateSuccess vs UpdateInferBatchStats),
    so failed requests lower the measured ratio, and the metrics have no count of failed executions.
    Each execution that succeeded for none of its requests held at least one failed request that
    executed, so the successful requests' executions number at least executions - executed failures:
    their ratio is at most inferences / (executions - executed failures), the figure judged (None when
    those failures reach executions: nothing is known of how the successful requests batched). A
    failure whose `reason` (Triton 24.07+) is REJECTED, CANCELED (released from the queue) or OTHER
    (failed before the backend ran, or an ensemble's) counted no execution
    (`FAILURE_REASONS_NEVER_EXECUTED`, from core's sources): it lowers nothing, and a row whose
    failures are all such is judged on its measured ratio."""
    measured = _num(row["batching_ratio"])
    failures = _num(row.get("failures")) or 0.0
    never = _num(row.get("failures_never_executed")) or 0.0
    executed = failures - never
    if measured is None or executed <= 0:
        return measured, ""
    inferences, executions = _num(row.get("inferences")), _num(row.get("executions"))
    if inferences is None or executions is None or executions <= executed:
        return None, ""
    bound = inferences / (executions - executed)
    others = f"; {never:,.0f} more failed before any execution (rejected, cancelled, OTHER)" if never else ""
    return bound, (
        f"; the ratio judged is that of the successful requests' executions, at most {bound:.2f} "
        f"(measured {measured:.2f}, lowered by {executed:,.0f} failed requests: Triton counts a failed "
        f"batch as an execution, its requests not as inferences{others})"
    )


def _per_model(rows: list[dict[str, object]], t: Thresholds) -> list[Recommendation]:
    """A model's recommendations. A model served in several versions (a total row, `ALL_VERSIONS`,
    and a row per version) is judged per version: a recommendation every judged version and the total
    call for stays the model's; one that holds for some versions only names each of them. When no
    version has traffic enough to be judged alone, the total is judged as the model."""
    total = [r for r in rows if r.get("version") == ALL_VERSIONS]
    versions = [r for r in rows if r.get("version") != ALL_VERSIONS]
    if not total:  # one row, the model's (its one version's): the model is named
        return [replace(rec, version=None) for rec in map(partial(_judged, t=t), rows) if rec is not None]
    judged = [r for r in versions if (_num(r["requests_per_s"]) or 0.0) >= t.min_request_rate]
    whole = _judged(total[0], t)
    if not judged:
        return [whole] if whole is not None else []
    each = [_judged(r, t) for r in judged]
    ids = {rec.id if rec is not None else None for rec in each}
    if whole is not None and ids == {whole.id}:
        return [whole]
    return [rec for rec in each if rec is not None]


def recommend(
    table: pd.DataFrame, idle_fraction: float | None, thresholds: Thresholds | None = None
) -> list[Recommendation]:
    """Recommendations from the models table (`figures.model_table`: a model's total row and its
    versions' rows included), in the table's order of models, then the server's."""
    t = thresholds or Thresholds()
    out: list[Recommendation] = []
    models: dict[str, list[dict[str, object]]] = {}
    for row in table.to_dict("records"):
        models.setdefault(str(row["model"]), []).append(row)
    for rows in models.values():
        out += _per_model(rows, t)
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
