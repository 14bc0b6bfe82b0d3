"""Time-scaled rules for a gameday: every `for:`, range selector and offset divided by one factor.

A gameday cannot wait the 2 to 15 minutes the shipped `for:` durations ask, so the stack it starts
evaluates rules every second and uses rule files in which every duration is divided by the same
factor: `for: 10m` becomes `for: 30s`, `rate(x[5m])` becomes `rate(x[15s])`, a burn rate over 1h
is one over 3m. Ratios between windows and thresholds stay as they are, so an alert fires on the
same shape of fault, only sooner. Durations never go below a few evaluation intervals (a rate needs
samples). Pure: rule documents in, rule documents out; the generated files themselves are untouched
(this post-processes what `triton-sre generate` renders).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

from triton_sre.checks import ConfigError, check_number
from triton_sre.durations import format_duration, parse_duration

_DURATION = r"\d+(?:ms|[smhdwy])(?:\d+(?:ms|[smhdwy]))*"
# `[5m]` and subqueries `[1h:1m]` / `[1h:]` in PromQL
_RANGE = re.compile(rf"\[(?P<range>{_DURATION})(?::(?P<step>{_DURATION})?)?\]")
# `x offset 15m` (the rollout guard's "traffic one window ago"): scaled as the ranges it pairs with
_OFFSET = re.compile(rf"(?<![\w:])offset(?P<space>\s+)(?P<sign>-?)(?P<offset>{_DURATION})")


MAX_FACTOR = 3600.0
"""Beyond it a 1h window is under a second: every range sits at its floor and every `for:` at 0s."""


def factor_problem(flag: str, factor: float) -> str | None:
    """Why `factor` cannot scale a gameday's rules, as ``<flag>: must be ...`` (None when it can)."""
    try:
        check_number(flag, factor, low=1, high=MAX_FACTOR)
    except ConfigError as exc:
        return str(exc)
    return None


@dataclass(frozen=True)
class Scale:
    """Divide durations by `factor`; never below `floor_seconds` for ranges (a rate needs samples)."""

    factor: float = 20.0
    interval_seconds: float = 1.0  # scrape, evaluation and exporter poll of the gameday stack
    floor_intervals: float = 4.0

    @property
    def floor_seconds(self) -> float:
        return self.interval_seconds * self.floor_intervals

    def duration(self, text: str, floor: float = 0.0) -> str:
        seconds = parse_duration(text, "duration") / self.factor
        seconds = max(floor, round(seconds * 1000) / 1000)
        return format_duration(seconds) if seconds > 0 else "0s"

    def rollout_window(self, window: str) -> str:
        """The rollout window (slos.yaml `rollout.window`) as the scaled rules read it (a range, floored
        as `scale_expr` floors it): what the gameday's `rollout check` and its bot judge over."""
        return self.duration(window, self.floor_seconds)

    def describe(self) -> str:
        return (
            f"rule evaluation, scrape and exporter poll every {format_duration(self.interval_seconds)} "
            f"(shipped: 15s); every `for:` and PromQL range divided by {self.factor:g} "
            f"(for: 2m -> {self.duration('2m')}, 10m -> {self.duration('10m')}, 15m -> "
            f"{self.duration('15m')}; windows 5m -> {self.duration('5m', self.floor_seconds)}, "
            f"1h -> {self.duration('1h', self.floor_seconds)}, "
            f"6h -> {self.duration('6h', self.floor_seconds)}), "
            f"ranges at least {format_duration(self.floor_seconds)}"
        )


def scale_expr(expr: str, scale: Scale) -> str:
    """Every range selector and `offset` of a PromQL expression scaled (record names are not ranges:
    untouched). An offset left as shipped asked the rollout guard for traffic 15 minutes ago, which a
    gameday never waits for."""

    def repl(m: re.Match[str]) -> str:
        rng = scale.duration(m.group("range"), scale.floor_seconds)
        if m.group("step") is not None:
            return f"[{rng}:{scale.duration(m.group('step'), scale.interval_seconds)}]"
        return f"[{rng}:]" if m.group(0).endswith(":]") else f"[{rng}]"

    def offset(m: re.Match[str]) -> str:
        return f"offset{m['space']}{m['sign']}{scale.duration(m['offset'], scale.floor_seconds)}"

    return _OFFSET.sub(offset, _RANGE.sub(repl, expr))


def scale_rules(doc: dict[str, Any], scale: Scale) -> dict[str, Any]:
    """A Prometheus rule file document ({"groups": [...]}) with its durations scaled."""
    out = copy.deepcopy(doc)
    for group in out.get("groups") or []:
        if "interval" in group:
            group["interval"] = scale.duration(str(group["interval"]), scale.interval_seconds)
        for rule in group.get("rules") or []:
            if "expr" in rule:
                rule["expr"] = scale_expr(str(rule["expr"]), scale)
            for key in ("for", "keep_firing_for"):
                if key in rule:
                    rule[key] = scale.duration(str(rule[key]))
    return out
