"""The promtool calculator's fast window arithmetic (calc.Sums: closed-form cumulative sums, issue
28 item 7) gives exactly what summing each step and each recorded 5m sample gives, on random
piecewise-constant histories, steps, check times and windows."""

from __future__ import annotations

import random
from collections.abc import Sequence
from fractions import Fraction

from triton_sre import conventions as c
from triton_sre.generate.calc import Phase, window_stats
from triton_sre.slo import window_seconds

REC = int(window_seconds(c.REC_RATE_WINDOW))


def _rate_by_steps(
    per_step: Sequence[Phase], step: int, t: int, window: int
) -> tuple[Fraction, Fraction | None]:
    end = t // step
    start = max(0, end - window // step)
    steps = per_step[start:end]
    if end - start < 1:
        return Fraction(0), None
    total = sum((p.rate for p in steps), Fraction(0)) * step
    bad = sum((p.rate * p.bad for p in steps), Fraction(0)) * step
    return total / window, (bad / total if total > 0 else None)


def _window_by_samples(
    per_step: Sequence[Phase], step: int, t: int, window: int
) -> tuple[Fraction, Fraction | None]:
    """What Prometheus computes: avg_over_time of the recorded 5m rates, both ends included."""
    if window <= REC:
        return _rate_by_steps(per_step, step, t, window)
    samples = [
        _rate_by_steps(per_step, step, j * step, REC)
        for j in range(max(1, -(-(t - window) // step)), t // step + 1)
    ]
    if not samples:
        return Fraction(0), None
    total = sum((rate for rate, _ in samples), Fraction(0))
    bad = sum((rate * (share or 0) for rate, share in samples), Fraction(0))
    return total / len(samples), (bad / total if total > 0 else None)


def test_window_stats_equal_step_by_step_sums_exactly() -> None:
    rng = random.Random(28)
    checked = 0
    for _ in range(25):
        phases = [
            Phase(
                rng.randint(0, 40),
                Fraction(rng.randint(0, 5), rng.randint(1, 3)),
                Fraction(rng.randint(0, 4), 4),
            )
            for _ in range(rng.randint(0, 4))
        ]
        per_step = [p for p in phases for _ in range(p.steps)]
        step = rng.choice([60, 300])
        for window in (REC, 2 * REC, 3600, 6 * 3600):
            for t in range(0, (len(per_step) + 15) * step, step * rng.randint(1, 4)):
                assert window_stats(per_step, step, t, window) == _window_by_samples(
                    per_step, step, t, window
                ), (
                    phases,
                    step,
                    t,
                    window,
                )
                checked += 1
    assert checked > 500
