"""Fault probes, round twelve (branch `probes12`, 2026-12-06): `rollout` on a model of hundreds of
versions, a Prometheus clock off the tool's, counters resetting inside a window (a Triton restart) —
docs/failure-behaviour.md, "Fault probes, round twelve". Every Prometheus here is a real one holding
backfilled series (tests/backfilled_prometheus.py)."""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from backfilled_prometheus import Series, backfilled
from faultproxy import FaultProxy
from live_prometheus import Prom

from triton_sre import conventions as c
from triton_sre.bot.prom import CHART_STEP_SECONDS, CHART_WINDOW_SECONDS
from triton_sre.bot.receiver import COMMAND_PROMETHEUS_BUDGET
from triton_sre.cli import main
from triton_sre.durations import parse_duration
from triton_sre.prom import Prometheus
from triton_sre.rollout.live import MAX_VERSIONS_JUDGED, model_answer, queries_per_verdict, verdict_now
from triton_sre.rollout.sides import version_sides
from triton_sre.slo import default_spec

SCRAPE_S = 15.0
HISTORY_S = 1200.0  # twenty minutes up to the test's start: the rollout window (15m) is inside
VERSIONS = 200
MODEL = "many_versions"


def _counters(labels: dict[str, str], per_s: float, stamps: list[float]) -> list[Series]:
    """The counters the rollout's rate figures read, growing at `per_s` from the first stamp."""
    values = [(t, per_s * (t - stamps[0])) for t in stamps]
    families = (c.NV_REQUEST_SUCCESS, c.NV_INFERENCE_COUNT, c.NV_EXEC_COUNT)
    return [(family, labels, values) for family in families]


@pytest.fixture(scope="module")
def many_versions(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prom]:
    """One model serving VERSIONS versions for the last twenty minutes: v1 ten requests a second, the
    others one each."""
    start = time.time() - HISTORY_S
    stamps = [start + SCRAPE_S * i for i in range(int(HISTORY_S / SCRAPE_S))]
    series: list[Series] = []
    for version in range(1, VERSIONS + 1):
        labels = {c.LABEL_JOB: c.DEFAULT_TRITON_JOB, c.LABEL_MODEL: MODEL, c.LABEL_VERSION: str(version)}
        series += _counters(labels, 10.0 if version == 1 else 1.0, stamps)
    with backfilled(tmp_path_factory.mktemp("prom"), series) as prom:
        yield prom


# -- a model serving hundreds of versions ----------------------------------------------------------------
def test_the_rollout_slash_command_on_hundreds_of_versions_judges_the_busiest_and_names_the_rest(
    many_versions: Prom,
) -> None:
    """Before: `/triton rollout <model>` judged every served version against the busiest, 17 range
    queries each, within the bot's 2 s for the whole answer: 200 versions spent it and the answer was
    `Prometheus … did not answer within 2s` (a Prometheus answering each query in milliseconds), no
    verdict. Now the MAX_VERSIONS_JUDGED busiest are judged and one line counts and names the rest."""
    prom = Prometheus(many_versions.url, COMMAND_PROMETHEUS_BUDGET, budget=COMMAND_PROMETHEUS_BUDGET)
    lines = model_answer(prom, MODEL, default_spec())
    verdicts = [line for line in lines if line.startswith(f"{MODEL} v") and f" vs {MODEL} v1:" in line]
    assert len(verdicts) == MAX_VERSIONS_JUDGED, lines
    assert all(c.ROLLOUT_PASS.upper() in line for line in verdicts), verdicts
    rest = VERSIONS - 1 - MAX_VERSIONS_JUDGED
    assert f"{MODEL}: {rest} other versions served fewer requests and are not judged here" in lines[-1]
    assert f"--model {MODEL} --baseline-version 1 --candidate-version V" in lines[-1]


# -- a Prometheus clock off the tool's -----------------------------------------------------------------
REPORTED = "reported"  # the model of the report's range


