"""One way to read a long range: `range_slices` splits [start, end] at a step into range queries of at
most PROMETHEUS_MAX_POINTS points per series, and `Prometheus.query_range` reads them and joins each
series' slices by label set. The splitter is checked against a model of how Prometheus evaluates a
range query (its times and step in milliseconds, from the strings the client sends), the client
against the session's real Prometheus: a range it refuses in one query, read through the client,
equals the same range read as hand-made queries of a few thousand points."""

from __future__ import annotations

import math
import time
from decimal import Decimal
from typing import Any

import pytest
import requests
from fake_prometheus import serve

from triton_sre.prom import PromError, Prometheus
from triton_sre.promcore import PROMETHEUS_MAX_POINTS, range_points, range_slices, step_param

START = 1_764_000_000.0007  # not on a millisecond: the query's times are rounded to one


def evaluated(start: float, end: float, step: float) -> list[int]:
    """The milliseconds Prometheus evaluates a range query at, from the strings the client sends: start
    and end to the millisecond, the step as seconds truncated to the nanosecond, then to the ms."""
    first = int(Decimal(f"{start:.3f}") * 1000)
    last = int(Decimal(f"{end:.3f}") * 1000)
    every = int(Decimal(step_param(step)) * 10**9) // 10**6
    return list(range(first, last + 1, every))


def sliced(start: float, end: float, step: float, points: Any = PROMETHEUS_MAX_POINTS) -> list[list[int]]:
    return [evaluated(s, e, step) for s, e in range_slices(start, end, step, points)]


@pytest.mark.parametrize(
    ("points", "step", "beyond"),
    [
        (1, 15.0, 0.0),  # one point
        (1, 15.0, 14.9),  # one point, the range ending just before a second
        (11_000, 15.0, 0.0),  # exactly the limit: one query
        (11_001, 15.0, 3.0),  # one more: two
        (22_000, 15.0, 0.0),  # exactly 2 x 11,000
        (33_000, 0.1, 0.0),  # exactly 3 x 11,000 at a float step
        (30_000, 0.1, 0.05),  # 0.1 s: 100 ms, the range ending between two points
        (25_000, 7.3, 5.0),  # a step that divides nothing
        (12_345, 1 / 3, 0.2),  # 0.333333333333333 s: Prometheus evaluates every 333 ms
        (40_000, 0.001, 0.0),  # the finest step Prometheus evaluates
    ],
)
def test_every_point_is_in_exactly_one_slice(points: int, step: float, beyond: float) -> None:
    every_ms = int(Decimal(step_param(step)) * 10**9) // 10**6
    end = START + ((points - 1) * every_ms) / 1000 + beyond
    whole = evaluated(START, end, step)
    assert len(whole) == points == range_points(START, end, step)
    slices = sliced(START, end, step)
    assert [t for part in slices for t in part] == whole  # in order, none lost, none twice
    assert all(0 < len(part) <= PROMETHEUS_MAX_POINTS for part in slices)
    assert len(slices) == math.ceil(points / PROMETHEUS_MAX_POINTS)  # as few queries as the limit allows


def test_one_slice_is_the_range_as_given() -> None:
    assert list(range_slices(START, START + 600, 15)) == [(1_764_000_000.001, 1_764_000_600.001)]
    assert list(range_slices(START, START, 15)) == [(1_764_000_000.001, 1_764_000_000.001)]  # start == end


def test_an_empty_range_has_no_slice() -> None:
    assert list(range_slices(START, START - 1, 15)) == []
    assert range_points(START, START - 1, 15) == 0


def test_a_step_finer_than_prometheus_evaluates_is_refused() -> None:
    with pytest.raises(PromError, match="at least 1 ms"):
        list(range_slices(START, START + 1, 0.0004))


def test_sizes_asked_before_each_slice() -> None:
    """The report's slices: a small first one, then as many points as its budget allows (capped at the
    limit), the size asked only when the next slice is wanted."""
    asked: list[int] = []

    def size() -> int:
        asked.append(len(asked))
        return [10, 40_000][len(asked) - 1] if len(asked) <= 2 else 3

    end = START + 11_019 * 15.0  # 11,020 points
    slices = sliced(START, end, 15.0, size)
    assert [len(part) for part in slices] == [10, PROMETHEUS_MAX_POINTS, 3, 3, 3, 1]
    assert len(asked) == len(slices)
    assert [t for part in slices for t in part] == evaluated(START, end, 15.0)


def _hand_made(url: str, expr: str, edges: list[tuple[str, str]], step: str) -> dict[tuple, list]:
    """Each series' [time, value] pairs over hand-made queries (`edges`: their start and end as sent)."""
    out: dict[tuple, list] = {}
    for start, end in edges:
        answer = requests.get(
            f"{url}/api/v1/query_range",
            params={"query": expr, "start": start, "end": end, "step": step},
            timeout=30,
        ).json()
        assert answer["status"] == "success", answer
        for series in answer["data"]["result"]:
            out.setdefault(tuple(sorted(series["metric"].items())), []).extend(series["values"])
    return out


