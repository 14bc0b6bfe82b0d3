"""Fault probes, round fifteen (branch `probes15`, 2026-12-06) — docs/failure-behaviour.md, "Fault probes,
round fifteen". Every Prometheus here is a real one holding backfilled series
(tests/backfilled_prometheus.py), behind tests/faultproxy.py where its answers are rewritten."""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from backfilled_prometheus import backfilled
from faultproxy import FaultProxy
from live_prometheus import Prom

from triton_sre import conventions as c
from triton_sre.cli import main
from triton_sre.prom import Prometheus
from triton_sre.timeorder import CONFLICT, REORDERED

SCRAPE_S = 15.0
HISTORY_S = 4800.0
PER_S = 10.0
MODEL = "ordered"


@pytest.fixture(scope="module")
def steady(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prom]:
    """One model serving ten requests a second for the last 80 minutes, up to the fixture's start."""
    start = time.time() - HISTORY_S
    stamps = [start + SCRAPE_S * i for i in range(int(HISTORY_S / SCRAPE_S))]
    labels = {c.LABEL_JOB: c.DEFAULT_TRITON_JOB, c.LABEL_MODEL: MODEL, c.LABEL_VERSION: "1"}
    samples = [(t, PER_S * (t - start)) for t in stamps]
    with backfilled(tmp_path_factory.mktemp("prom"), [(c.NV_REQUEST_SUCCESS, labels, samples)]) as prom:
        yield prom


def _rewritten(change: Callable[[list[list[object]]], list[list[object]]]) -> Callable[[bytes], bytes]:
    """A range answer whose every series' samples are changed by `change` (a proxy's doing)."""

    def rewrite(body: bytes) -> bytes:
        answer = json.loads(body)
        for series in answer["data"]["result"]:
            series["values"] = change(series["values"])
        return json.dumps(answer).encode()

    return rewrite


def _reversed(values: list[list[object]]) -> list[list[object]]:
    return values[::-1]


def _twice_differing(values: list[list[object]]) -> list[list[object]]:
    """Each time twice, the second with a value 0.1 % lower (two replicas' scrapes merged)."""
    return [point for t, v in values for point in ([t, v], [t, repr(float(str(v)) * 0.999)])]


def _requests_per_s(out: Path) -> float:
    rows = list(csv.DictReader((out / "models.csv").open(encoding="utf-8")))
    return float(next(row for row in rows if row[c.LABEL_MODEL] == MODEL)["requests_per_s"])


@pytest.mark.parametrize(
    ("change", "said"), [(_reversed, None), (_twice_differing, CONFLICT)], ids=["reversed", "twice"]
)
def test_a_range_answer_out_of_time_order_or_with_a_time_twice_gives_the_served_rate(
    steady: Prom,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    change: Callable[[list[list[object]]], list[list[object]]],
    said: str | None,
) -> None:
    """Before: a range answer whose samples came newest first (a proxy or query frontend joining
    answers) made every step back a counter reset: a steady 10 req/s was 1,982 req/s in the report; each
    time given twice with the second replica's value 0.1 % lower, 15,028 req/s. Now the client reads
    each series in time order, the first sample of a time kept; a time given twice with another value is
    said as partial data (which source is right is not known)."""
    out = tmp_path / "report"
    with FaultProxy(steady.url) as proxy:
        proxy.set_fault("/api/v1/query_range", _rewritten(change))
        argv = ["report", "--prometheus-url", proxy.url, "--last", "1h", "--format", "csv", "--out", str(out)]
        assert main(argv) == c.EXIT_OK
    assert _requests_per_s(out) == pytest.approx(PER_S, rel=0.02)
    err = capsys.readouterr().err
    assert (said is not None and said in err) or (said is None and CONFLICT not in err), err


def test_the_shared_range_reader_gives_each_series_in_time_order_once(steady: Prom) -> None:
    """Before: `Prometheus.query_range` (the rollout check's figures, the bot's chart) gave the samples
    as they came: newest first, or each time twice. Now in time order, one per time; a reordering is an
    info, a time twice with another value a warning."""
    end = time.time()
    with FaultProxy(steady.url) as proxy:
        for change, kept in ((_reversed, "infos"), (_twice_differing, "warnings")):
            proxy.set_fault("/api/v1/query_range", _rewritten(change))
            prom = Prometheus(proxy.url)
            (series,) = prom.query_range(c.NV_REQUEST_SUCCESS, end - 600, end, SCRAPE_S)
            stamps = [float(t) for t, _ in series["values"]]
            assert stamps == sorted(set(stamps)) and len(stamps) >= 30, stamps
            said = REORDERED if change is _reversed else CONFLICT
            assert [text for _, text in getattr(prom, kept)] == [said]
            assert not (prom.warnings if kept == "infos" else prom.infos)
