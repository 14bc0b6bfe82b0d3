"""Exact cumulative sums of a piecewise-constant per-step history, in closed form per run of equal
steps (issue 28 item 7): the promtool calculator (calc.py) reads any window's request and bad
request totals, and the sum of a window's recorded 5m samples, in a few lookups instead of a loop
over its steps.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from fractions import Fraction
from typing import Any, Protocol


class Step(Protocol):
    """One evaluation step of a history (calc.Phase): requests per second and their bad share."""

    @property
    def rate(self) -> Fraction: ...

    @property
    def bad(self) -> Fraction: ...


class _Cumulative:
    """F(i): a per-step value summed over the first i steps, and S(n): F summed over i < n (F stays
    at its total past the end), both exact and in closed form per run of equal steps."""

    def __init__(self, runs: Sequence[tuple[int, Fraction]]) -> None:
        self.starts: list[int] = []
        self.firsts: list[Fraction] = []  # F at each run's start
        self.sums: list[Fraction] = []  # S at each run's start
        self.steps: list[Fraction] = []
        f, total, at = Fraction(0), Fraction(0), 0
        for length, value in runs:
            self.starts.append(at)
            self.firsts.append(f)
            self.sums.append(total)
            self.steps.append(value)
            total += length * f + value * (length * (length - 1) // 2)
            f += length * value
            at += length
        self.length, self.total, self.total_sum = at, f, total

    def at(self, i: int) -> Fraction:
        if i >= self.length:
            return self.total
        k = bisect.bisect_right(self.starts, i) - 1
        return self.firsts[k] + (i - self.starts[k]) * self.steps[k]

    def summed(self, n: int) -> Fraction:
        if n <= 0:
            return Fraction(0)
        if n > self.length:
            return self.total_sum + (n - self.length) * self.total
        k = bisect.bisect_right(self.starts, n - 1) - 1
        u = n - self.starts[k]
        return self.sums[k] + u * self.firsts[k] + self.steps[k] * (u * (u - 1) // 2)


class Sums:
    """Cumulative sums of a per-step history: requests per second, and bad requests per second, over
    the first i steps (exact). Any window's totals are then a few lookups, not a loop over its
    steps, so predicting a tier costs the same for a 5m window and a 3d one (issue 28 item 7)."""

    def __init__(self, per_step: Sequence[Step], bad_of: Any = None) -> None:
        runs: list[tuple[int, Step]] = []  # per_step repeats each phase object: one run per phase
        for p in per_step:
            if runs and runs[-1][1] is p:
                runs[-1] = (runs[-1][0] + 1, p)
            else:
                runs.append((1, p))
        self._rate = _Cumulative([(n, p.rate) for n, p in runs])
        self._bad = _Cumulative([(n, p.rate * (bad_of(p) if bad_of else p.bad)) for n, p in runs])

    def between(self, start: int, end: int) -> tuple[Fraction, Fraction]:
        """(rate, bad rate) summed over steps [start, end) (steps past the history count 0)."""
        return (
            self._rate.at(end) - self._rate.at(start),
            self._bad.at(end) - self._bad.at(start),
        )

    def ends_between(self, first: int, last: int, k: int) -> tuple[Fraction, Fraction]:
        """Sum over j in [first, last] of between(max(0, j - k), j)."""
        return _sum_clamped(self._rate, first, last, k), _sum_clamped(self._bad, first, last, k)


def _sum_clamped(cumulative: _Cumulative, first: int, last: int, k: int) -> Fraction:
    ends = cumulative.summed(last + 1) - cumulative.summed(first)
    starts = cumulative.summed(last - k + 1) - cumulative.summed(max(0, first - k))
    return ends - starts
