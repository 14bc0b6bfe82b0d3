"""Prometheus durations (`90s`, `1h30m`, `500ms`, `30d`) <-> seconds.

A leaf: it imports nothing of triton-sre but the leaf `redact.bounded` (a value quoted in an
error is a bounded prefix). The SLO spec (slo.py), the Prometheus client (prom.py),
the report and the generators read and write durations with these two functions.
"""

from __future__ import annotations

import argparse
import math
import re
from typing import Any

from triton_sre.redact import bounded

__all__ = [
    "MAX_DURATION_S",
    "MAX_SECONDS_ARG",
    "DurationError",
    "duration_arg",
    "format_duration",
    "parse_duration",
    "seconds_arg",
    "whole_ms",
]

# milliseconds per unit: whole numbers, summed exactly and divided once (9ms is 0.009 s, not
# 9 x 0.001 = 0.009000000000000001, which the spec refused as no whole number of milliseconds)
_UNITS_MS = {
    "y": 31_536_000_000, "w": 604_800_000, "d": 86_400_000, "h": 3_600_000, "m": 60_000, "s": 1000, "ms": 1
}
# Prometheus' own grammar (prometheus/common model.ParseDuration): each unit at most once, largest first;
# promtool and rule loading refuse `5m5m` or `30s1h` ("not a valid duration string"), a year is `y`
_WHOLE = re.compile("".join(rf"(?:\d+{unit})?" for unit in _UNITS_MS))
_PART = re.compile(r"(\d+)(ms|[smhdwy])")
_PARTS_ONLY = re.compile(r"(?:\d+(?:ms|[smhdwy]))+")
# The longest duration accepted: a year. Prometheus parses a duration into int64 nanoseconds (~292
# years, longer is "duration out of range" in promtool and rule loading); nothing here needs more.
MAX_DURATION_S = 365 * 86400


class DurationError(ValueError):
    """Not a positive Prometheus duration; the message names where the value came from."""


def parse_duration(value: Any, where: str) -> float:
    """Prometheus duration syntax -> seconds (`where` names the value in the error)."""
    try:
        return _seconds(value)
    except DurationError as exc:
        raise DurationError(f"{where}: {exc}") from None


def _seconds(value: Any) -> float:
    got = bounded(value, yaml_hints=False)  # `1e3` is no duration whatever YAML reads
    if isinstance(value, bool) or not isinstance(value, str) or not value or not _WHOLE.fullmatch(value):
        if isinstance(value, str) and _PARTS_ONLY.fullmatch(value):
            order = "units go largest first, each once, as Prometheus reads them (1h30m)"
            raise DurationError(f"{order}, got {got}")
        raise DurationError(f"expected a duration like 500ms, 30s, 5m, 1h or 30d, got {got}")
    try:  # a number of thousands of digits is past int()'s limit, of hundreds past a float's
        seconds = sum(int(n) * _UNITS_MS[u] for n, u in _PART.findall(value)) / 1000
    except (ValueError, OverflowError):
        seconds = math.inf
    if seconds <= 0:
        raise DurationError(f"must be longer than 0, got {got}")
    if seconds > MAX_DURATION_S:
        raise DurationError(f"must be at most 365d (a year), got {got}")
    return seconds


def whole_ms(seconds: float) -> int | None:
    """`seconds` in milliseconds when it is a whole number of them (to float precision: 1001ms is
    1.001 s, and 1.001 x 1000 is 1000.9999999999999), else None."""
    ms = round(seconds * 1000)
    return ms if abs(seconds * 1000 - ms) <= 1e-6 * max(1, ms) else None


def format_duration(seconds: float) -> str:
    """Seconds -> the shortest Prometheus duration (`3d`, `90m`, `500ms`)."""
    ms = round(seconds * 1000)
    for unit, size in (("w", 604800000), ("d", 86400000), ("h", 3600000), ("m", 60000), ("s", 1000)):
        if ms % size == 0:
            return f"{ms // size}{unit}"
    return f"{ms}ms"


def human_span(seconds: float) -> str:
    """Seconds as a message says them: "40 s", "4 min", "2.5 h" (negative reads as 0 s)."""
    if seconds < 120:
        return f"{max(seconds, 0):.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def duration_arg(text: str) -> float:
    """argparse type of a command-line Prometheus duration (`15m`, `30s`) -> seconds: `0`, `-1`, `nan`,
    `1e9` or a duration past Prometheus' own limit is a usage error, exit 2, before anything starts."""
    try:
        return _seconds(text)
    except DurationError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


# The largest command-line number of seconds (a timeout, an interval, a run's duration): 366 days.
# Past ~9.2e9 s a socket timeout or a timer overflows (`--timeout 1e10` was `internal error:
# OverflowError: timestamp out of range for platform time_t`); no wait of the CLI is meant to be longer.
MAX_SECONDS_ARG = 366 * 86_400


def seconds_arg(text: str) -> float:
    """argparse type of a command-line number of seconds: finite, above 0 and at most MAX_SECONDS_ARG
    (a NaN, an infinite, a negative or an absurd timeout or interval is a usage error, exit 2, before
    anything starts)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 < value <= MAX_SECONDS_ARG):
        raise argparse.ArgumentTypeError(
            f"expected a number of seconds above 0 and at most {MAX_SECONDS_ARG} (366 days), "
            f"got {bounded(text, yaml_hints=False)}"
        )
    return value
