"""The rank test of a canary figure: Mann-Whitney U, one-sided, normal approximation.

Pure (no scipy): average ranks for ties, the tie-corrected variance and a continuity correction,
as in Mann & Whitney (1947) and the usual large-sample approximation. Kayenta's NetflixACA judge
uses the same test on per-interval samples; it is robust to the skewed, outlier-prone latency
distributions a mean-based t test is not.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["RankTest", "mann_whitney_greater", "mean", "median"]


@dataclass(frozen=True)
class RankTest:
    u: float  # U of the second sample (the candidate)
    z: float
    p_value: float  # P(U >= observed) if both samples came from one distribution


def _ranks(values: Sequence[float]) -> tuple[list[float], float]:
    """Average (1-based) ranks of `values`, and the tie term sum(t^3 - t) over groups of ties."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    ties = 0.0
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        average = (start + end) / 2 + 1
        for k in range(start, end + 1):
            ranks[order[k]] = average
        t = end - start + 1
        ties += t**3 - t
        start = end + 1
    return ranks, ties


def mann_whitney_greater(baseline: Sequence[float], candidate: Sequence[float]) -> RankTest:
    """One-sided test that `candidate` tends to be greater than `baseline`.

    p_value is 1.0 when either sample is empty or every value is tied (no evidence either way).
    """
    n1, n2 = len(baseline), len(candidate)
    if not n1 or not n2:
        return RankTest(0.0, 0.0, 1.0)
    ranks, ties = _ranks([*baseline, *candidate])
    u2 = sum(ranks[n1:]) - n2 * (n2 + 1) / 2
    n = n1 + n2
    mean = n1 * n2 / 2
    variance = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1)))
    if variance <= 0:
        return RankTest(u2, 0.0, 1.0)
    z = (u2 - mean - 0.5) / math.sqrt(variance)
    return RankTest(u2, z, 0.5 * math.erfc(z / math.sqrt(2)))


def median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    # halves first: the sum of two values near the float limit (1e308) would overflow to inf
    return ordered[mid] if len(ordered) % 2 else ordered[mid - 1] / 2 + ordered[mid] / 2


def mean(values: Sequence[float]) -> float:
    """The mean (0 for none); values whose sum passes the float limit (1e308) are divided first."""
    if not values:
        return 0.0
    try:
        return math.fsum(values) / len(values)
    except OverflowError:
        return math.fsum(v / len(values) for v in values)
