"""The Prometheus client's part without I/O (leaf, pure): its errors, the shape a range answer's series
must have, and the range arithmetic in Prometheus' own milliseconds.

`range_slices` is the one splitter of a range longer than Prometheus answers at once
(PROMETHEUS_MAX_POINTS points per series) into range queries: `Prometheus.query_range` (hence
`range`, the rollout check and the bot's chart) and the report's bounded reads use it. `check_series`
and `series_points` are the two readings of a series (exact in Python, or by numpy in one pass) that
`prom.py` reads a range answer with. Imports only the leaf `redact` (numpy when `series_points` runs).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from triton_sre.redact import bounded, redact

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "MAX_QUERY_CHARS",
    "PROMETHEUS_MAX_POINTS",
    "PromBudgetError",
    "PromError",
    "PromQueryTimeout",
    "check_labels",
    "check_series",
    "finest_step",
    "json_kind",
    "malformed",
    "range_points",
    "range_slices",
    "series_points",
    "step_param",
]

MAX_QUERY_CHARS = 200  # of the query it names (rollout's run to 700 characters)
PROMETHEUS_MAX_POINTS = 11_000
"""Prometheus refuses a range query of more points per series than this ("exceeded maximum
resolution of 11,000 points per timeseries"): a longer range is read in slices (`range_slices`)."""


class PromError(RuntimeError):
    """Prometheus could not be reached or refused a query (the message carries no credential)."""

    def __init__(self, message: str) -> None:
        super().__init__(redact(message))


class PromBudgetError(PromError):
    """The client's `budget` (every query together) ran out: the queries made so far were answered,
    the rest cannot be (`rollout check --deadline` shows what it read)."""


class PromQueryTimeout(PromError):
    """Prometheus gave up evaluating a query at its own `--query.timeout` (API `errorType` `timeout`,
    HTTP 503): it was reached and answered; the query was too costly for its limit."""


def query_timeout_message(query: str, limit: str | None, said: str) -> str:
    """What a user reads of a query Prometheus timed out on: which query, after what, what to do."""
    after = f"after its --query.timeout of {limit}" if limit else "after its --query.timeout"
    return (
        f"Prometheus timed out evaluating {query} {after}; narrow the range or raise --query.timeout "
        f"(Prometheus said: {said})"
    )


def json_kind(value: Any) -> str:
    """JSON's own name of a decoded value's type (`null`, `array`), for messages."""
    kinds = ((bool, "boolean"), (int | float, "number"), (str, "string"), (list, "array"), (dict, "object"))
    return next((name for kind, name in kinds if isinstance(value, kind)), "null")


def malformed(expr: str, what: str) -> PromError:
    return PromError(f"{bounded(expr, MAX_QUERY_CHARS)}: unexpected answer from Prometheus: {what}")


def check_labels(expr: str, metric: dict[Any, Any]) -> dict[str, str]:
    """`metric` when every label name and value in it is text, as Prometheus writes them; PromError naming
    the first that is not (a proxy's or another store's answer: a number, null, a list)."""
    for name, value in metric.items():
        if not isinstance(name, str) or not isinstance(value, str):
            raise malformed(expr, f"label {str(name)[:40]!r} is a JSON {json_kind(value)}, not a string")
    return metric


def check_series(expr: str, series: Any) -> None:
    """PromError unless `series` is ``{"metric": {...}, "values": [[time, value], ...]}`` of numbers, its
    labels text."""
    values = series.get("values") if isinstance(series, dict) else None
    if not isinstance(values, list) or not isinstance(series.get("metric"), dict):
        raise malformed(expr, f"a series is not {{metric, values}}: {str(series)[:80]}")
    check_labels(expr, series["metric"])
    for point in values:
        if not isinstance(point, list | tuple) or len(point) != 2:
            raise malformed(expr, f"a sample is not [time, value]: {str(point)[:80]}")
        for part, what in ((point[0], "time"), (point[1], "value")):
            try:
                float(part)
            except (TypeError, ValueError):
                raise malformed(expr, f"a sample {what} that is not a number: {str(part)[:80]!r}") from None


def series_points(series: Any) -> np.ndarray | None:
    """A series' values as an (n, 2) float array when numpy reads them as `check_series` would
    accept them; None when unsure (a NaN may be a JSON null, which the check refuses)."""
    import numpy as np  # (the report's reads only: the bot and doctor do not load numpy for this)

    values = series.get("values") if isinstance(series, dict) else None
    if not isinstance(values, list) or not isinstance(series.get("metric"), dict):
        return None
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in series["metric"].items()):
        return None
    try:
        points = np.array(values, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    if not values:
        return points.reshape(0, 2)
    if points.ndim != 2 or points.shape[1] != 2 or np.isnan(points).any():
        return None
    return points


def step_param(step: float) -> str:
    """`step` as sent to Prometheus: exact to well below a millisecond (`:g` kept 6 digits: 1234.5678 was
    sent as 1234.57), and as short as `:g` for the usual steps (15 -> "15", 0.1 -> "0.1")."""
    return f"{step:.15g}"


def _millis(seconds: float) -> int:
    """The millisecond Prometheus reads a time sent as ``f"{seconds:.3f}"`` as (its times are
    milliseconds: a range query evaluates at start, start + step, ... <= end, all in ms)."""
    return round(float(f"{seconds:.3f}") * 1000)


def _step_millis(step: float) -> int:
    """The step Prometheus evaluates at, in ms: it reads the seconds sent as a Go Duration (truncated
    to the nanosecond), then truncates that to the millisecond."""
    return int(float(step_param(step)) * 1e9) // 1_000_000


def range_points(start: float, end: float, step: float) -> int:
    """How many points per series Prometheus evaluates for [start, end] at `step` (0 when end < start)."""
    first, last, every = _millis(start), _millis(end), _step_millis(step)
    if every < 1:
        raise PromError(f"step {step:g}s: Prometheus evaluates a range at steps of at least 1 ms")
    return (last - first) // every + 1 if last >= first else 0


def finest_step(seconds: float, max_points: int) -> float:
    """The finest step (seconds, rounded up to the millisecond, at least 1 ms) at which a range of
    `seconds` has at most `max_points` points per series: a reader's own budget, checked before it asks."""
    return max(0.001, math.ceil(seconds / (max_points - 1) * 1000) / 1000)


def range_slices(
    start: float, end: float, step: float, points: int | Callable[[], int] = PROMETHEUS_MAX_POINTS
) -> Iterator[tuple[float, float]]:
    """(start, end) of each range query that together read [start, end] at `step`: every point Prometheus
    evaluates for the whole range in exactly one slice, in order. A slice has at most `points` points
    (a callable is asked before each slice: the report sizes its next slice from the series it has seen)
    and never more than PROMETHEUS_MAX_POINTS. Pure: no I/O.

    The seams are computed in Prometheus' own milliseconds: a slice starts on its first point and ends
    half a step after its last (the last slice where the range ends; one slice is the range as given), so
    neither the millisecond rounding of the query's times nor a server counting the points in floats can
    lose or double one."""
    first, last, every = _millis(start), _millis(end), _step_millis(step)
    total = range_points(start, end, step)
    done = 0
    while done < total:
        size = points() if callable(points) else points
        count = min(max(1, size), PROMETHEUS_MAX_POINTS, total - done)
        at = first + done * every
        done += count
        until = last if done == total else at + (count - 1) * every + every // 2
        yield at / 1000, until / 1000
