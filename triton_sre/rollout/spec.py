"""The `rollout:` section of slos.yaml: blue/green pairs, the margin of each figure, enough traffic.

Defaults come from the SLOs: the error-ratio margin is the availability SLO's error budget
(1 - objective), the traffic floor is its `min_request_rate`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from triton_sre import conventions as c
from triton_sre.redact import bounded
from triton_sre.slo import Spec, SpecError, format_duration, parse_duration

__all__ = ["BlueGreen", "RolloutSpec", "rollout_spec"]

_KEYS = {"pairs", "margins", "min_request_rate", "min_samples", "alpha", "window"}


@dataclass(frozen=True)
class BlueGreen:
    """A blue/green pair: two model names serving the same thing; `candidate` is the new one."""

    name: str
    baseline: str
    candidate: str


@dataclass(frozen=True)
class RolloutSpec:
    pairs: tuple[BlueGreen, ...]
    margins: Mapping[str, float]  # figure name -> margin (relative or absolute, per figure)
    min_request_rate: float  # requests/s each side needs over the window, else inconclusive
    min_samples: int  # intervals with traffic each side needs
    alpha: float  # the rank test's significance level
    window: str  # the continuous guard's comparison window


def _number(value: Any, where: str, *, low: float = 0.0, high: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        bound = f">= {low:g}" if high == math.inf else f"from {low:g} to {high:g}"
        raise SpecError(f"{where}: expected a number {bound}, got {bounded(value)}")
    return float(value)


def rollout_spec(spec: Spec) -> RolloutSpec:
    """The validated rollout section of `spec` (its raw mapping is kept by slo.py)."""
    where = f"{spec.source}: rollout"
    raw = spec.rollout
    if not isinstance(raw, Mapping):
        raise SpecError(f"{where}: expected a mapping")
    unknown = set(raw) - _KEYS
    if unknown:
        raise SpecError(f"{where}: unknown key(s) {', '.join(sorted(map(str, unknown)))}")
    availability = next((s for s in spec.slos if s.type == c.SLO_AVAILABILITY), None)
    budget = float(1 - availability.objective / 100) if availability else c.ROLLOUT_DEFAULT_ERROR_MARGIN
    margins: dict[str, float] = {**c.ROLLOUT_DEFAULT_MARGINS, c.ROLLOUT_FIG_ERROR_RATIO: budget}
    raw_margins = raw.get("margins") or {}
    if not isinstance(raw_margins, Mapping):
        raise SpecError(f"{where}.margins: expected a mapping figure -> margin")
    for name, value in raw_margins.items():
        if name not in margins:
            raise SpecError(f"{where}.margins: unknown figure {name!r} (one of {', '.join(sorted(margins))})")
        margins[name] = _number(value, f"{where}.margins.{name}")
    pairs: list[BlueGreen] = []
    for i, entry in enumerate(raw.get("pairs") or []):
        if not isinstance(entry, Mapping) or set(entry) != {"name", "baseline", "candidate"}:
            raise SpecError(f"{where}.pairs[{i}]: expected name, baseline and candidate model names")
        names = [entry[k] for k in ("name", "baseline", "candidate")]
        if not all(isinstance(n, str) and n for n in names) or names[1] == names[2]:
            raise SpecError(f"{where}.pairs[{i}]: names must be non-empty strings, baseline != candidate")
        pairs.append(BlueGreen(*names))
    floor = availability.min_request_rate if availability else c.ROLLOUT_DEFAULT_MIN_REQUEST_RATE
    window = raw.get("window", c.ROLLOUT_DEFAULT_WINDOW)
    return RolloutSpec(
        pairs=tuple(pairs),
        margins=margins,
        min_request_rate=_number(
            raw.get("min_request_rate", floor), f"{where}.min_request_rate", high=c.MAX_REQUEST_RATE
        ),
        min_samples=int(
            _number(raw.get("min_samples", c.ROLLOUT_DEFAULT_MIN_SAMPLES), f"{where}.min_samples", low=2)
        ),
        alpha=_number(raw.get("alpha", c.ROLLOUT_DEFAULT_ALPHA), f"{where}.alpha"),
        window=format_duration(parse_duration(window, f"{where}.window")),
    )
