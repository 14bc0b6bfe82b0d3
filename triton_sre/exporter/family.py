"""The exporter's metric family record: what collector.py writes and every family producer
(core, LLM, capacity) yields. A leaf: producers import it, not the collector."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

GAUGE = "gauge"
COUNTER = "counter"


@dataclass(frozen=True, slots=True)
class Family:
    """One metric family; `rows` are (label values, value), produced lazily while writing."""

    kind: str
    name: str
    documentation: str
    labels: Sequence[str]
    rows: Iterable[tuple[Sequence[str], float]]
