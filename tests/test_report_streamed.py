"""The report's range reads at fleet size: an answer decoded series by series gives what the whole
body's decoding gives (the same arrays, the same PromError), and a counter reduced slice by slice
as read has the whole series' increase to the last bit."""

from __future__ import annotations

import json
from collections.abc import Iterator

import numpy as np
import pytest
from fake_prometheus import serve

from triton_sre.counters import increase, running_increase, running_increases
from triton_sre.prom import PromError, Prometheus
from triton_sre.report import prom as report_prom
from triton_sre.report.prom import PrometheusClient

SERIES = [
    {"metric": {"__name__": "x", "model": 'a"b\\', "instance": "i-1"}, "values": [[1, "1"], [2, "NaN"]]},
    {
        "metric": {"__name__": "x", "model": '{"metric":', "instance": "i-2"},
        "values": [[1, "+Inf"], [2, "-3e2"]],
    },
    {"metric": {"__name__": "x", "model": "m", "instance": "i-3"}, "values": []},
]


def _body(separators: tuple[str, str] | None, indent: int | None = None, **extra: object) -> bytes:
    envelope = {"status": "success", "data": {"resultType": "matrix", "result": SERIES, **extra}}
    return json.dumps(envelope, separators=separators, indent=indent).encode()


@pytest.fixture
def answering() -> Iterator[dict[str, bytes]]:
    body = {"now": b""}
    httpd = serve(lambda query, stamps: body["now"])
    body["url"] = f"http://127.0.0.1:{httpd.server_address[1]}".encode()
    yield body
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize(
    "body",
    [
        _body((",", ":")),  # as Prometheus writes it
        _body(None),  # spaces after separators
        _body((",", ":"), warnings=["w"]),  # warnings after the result
        _body(None, indent=2),  # pretty-printed: decoded whole
        json.dumps({"data": {"result": SERIES, "resultType": "matrix"}, "status": "success"}).encode(),
    ],
)
def test_series_by_series_equals_the_whole_answer(answering: dict[str, bytes], body: bytes) -> None:
    answering["now"] = body
    client = Prometheus(answering["url"].decode())
    got = list(client.iter_range_arrays("x", 1, 2, 1))
    assert [labels for labels, _, _ in got] == [s["metric"] for s in SERIES]
    for (_, stamps, values), series in zip(got, SERIES, strict=True):
        np.testing.assert_array_equal(stamps, [float(t) for t, _ in series["values"]])
        np.testing.assert_array_equal(values, [float(v) for _, v in series["values"]])
    assert client.query_range("x", 1, 2, 1) == SERIES


@pytest.mark.parametrize(
    "body",
    [
        _body((",", ":"))[:-40],  # cut inside the result
        _body((",", ":"))[:-1],  # the body's last brace missing
        _body((",", ":")).replace(b'"1"]', b'"1"]]]', 1),  # a series closed twice
        _body((",", ":")).replace(b'"NaN"', b"null", 1),  # a value that is not a number
    ],
)
def test_a_broken_answer_is_the_whole_decodings_error(answering: dict[str, bytes], body: bytes) -> None:
    answering["now"] = body
    client = Prometheus(answering["url"].decode())
    with pytest.raises(PromError) as streamed:
        list(client.iter_range_arrays("x", 1, 2, 1))
    try:
        expected = client._data("/api/v1/query_range", {"query": "x"}, 200, body)
    except PromError as exc:
        assert str(streamed.value) == str(exc)
    else:  # whole JSON, but a sample that is not a number: query_range's check says the same
        assert expected
        with pytest.raises(PromError) as checked:
            client.query_range("x", 1, 2, 1)
        assert str(streamed.value) == str(checked.value)


def test_a_counter_reduced_slice_by_slice_has_the_whole_increase() -> None:
    rng = np.random.default_rng(7)
    for _ in range(500):
        values = np.cumsum(rng.random(60) * rng.choice([1.0, 1e-3, 1e9], 60))
        values[rng.random(60) < 0.1] = 0.5  # resets
        values[rng.random(60) < 0.05] = np.nan  # not observations
        values[rng.random(60) < 0.03] = -1.0
        cuts = sorted(rng.choice(np.arange(1, 60), rng.integers(0, 8), replace=False))
        total, last = 0.0, None
        for part in np.split(values, cuts):
            total, last = running_increase(part, total, last)
        assert total == increase(values)  # bit for bit: the same additions in the same order


def test_counters_folded_together_have_each_ones_increase() -> None:
    rng = np.random.default_rng(11)
    for _ in range(300):
        rows, width = rng.integers(1, 20), rng.integers(1, 9)
        block = rng.random((rows, width)) * rng.choice([1.0, 1e-3, 1e9])
        block[rng.random((rows, width)) < 0.2] = 0.0  # resets (and a first step of -0.0 never added)
        totals = np.where(rng.random(rows) < 0.3, 0.0, rng.random(rows) * 7.3)
        lasts = rng.random(rows)
        for carried, given in (((totals, lasts), (totals, lasts)), ((np.zeros(rows), None), (0.0, None))):
            got = running_increases(block.copy(), *carried)
            for i in range(rows):
                one = running_increase(
                    block[i], *((given[0][i], given[1][i]) if given[1] is not None else given)
                )
                assert (got[0][i], got[1][i]) == one  # bit for bit


@pytest.mark.parametrize("batch", [3, report_prom.FOLD_BATCH])
def test_read_increases_equals_the_increase_of_the_whole_series(
    monkeypatch: pytest.MonkeyPatch, batch: int
) -> None:
    """Folded a few series at a time (`FOLD_BATCH`; 3: flushed within a slice), slices whose values
    are all observations together, the others alone: each series' increase to the last bit."""
    rng = np.random.default_rng(3)
    stamps = [float(t) for t in range(100)]
    laws = {f"s{i}": np.cumsum(rng.random(100) * 10) % 300 for i in range(7)}  # resets every ~60 steps
    laws["s1"][rng.random(100) < 0.1] = np.nan  # a few slices of s1 not all observations
    laws["s2"][:30] = np.nan  # s2 observed from its 4th slice on
    laws["s3"][50:] = -1.0

    def answer(query: str, asked: list[float]) -> dict[str, object]:
        rows = [int(t) for t in asked]
        result = [
            {
                "metric": {"model": name, "instance": "i"},
                "values": [[t, "NaN" if np.isnan(law[t]) else repr(law[t])] for t in rows],
            }
            for name, law in laws.items()
        ]
        return {"resultType": "matrix", "result": result}

    httpd = serve(answer)
    try:
        client = PrometheusClient(f"http://127.0.0.1:{httpd.server_address[1]}")
        monkeypatch.setattr(report_prom, "SAMPLES_PER_ANSWER", 7 * 9)  # slices of 9 points
        monkeypatch.setattr(report_prom, "FOLD_BATCH", batch)
        reduced = client.read_increases("x", stamps[0], stamps[-1], 1, ("model",), series=7)
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert {labels["model"]: value for labels, value in reduced} == {
        name: increase(law) for name, law in laws.items()
    }