@pytest.fixture(scope="module")
def steady_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prom]:
    """One model serving ten requests a second for the last 80 minutes, up to the test's start."""
    start = time.time() - 4800
    stamps = [start + SCRAPE_S * i for i in range(int(4800 / SCRAPE_S))]
    labels = {c.LABEL_JOB: c.DEFAULT_TRITON_JOB, c.LABEL_MODEL: REPORTED, c.LABEL_VERSION: "1"}
    with backfilled(tmp_path_factory.mktemp("prom"), _counters(labels, 10.0, stamps)) as prom:
        yield prom


def _requests_per_s(out: Path) -> float:
    rows = list(csv.DictReader((out / "models.csv").open(encoding="utf-8")))
    return float(next(row for row in rows if row[c.LABEL_MODEL] == REPORTED)["requests_per_s"])


@pytest.mark.parametrize("skew_s", [600.0])
def test_a_report_up_to_now_ends_at_prometheus_clock_not_this_machines(
    steady_model: Prom, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, skew_s: float
) -> None:
    """Before: `report --last 1h` ended at this machine's clock. Ten minutes ahead of Prometheus, the
    range's last ten minutes held no sample yet and the requests of fifty minutes were divided by an
    hour: 10 req/s reported as 8.3. Now a range without --end ends at Prometheus' `time()`."""
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + skew_s)
    out = tmp_path / "report"
    argv = ["report", "--prometheus-url", steady_model.url, "--last", "1h", "--format", "csv"]
    assert main([*argv, "--out", str(out)]) == c.EXIT_OK
    assert _requests_per_s(out) == pytest.approx(10.0, rel=0.02)


# -- counters resetting inside the window (a Triton restart) ----------------------------------------------
RESTARTED = "restarted"


@pytest.fixture(scope="module")
def restarted_candidate(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prom]:
    """Versions 1 and 2 of one model at five requests a second for twenty minutes; version 2's
    Triton restarted 400 s before the test: 30 s without a sample, then its counters from zero."""
    start = time.time() - HISTORY_S
    down = start + HISTORY_S - 400
    stamps = [start + SCRAPE_S * i for i in range(int(HISTORY_S / SCRAPE_S))]
    series: list[Series] = []
    for version in ("1", "2"):
        labels = {c.LABEL_JOB: c.DEFAULT_TRITON_JOB, c.LABEL_MODEL: RESTARTED, c.LABEL_VERSION: version}
        if version == "1":
            series += _counters(labels, 5.0, stamps)
            continue
        before = _counters(labels, 5.0, [t for t in stamps if t < down])
        after = _counters(labels, 5.0, [t for t in stamps if t >= down + 30])
        joined = zip(before, after, strict=True)
        series += [(name, labels, [*old, *new]) for (name, _, old), (_, _, new) in joined]
    with backfilled(tmp_path_factory.mktemp("prom"), series) as prom:
        yield prom


def test_a_restart_inside_the_rollout_window_is_named_and_counted_once(
    restarted_candidate: Prom, capsys: pytest.CaptureFixture[str]
) -> None:
    """The rates step over the reset (no negative rate, no request counted twice: 5 req/s on both
    sides, as served), but before the verdict said nothing of the restart, and requests refused while
    the candidate was down reach no counter. Now the reason names the side and how many resets, and
    the JSON counts them per side."""
    argv = ["rollout", "check", "--prometheus", restarted_candidate.url, "--model", RESTARTED]
    code = main([*argv, "--baseline-version", "1", "--candidate-version", "2", "--format", "json"])
    verdict = json.loads(capsys.readouterr().out)
    assert code == c.EXIT_OK, verdict
    assert verdict["request_rate"]["baseline"] == pytest.approx(5.0, rel=0.01)
    assert verdict["request_rate"]["candidate"] == pytest.approx(5.0, rel=0.01)
    assert all(f["baseline"] >= 0 and f["candidate"] >= 0 for f in verdict["figures"]), verdict
    assert verdict["restarts"] == {"baseline": 0, "candidate": 1}
    assert (
        f"counters reset in the window (Triton or the model restarted): {RESTARTED} v2 1 time"
        in (verdict["reason"])
    )


