"""The exporter's side of the metrics body budgets (triton/budget.py): a body past one is refused
whole as a failed metrics read (`kind="over_budget"`, `up` 0, the window's last good polls kept), and
`triton_sre_metrics_over_budget{budget,limit}` says which budget and by how much."""

from __future__ import annotations

from collections.abc import Mapping

from prometheus_client import CollectorRegistry, Gauge

from triton_sre import conventions as c
from triton_sre.triton.budget import BodyBudget, BudgetExceeded


class BudgetWatch:
    """Fresh budgets for each body, and the gauge of the last body's overrun (0: within every budget)."""

    def __init__(self, limits: Mapping[str, int], registry: CollectorRegistry) -> None:
        self._limits = dict(limits)
        gauge = Gauge(
            c.M_METRICS_OVER_BUDGET,
            "What the last metrics body read held past one of the exporter's budgets (label pairs of one "
            "sample, characters of one label set, samples of the families read), 0 when within all; "
            "such a body is refused whole.",
            [c.L_BUDGET, c.L_LIMIT],
            registry=registry,
        )
        self._series = {name: gauge.labels(name, str(limit)) for name, limit in self._limits.items()}

    def body(self) -> BodyBudget:
        """The budgets of the next body, its gauge series back to 0."""
        for series in self._series.values():
            series.set(0)
        return BodyBudget.of(self._limits)

    def over(self, exc: BudgetExceeded) -> str:
        """Record `exc` on the gauge; the log line's text (no byte of the body in it)."""
        self._series[exc.budget].set(exc.seen)
        return (
            f"over the {exc.budget} budget: {exc.seen:,} (at least) where it is {exc.limit:,}; "
            "the body is refused and the window's last good polls kept"
        )
