"""RFC 3339 times as Prometheus, Alertmanager and users write them, read alike on Python 3.10 and later.

One reader for the report's `--start/--end` and the bot's "since" line: a trailing `Z`/`z` is UTC, a time
without a zone is UTC, an offset is kept, and a second written with 1 to 9 digits (Prometheus and
Alertmanager write 9; Python 3.10's fromisoformat reads only 3 or 6) keeps its microseconds. A leap
second (`23:59:60Z`, which RFC 3339 allows at the end of a minute) is read as the second after
`:59:59` (the next minute's `:00`), as Unix time counts it: it has no second of its own there.
"""

from __future__ import annotations

import datetime as dt
import re

_FRACTION = re.compile(r"(?<=:\d\d)\.(\d+)")
_ZULU = re.compile(r"[Zz]$")
_LEAP = re.compile(r"(?<=[T t]\d\d:)(\d\d):60(?=[.,]\d|[Zz+-]|$)")


class LeapSecondError(ValueError):
    """Second 60 where no leap second can be (not at the end of a minute)."""


def _six_digits(m: re.Match[str]) -> str:
    return "." + (m.group(1) + "00000")[:6]


def parse_rfc3339(text: str) -> dt.datetime:
    """The time as an aware datetime in UTC; ValueError when it is not one (or an offset moves it
    outside the years 1-9999)."""
    normal = _FRACTION.sub(_six_digits, _ZULU.sub("+00:00", text.strip()))
    leap = _LEAP.search(normal)
    if leap and leap.group(1) != "59":
        raise LeapSecondError("second 60 is a leap second, which only ends a minute (:59:60)")
    if leap:  # Python's datetime has no second 60: read :59:59 and add the second
        normal = normal[: leap.start()] + "59:59" + normal[leap.end() :]
    try:
        parsed = dt.datetime.fromisoformat(normal) + dt.timedelta(seconds=1 if leap else 0)
    except OverflowError:  # 9999-12-31T23:59:60
        raise ValueError(f"{text} is outside the years 1-9999") from None
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=dt.timezone.utc)
    try:
        return parsed.astimezone(dt.timezone.utc)
    except OverflowError:  # 0001-01-01T00:00:00+01:00, 9999-12-31T23:00:00-05:00
        raise ValueError(f"{text} is outside the years 1-9999 in UTC") from None


def utc_text(ts: float) -> str:
    """Unix seconds as the report writes a time: `2026-12-06 01:00:00 UTC`."""
    return dt.datetime.fromtimestamp(ts, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
