"""The one RFC 3339 reader (report --start/--end, the bot's "since"): zones, 1-9 digit seconds, range."""

from __future__ import annotations

import datetime as dt

import pytest

from triton_sre.rfc3339 import parse_rfc3339

UTC = dt.timezone.utc


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("2026-11-29T17:25:52Z", dt.datetime(2026, 11, 29, 17, 25, 52, tzinfo=UTC)),
        ("2026-11-29T17:25:52z", dt.datetime(2026, 11, 29, 17, 25, 52, tzinfo=UTC)),
        ("2026-11-29T17:25:52", dt.datetime(2026, 11, 29, 17, 25, 52, tzinfo=UTC)),
        ("2026-11-29T17:25:52.1Z", dt.datetime(2026, 11, 29, 17, 25, 52, 100000, tzinfo=UTC)),
        ("2026-11-29T17:25:52.123456789Z", dt.datetime(2026, 11, 29, 17, 25, 52, 123456, tzinfo=UTC)),
        ("2026-11-29T17:25:52.12345+13:45", dt.datetime(2026, 11, 29, 3, 40, 52, 123450, tzinfo=UTC)),
        (" 2026-11-29T17:25:52-05:00 ", dt.datetime(2026, 11, 29, 22, 25, 52, tzinfo=UTC)),
    ],
)
def test_times_are_read_as_utc(text: str, want: dt.datetime) -> None:
    got = parse_rfc3339(text)
    assert got == want
    assert got.utcoffset() == dt.timedelta(0)


@pytest.mark.parametrize(
    "text",
    ["", "yesterday", "2026-13-01T00:00:00Z", "0001-01-01T00:00:00+01:00", "9999-12-31T23:00:00-05:00"],
)
def test_what_is_not_a_time_in_utc_is_a_value_error(text: str) -> None:
    with pytest.raises(ValueError):
        parse_rfc3339(text)
