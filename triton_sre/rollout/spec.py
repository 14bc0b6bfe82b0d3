"""The `rollout:` section of slos.yaml: blue/green pairs, the margin of each figure, enough traffic.

Validated once, where the spec loads (slo.py calls `parse_rollout`): every command that loads the
spec refuses a bad setting with the same message, whether or not it reads the section.
Defaults come from the SLOs: the error-ratio margin is the availability SLO's error budget
(1 - objective), the traffic floor is its `min_request_rate`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from triton_sre import conventions as c
from triton_sre.checks import ConfigError, check_keys, check_no_template, check_number
from triton_sre.durations import format_duration, parse_duration, whole_ms
from triton_sre.redact import bounded
from triton_sre.rollout.figures import FIGURES, LOWER

if TYPE_CHECKING:
    from triton_sre.slo import SLO

__all__ = ["MIN_WINDOW_S", "BlueGreen", "RolloutSpec", "parse_rollout"]

_KEYS = {"pairs", "margins", "min_request_rate", "min_samples", "alpha", "window"}
_PAIR_KEYS = ("name", "baseline", "candidate")
# The shortest window: a rate over it needs two scrapes, and 10s is two at a 5s scrape interval,
# already fast (Prometheus' default is 1m, the stack's 15s). A 500ms window made the generated
# promtool test read "-500ms"; a 5s one is an empty rate at most scrape intervals.
MIN_WINDOW_S = 10.0
_DEFAULT_BUDGET = c.ROLLOUT_DEFAULT_ERROR_MARGIN  # without an availability SLO


@dataclass(frozen=True)
class BlueGreen:
    """A blue/green pair: two model names serving the same thing; `candidate` is the new one."""

    name: str
    baseline: str
    candidate: str


@dataclass(frozen=True)
class RolloutSpec:
    pairs: tuple[BlueGreen, ...] = ()
    # figure name -> margin (relative or absolute, per figure)
    margins: Mapping[str, float] = field(
        default_factory=lambda: {**c.ROLLOUT_DEFAULT_MARGINS, c.ROLLOUT_FIG_ERROR_RATIO: _DEFAULT_BUDGET}
    )
    # requests/s each side needs over the window, else inconclusive
    min_request_rate: float = c.ROLLOUT_DEFAULT_MIN_REQUEST_RATE
    min_samples: int = c.ROLLOUT_DEFAULT_MIN_SAMPLES  # intervals with traffic each side needs
    alpha: float = c.ROLLOUT_DEFAULT_ALPHA  # the rank test's significance level
    window: str = c.ROLLOUT_DEFAULT_WINDOW  # the continuous guard's comparison window


def _margin(name: str, value: Any, where: str) -> float:
    """A margin the candidate can exceed: below 1 for a ratio's absolute margin (a ratio is at most
    1) and for a figure worse when lower (the candidate below baseline x (1 - margin), at least 0)."""
    figure = next(f for f in FIGURES if f.name == name)
    if figure.relative and figure.worse != LOWER:
        return check_number(where, value, low=0)
    margin = check_number(where, value, low=0, high=1)
    if margin == 1:
        raise ConfigError(f"{where}: must be less than 1 (the candidate could never be worse by it), got 1")
    return margin


def _window(value: Any, where: str) -> str:
    seconds = parse_duration(value, where)
    if seconds < MIN_WINDOW_S or whole_ms(seconds) is None or whole_ms(seconds) % 1000:
        raise ConfigError(
            f"{where}: must be a whole number of seconds, at least {format_duration(MIN_WINDOW_S)} "
            f"(a rate over it needs two scrapes), got {bounded(value)}"
        )
    return format_duration(seconds)


def _pairs(raw: Any, where: str) -> tuple[BlueGreen, ...]:
    if not isinstance(raw, list):
        raise ConfigError(f"{where}: expected a list of {{name, baseline, candidate}}, got {bounded(raw)}")
    pairs: list[BlueGreen] = []
    named: set[str] = set()  # every earlier pair's name (a look through the list was quadratic)
    for i, entry in enumerate(raw):
        here = f"{where}[{i}]"
        if not isinstance(entry, Mapping) or set(entry) != set(_PAIR_KEYS):
            raise ConfigError(f"{here}: expected name, baseline and candidate model names")
        names = [entry[k] for k in _PAIR_KEYS]
        if not all(isinstance(n, str) and n and n.isprintable() for n in names):
            raise ConfigError(
                f"{here}: names must be non-empty strings without control characters, got {bounded(names)}"
            )
        for key, name in zip(_PAIR_KEYS, names, strict=True):  # written into the alert's annotations
            check_no_template(f"{here}.{key}", name)
        if names[1] == names[2]:
            raise ConfigError(
                f"{here}: the candidate is its baseline ({bounded(names[1])}): nothing to compare"
            )
        if names[0] in named:
            raise ConfigError(f"{here}: a second pair named {bounded(names[0])}")
        named.add(names[0])
        pairs.append(BlueGreen(*names))
    return tuple(pairs)


def parse_rollout(raw: Any, where: str, slos: Sequence[SLO]) -> RolloutSpec:
    """The validated `rollout:` section (`where` names it in errors: `slos.yaml: rollout`);
    ConfigError naming the field."""
    raw = raw or {}
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: expected a mapping, got {bounded(raw)}")
    check_keys(where, raw, _KEYS)
    availability = next((s for s in slos if s.type == c.SLO_AVAILABILITY), None)
    budget = float(availability.budget) if availability else _DEFAULT_BUDGET
    margins: dict[str, float] = {**c.ROLLOUT_DEFAULT_MARGINS, c.ROLLOUT_FIG_ERROR_RATIO: budget}
    raw_margins = raw.get("margins") or {}
    if not isinstance(raw_margins, Mapping):
        raise ConfigError(f"{where}.margins: expected a mapping figure -> margin")
    for name, value in raw_margins.items():
        if name not in margins:
            raise ConfigError(
                f"{where}.margins: unknown figure {bounded(name)} (one of {', '.join(sorted(margins))})"
            )
        margins[name] = _margin(name, value, f"{where}.margins.{name}")
    floor = availability.min_request_rate if availability else c.ROLLOUT_DEFAULT_MIN_REQUEST_RATE
    min_samples = raw.get("min_samples", c.ROLLOUT_DEFAULT_MIN_SAMPLES)
    if isinstance(min_samples, bool) or not isinstance(min_samples, int) or min_samples < 2:
        raise ConfigError(
            f"{where}.min_samples: must be a whole number, at least 2, got {bounded(min_samples)}"
        )
    # any finite number first, then the open interval: [0, 1] bounds would say "at least 0 and at most 1"
    # of a 5, which 0 and 1 do not meet either
    alpha = check_number(f"{where}.alpha", raw.get("alpha", c.ROLLOUT_DEFAULT_ALPHA), low=-math.inf)
    if not 0 < alpha < 1:
        raise ConfigError(f"{where}.alpha: must be greater than 0 and less than 1, got {bounded(alpha)}")
    return RolloutSpec(
        pairs=_pairs(raw.get("pairs") or [], f"{where}.pairs"),
        margins=margins,
        min_request_rate=check_number(
            f"{where}.min_request_rate", raw.get("min_request_rate", floor), low=0, high=c.MAX_REQUEST_RATE
        ),
        min_samples=min_samples,
        alpha=alpha,
        window=_window(raw.get("window", c.ROLLOUT_DEFAULT_WINDOW), f"{where}.window"),
    )
