"""Counter arithmetic shared by the derivations: Prometheus' reset-aware increase, without
extrapolation. Its own module so that derive, capacity, llm and window import it without a cycle.

Pure: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Iterable


def increase(values: Iterable[float]) -> float:
    """Sum of counter increases over consecutive observations, treating a drop as a reset."""
    total = 0.0
    previous: float | None = None
    for value in values:
        if not 0.0 <= value < math.inf:  # NaN, infinite or negative: skip the observation
            continue
        if previous is not None:
            total += value - previous if value >= previous else value
        previous = value
    return total
