"""Pure: a range answer's samples of one series put in time order, one sample per time.

Prometheus answers each series' samples in increasing time, one per step. A proxy or store in front of
it (a query frontend joining split ranges, a layer merging two replicas' answers without
deduplication) can answer them out of order or give one time twice. Read as they came, counter
figures took every step back for a reset: a reversed series made a steady 10 req/s 1,982 req/s in the
report, and a time given twice with the replicas' slightly different values 15,000 req/s. Here the
samples are sorted by time (stable) and, of a time given twice, the first is kept (as the exporter keeps
the first of a repeated series). A repeat with another value is a conflict: which source is right is not
known, so the caller says its figures may rest on partial data.

Leaf: numpy only where the caller already holds numpy arrays (the report); lists otherwise (the
rollout check and the bot do not load numpy for this).
"""

from __future__ import annotations

import math
from itertools import islice
from operator import itemgetter, lt
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

__all__ = ["CONFLICT", "REORDERED", "ordered_arrays", "ordered_points"]

REORDERED = (
    "samples of a series came out of time order or one time twice (a proxy or store in front of "
    "Prometheus?): read in time order, one sample per time"
)
"""Said as an info: the figures are whole, read as Prometheus would have answered them."""
CONFLICT = (
    "samples of a series came twice for one time with different values (two sources merged without "
    "deduplication?): the first of each time was read"
)
"""Said as a warning: the figures rest on one of the sources, not known to be the right one."""


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def ordered_points(values: list[Any]) -> tuple[list[Any], str | None]:
    """A series' ``[time, value]`` points (already checked as numbers) in time order, one per time, and
    what was done: None (already so, the list itself returned), REORDERED or CONFLICT."""
    stamps = list(map(float, map(itemgetter(0), values)))
    if all(map(lt, stamps, islice(stamps, 1, None))):  # (0.4 s for a million points)
        return values, None
    kept: list[Any] = []
    said = REORDERED
    last_stamp = last_value = math.nan
    for i in sorted(range(len(values)), key=stamps.__getitem__):
        value = float(values[i][1])
        if kept and stamps[i] == last_stamp:
            if not _same(value, last_value):
                said = CONFLICT
            continue
        kept.append(values[i])
        last_stamp, last_value = stamps[i], value
    return kept, said


def ordered_arrays(stamps: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray, str | None]:
    """`ordered_points` of a series held as numpy arrays (timestamps, values): the arrays themselves when
    already in order."""
    import numpy as np

    if len(stamps) < 2 or bool((np.diff(stamps) > 0).all()):
        return stamps, values, None
    order = np.argsort(stamps, kind="stable")
    stamps, values = stamps[order], values[order]
    first = np.concatenate(([True], np.diff(stamps) > 0))  # the first sample of each time
    group = np.cumsum(first) - 1  # each sample's time, numbered
    kept = values[first]
    others = values[~first]
    theirs = kept[group[~first]]
    conflict = bool((~((others == theirs) | (np.isnan(others) & np.isnan(theirs)))).any())
    return stamps[first], kept, CONFLICT if conflict else REORDERED
