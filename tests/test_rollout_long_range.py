"""`rollout check` over a window longer than Prometheus answers in one range query: a 30-day window
at 15 s is 172,800 points a series, and Prometheus refuses more than 11,000 ("exceeded maximum
resolution"). The client (`Prometheus.query_range`, `range_slices`) reads the samples in slices, and
they must be exactly the ones one read would give."""

from __future__ import annotations

from typing import Any

import pytest
from fake_prometheus import serve

from triton_sre import conventions as c
from triton_sre.prom import PromError, Prometheus
from triton_sre.promcore import PROMETHEUS_MAX_POINTS
from triton_sre.rollout.live import collect, read_samples
from triton_sre.rollout.sides import version_sides

REFUSAL = (
    b'{"status":"error","errorType":"bad_data","error":"exceeded maximum resolution of 11,000 points '
    b'per timeseries. Try decreasing the query resolution (?step=XX)"}'
)


def _limited(asked: list[int]) -> Any:
    """A stand-in answering like Prometheus: each point's value is its own timestamp, and a query
    of more than PROMETHEUS_MAX_POINTS points is refused as Prometheus refuses it."""

    def answer(query: str, stamps: list[float]) -> Any:
        asked.append(len(stamps))
        if len(stamps) > PROMETHEUS_MAX_POINTS:
            return REFUSAL
        return {
            "resultType": "matrix",
            "result": [{"metric": {}, "values": [[t, f"{t:.3f}"] for t in stamps]}],
        }

    return answer


@pytest.fixture
def limited() -> Any:
    asked: list[int] = []
    httpd = serve(_limited(asked))
    yield Prometheus(f"http://127.0.0.1:{httpd.server_address[1]}", timeout=30), asked
    httpd.shutdown()


@pytest.mark.parametrize("points", [1, 11_000, 11_001, 30_000])
def test_a_long_range_is_read_in_slices_with_every_point_once(limited: Any, points: int) -> None:
    prom, asked = limited
    step = 15.0
    start = 1_764_000_000.0007  # not on a millisecond: the slices' times are rounded to one
    end = start + (points - 1) * step + 3.0  # the range does not end on a point either
    values = read_samples(prom, "up", start, end, step)
    expected = [f"{start + k * step:.3f}" for k in range(points)]
    assert [f"{v:.3f}" for v in values] == expected  # every point, in order, none twice
    assert max(asked) <= PROMETHEUS_MAX_POINTS
    assert len(asked) == -(-points // PROMETHEUS_MAX_POINTS)  # as few slices as the limit allows


def test_one_read_of_a_long_range_is_what_prometheus_refuses(limited: Any) -> None:
    """The stand-in's refusal is real: one query over the whole range (`iter_range_arrays` makes one) is
    the error the check got; the client's `query_range` reads the same range in slices."""
    prom, asked = limited
    with pytest.raises(PromError, match="exceeded maximum resolution"):
        list(prom.iter_range_arrays("up", 0.0, 30_000 * 15.0, 15.0))
    assert asked == [30_001]
    ((series,),) = [prom.query_range("up", 0.0, 30_000 * 15.0, 15.0)]
    assert len(series["values"]) == 30_001 and asked[1:] == [11_000, 11_000, 8_001]


def test_a_30_day_window_at_15s_gives_every_sample_of_both_sides(limited: Any) -> None:
    prom, asked = limited
    window, step = 30 * 86400.0, 15.0
    sides = version_sides("triton", "m", "1", "2")
    samples = collect(prom, sides, window, step, (), exporter_job=c.DEFAULT_EXPORTER_JOB)
    traffic = samples["requests"]
    assert [len(side) for side in traffic] == [window // step] * 2
    assert all(len(side) == window // step for pair in samples.values() for side in pair)
    assert max(asked) <= PROMETHEUS_MAX_POINTS
    assert c.ROLLOUT_FIG_ERROR_RATIO in samples
