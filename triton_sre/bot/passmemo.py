"""One enrichment pass's Prometheus reads, each asked once: `PassMemo` wraps the client (../prom.py)
for the facts of one notification (worker.py) and answers a query it already asked in the pass from
what Prometheus said then.

The key is the exact query text, its kind (instant or vector) and its evaluation time (`at`, None for
Prometheus' now: within one pass, one now). Queries whose text does not depend on the alert (the
scaling signal's `deployment:...:ceil` and serving replicas) or only on labels several alerts share
(a model's latency now, its requests, the data a window holds) were asked once per shown alert; they
are now asked once per pass. A query that failed fails again from the memo with the same error (one
pass does not ask a failing Prometheus twice); answers are copied out, so a reader that changes one
does not change the next reader's. Anything else (range queries, `heeding`, `budgeted`) goes to the
client itself. A memo lives for one pass: the next notification asks again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from triton_sre.prom import PromError, Prometheus

Samples = list[tuple[dict[str, str], float]]
Key = tuple[str, float | None]
T = TypeVar("T")


class PassMemo:
    """The instant and vector queries of one pass through `prometheus`, each asked once."""

    def __init__(self, prometheus: Prometheus) -> None:
        self.prometheus = prometheus
        self._instants: dict[Key, float | PromError | None] = {}
        self._vectors: dict[Key, Samples | PromError] = {}

    def instant(self, expr: str, at: float | None = None) -> float | None:
        return _once(self._instants, self.prometheus.instant, expr, at)

    def vector(self, expr: str, at: float | None = None) -> Samples:
        return [
            (dict(labels), value) for labels, value in _once(self._vectors, self.prometheus.vector, expr, at)
        ]

    def __getattr__(self, name: str) -> Any:  # range, heeding, budgeted, url...: the client's own
        return getattr(self.prometheus, name)


def _once(
    said: dict[Key, T | PromError], ask: Callable[[str, float | None], T], expr: str, at: float | None
) -> T:
    """`ask(expr, at)`'s answer or error, from `said` when this pass has asked it already."""
    key = (expr, at)
    if key not in said:
        try:
            said[key] = ask(expr, at)
        except PromError as exc:
            said[key] = exc
    found = said[key]
    if isinstance(found, PromError):
        raise found
    return found