def test_a_long_range_from_the_real_prometheus_equals_hand_made_queries(live: dict[str, Any]) -> None:
    """40,000 points at 0.1 s of two series, one of them only in the range's second half (absent from
    the first slices), and the scraped `up` series at 1 ms: read through the client, the same samples as
    queries of 5,000 (resp. 1,000) points made by hand, and one query of the whole range is refused."""
    url = str(live["prom"].url)
    prom = Prometheus(url, timeout=30)
    whole = 4000  # seconds: 40,000 points at 0.1 s
    begin = math.floor(live["settled"]) - whole  # on a whole second: the hand-made edges are exact
    middle = begin + whole / 2
    expr = (
        f'label_replace(vector(time()), "part", "all", "", "") '
        f'or label_replace(vector(time()) > {middle}, "part", "late", "", "")'
    )
    up = f'up{{job="{live["spec"].triton_job}"}}'
    scraped = float(prom.query_range(up, begin, live["settled"], 1)[0]["values"][0][0]) + 1  # on a ms
    # whole seconds of `up` (1,000 points each), 14 to 20, ending 3 s ago (no scrape is still coming)
    time.sleep(max(0.0, scraped + 14 + 3 - time.time()))
    pieces = min(20, math.floor(time.time() - 3 - scraped))
    cases = [
        (expr, begin, begin + whole - 0.1, 0.1, 500.0),  # hand-made: 8 queries of 500 s
        (up, scraped, scraped + pieces - 0.001, 0.001, 1.0),  # every ms since its first scrape + 1 s
    ]
    for query, start, end, step, piece in cases:
        refused = requests.get(
            f"{url}/api/v1/query_range",
            params={"query": query, "start": f"{start:.3f}", "end": f"{end:.3f}", "step": f"{step:g}"},
            timeout=30,
        )
        assert refused.status_code == 400 and "exceeded maximum resolution" in refused.text
        edges = [
            (f"{at:.3f}", f"{at + piece - step:.3f}")
            for at in (start + k * piece for k in range(round((end - start + step) / piece)))
        ]
        expected = _hand_made(url, query, edges, f"{step:g}")
        got = prom.query_range(query, start + 0.0004, end, step)  # the start rounds to the same ms
        assert {tuple(sorted(s["metric"].items())): s["values"] for s in got} == expected
        assert len(got) == len(expected) >= 1
        assert sum(len(v) for v in expected.values()) > PROMETHEUS_MAX_POINTS
        if query == expr:  # the second series is only in the second half: joined from its slices
            parts = {s["metric"]["part"]: s["values"] for s in got}
            assert len(parts["all"]) == 40_000
            assert len(parts["late"]) == 19_999 and float(parts["late"][0][1]) > middle


def test_the_bots_range_up_to_now_is_read_in_slices() -> None:
    """`Prometheus.range` (the bot's chart) reads through `query_range`: a day at 1 s, 86,401 points a
    series, from a stand-in that refuses more than PROMETHEUS_MAX_POINTS as Prometheus does."""
    asked: list[int] = []
    refusal = b'{"status":"error","error":"exceeded maximum resolution of 11,000 points per timeseries"}'

    def answer(query: str, stamps: list[float]) -> Any:
        asked.append(len(stamps))
        if len(stamps) > PROMETHEUS_MAX_POINTS:
            return refusal
        values = [[t, "1"] for t in stamps]
        return {"resultType": "matrix", "result": [{"metric": {"a": "b"}, "values": values}]}

    httpd = serve(answer)
    try:
        prom = Prometheus(f"http://127.0.0.1:{httpd.server_address[1]}", timeout=30)
        (series,) = prom.range("x", 86_400, 1)
    finally:
        httpd.shutdown()
    stamps = [round(float(t) * 1000) for t, _ in series["values"]]
    # (86,400 when start's and end's own rounding to the ms brings them a millisecond closer)
    assert len(stamps) in (86_400, 86_401)
    assert stamps == list(range(stamps[0], stamps[0] + len(stamps) * 1000, 1000))  # every second, once
    assert max(asked) <= PROMETHEUS_MAX_POINTS and len(asked) == 8


def test_a_series_answered_twice_in_one_slice_stays_two_series() -> None:
    """A backend that answers the same label set twice in one query (Prometheus refuses to; a proxy
    merging two sources may not): each slice's n-th copy joins the n-th copy of the slices before, so
    a range read in slices is the same two series a range of one slice is, each in time order."""

    def answer(query: str, stamps: list[float]) -> Any:
        twice = [{"metric": {"a": "b"}, "values": [[t, value] for t in stamps]} for value in ("1", "2")]
        return {"resultType": "matrix", "result": twice}

    httpd = serve(answer)
    try:
        prom = Prometheus(f"http://127.0.0.1:{httpd.server_address[1]}", timeout=30)
        short = prom.query_range("x", START, START + 100, 1)
        long = prom.query_range("x", START, START + 2 * PROMETHEUS_MAX_POINTS, 1)
    finally:
        httpd.shutdown()
    for matrix, points in ((short, 101), (long, 2 * PROMETHEUS_MAX_POINTS + 1)):
        assert [{v for _, v in s["values"]} for s in matrix] == [{"1"}, {"2"}]
        for series in matrix:
            stamps = [float(t) for t, _ in series["values"]]
            assert len(stamps) == points and stamps == sorted(set(stamps))