def test_the_bots_chart_ends_at_prometheus_clock_not_this_machines(
    steady_model: Prom, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: the alert chart's hour ended at this machine's clock; ten minutes ahead of Prometheus,
    its last five minutes were the newest sample repeated (Prometheus' lookback) past the data, and
    the hour lost its first ten. Now the hour ends at Prometheus' `time()`."""
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + 600.0)
    expr = f'sum({c.NV_REQUEST_SUCCESS}{{{c.LABEL_MODEL}="{REPORTED}"}})'
    (series,) = Prometheus(steady_model.url).range(expr, CHART_WINDOW_SECONDS, CHART_STEP_SECONDS)
    stamps = [float(t) for t, _ in series["values"]]
    assert max(stamps) <= real() + 1.0
    assert max(stamps) - min(stamps) >= CHART_WINDOW_SECONDS - CHART_STEP_SECONDS


def _slowly(body: bytes) -> bytes:
    time.sleep(RANGE_DELAY_S)
    return body


RANGE_DELAY_S = 0.07  # per range answer: 18 a version, about 1.3 s; the second version outlasts 2 s


def test_the_rollout_slash_command_keeps_the_verdicts_judged_when_its_budget_runs_out(
    many_versions: Prom,
) -> None:
    """Before: a Prometheus slow enough that the bot's 2 s ran out while judging the second version
    (each range answer 70 ms late, behind a proxy) made the answer `did not answer within 2s` alone,
    the first verdict lost. Now the verdicts judged are shown and one line names the versions not
    judged."""
    with FaultProxy(many_versions.url) as proxy:
        proxy.set_fault("/api/v1/query_range", _slowly)
        prom = Prometheus(proxy.url, COMMAND_PROMETHEUS_BUDGET, budget=COMMAND_PROMETHEUS_BUDGET)
        lines = model_answer(prom, MODEL, default_spec())
    judged = [line for line in lines if line.startswith(f"{MODEL} v") and f" vs {MODEL} v1:" in line]
    ran_out = next(line for line in lines if "did not answer every query within 2s: not judged: " in line)
    named = ran_out.split("not judged: ", 1)[1].rstrip(".").split(", ")
    assert judged, lines
    assert len(judged) + len(named) == MAX_VERSIONS_JUDGED, lines


def test_a_verdict_makes_the_queries_the_slash_commands_budget_is_reckoned_with(many_versions: Prom) -> None:
    """tidy31: MAX_VERSIONS_JUDGED was reckoned at 17 range queries a version (docs/bot.md: and four
    instant ones); the verdict has since read the exporter's dynamic batcher and ensemble marks and the
    replaced pods. Counted at a proxy in front of a real Prometheus: 18 range and 10 instant queries,
    what `queries_per_verdict` says."""
    spec = default_spec()
    window_s = parse_duration(spec.rollout.window, "rollout.window")
    sides = version_sides(spec.triton_job, MODEL, "1", "2")
    with FaultProxy(many_versions.url) as proxy:
        prom = Prometheus(proxy.url)
        verdict_now(
            prom,
            sides,
            spec.rollout,
            spec.latency_metrics,
            spec.triton_job,
            window_s,
            exporter_job=spec.exporter_job,
        )
    asked = [path.split("?")[0] for path in proxy.requests.elements()]
    counted = (asked.count("/api/v1/query_range"), asked.count("/api/v1/query"))
    assert counted == queries_per_verdict(spec.latency_metrics) == (18, 10), proxy.requests
    assert len(asked) == sum(counted), asked  # nothing else read (the configuration: samples are spaced)
