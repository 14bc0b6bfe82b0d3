"""Counter arithmetic shared by the exporter and the report: Prometheus' reset-aware increase
(without extrapolation) and the GPU total-vs-per-GPU fold, each defined once.

A leaf: numpy only, nothing of triton-sre. Pure.

- A counter's increase over consecutive observations counts a drop as a reset (the counter
  restarted from zero, as Prometheus' `increase()`); an observation that is NaN, infinite or
  negative is no observation and is skipped.
- On GPU models Triton splits every per-model family by reporter (core's
  backend_model_instance.cc and model.cc): each GPU instance reports its executions on a series
  with `gpu_uuid`, the model's own reporter (since 23.09; no `gpu_uuid`) what happens outside an
  instance (scheduler rejections, cache hits, the pending count), so its counters stay 0 on a busy
  GPU model. The series are disjoint: a model's figure is their sum. Where the uuid lookup fails
  (server #6815, #7479) both reporters share the one series without `gpu_uuid`.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping
from typing import TypeVar

import numpy as np

__all__ = ["fold_gpus", "increase", "observed", "reset_steps", "running_increase", "running_increases"]

K = TypeVar("K", bound=Hashable)
F = TypeVar("F", bound=Hashable)


def observed(values: np.ndarray) -> np.ndarray:
    """Which raw counter values are observations (finite and not negative; NaN is not)."""
    return (values >= 0.0) & (values < math.inf)


def reset_steps(previous: np.ndarray, values: np.ndarray) -> np.ndarray:
    """What each observation adds to the increase after `previous`: the difference, or the value
    itself where it dropped (a reset)."""
    return np.where(values >= previous, values - previous, values)


def increase(values: Iterable[float] | np.ndarray) -> float:
    """Sum of a counter's increases over its consecutive observations (in order, left to right,
    so the float result equals a running total's)."""
    return running_increase(values)[0]


def running_increase(
    values: Iterable[float] | np.ndarray, total: float = 0.0, last: float | None = None
) -> tuple[float, float | None]:
    """`increase` carried on over the next values of the same counter: (total, last observation),
    from the (total, last) of the values before. Read in slices, a counter's increase is the whole
    series', to the last bit (the same additions in the same order)."""
    raw = values if isinstance(values, np.ndarray) else np.fromiter(values, dtype=np.float64)
    kept = raw[observed(raw)]
    if last is not None:
        kept = np.concatenate(([last], kept))
    if len(kept) < 2:
        return total, (float(kept[-1]) if len(kept) else last)
    steps = reset_steps(kept[:-1], kept[1:])
    summed = np.cumsum(np.concatenate(([total], steps)) if total else steps)[-1]
    return float(summed), float(kept[-1])


def running_increases(
    block: np.ndarray, totals: np.ndarray, lasts: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """`running_increase` of many counters at once: row i of `block` holds the next values of counter
    i, every one an observation (`observed`), after its (totals[i], lasts[i]); `lasts` None when no
    counter has had an observation yet (then every total is 0). The same floats as row by row: each
    row's additions in the same order (`np.cumsum` along a row adds left to right)."""
    if lasts is not None:
        block = np.concatenate((lasts[:, None], block), axis=1)
    if block.shape[1] < 2:
        return totals, block[:, -1]
    steps = reset_steps(block[:, :-1], block[:, 1:])
    if lasts is not None:  # a total of 0 is not added (as running_increase: 0.0 + -0.0 is 0.0)
        steps[:, 0] = np.where(totals == 0.0, steps[:, 0], totals + steps[:, 0])
    return np.cumsum(steps, axis=1)[:, -1], block[:, -1]


def fold_gpus(
    totals: Mapping[K, Mapping[F, float]], per_gpu: Iterable[tuple[K, Mapping[F, float]]]
) -> dict[K, dict[F, float]]:
    """Per key and field: the series without `gpu_uuid` plus the sum of the per-GPU ones (these
    added in the order given, then to the former: the exporter's replay adds in the same order).
    Disjoint, see the module docstring. `per_gpu` holds one (key, values) pair per GPU series set."""
    summed: dict[K, dict[F, float]] = {}
    for key, gpu_values in per_gpu:
        into = summed.setdefault(key, {})
        for name, value in gpu_values.items():
            into[name] = into.get(name, 0.0) + value
    out = {key: dict(values) for key, values in totals.items()}
    for key, gpu_values in summed.items():
        row = out.setdefault(key, {})
        for name, value in gpu_values.items():
            row[name] = row.get(name, 0.0) + value
    return out
