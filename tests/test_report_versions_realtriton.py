"""`triton-sre report` and `rollout check` on one model served in two versions by a real Triton 2.51,
scraped by a real Prometheus with the exporter beside it: each version's figures agree with Triton's
own statistics (`/v2/models/ranker/versions/<v>/stats`) over the same traffic.

The model (`tests/data/report_versions/ranker`, max_batch_size 4, a dynamic batcher waiting up to
20 ms): version 1 runs an execution in 5 ms and gets one client (its batches never fill: it waits in
the batcher most of its time) plus a client of failing requests; version 2 runs one in 80 ms and
gets rounds of four requests sent together (full batches that wait little: free-running clients
fall into turns, one batch queueing behind the other).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import shutil
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import requests
from live_prometheus import Prom, private_prometheus, scraped_after

from triton_sre import conventions as c
from triton_sre.cli import main
from triton_sre.report import recommend as rec
from triton_sre.report.figures import ALL_VERSIONS, LATENCY_PER_VERSION
from triton_sre.slo import default_spec
from triton_sre.stack.local_triton import LocalTriton

pytestmark = [pytest.mark.triton, pytest.mark.server]  # a private Triton started without the fixtures

REPOSITORY = Path(__file__).parent / "data" / "report_versions"
MODEL = "ranker"
VERSIONS = ("1", "2")
DELAY_MS = {"1": 5.0, "2": 80.0}  # config.pbtxt: per execution
ROUND = 4  # version 2: requests sent together, the next round once all are answered
FAILING_PAUSE_S = 0.25  # version 1's failing client: one request, then this pause
TRAFFIC_S = 40.0
STEP = "3s"  # rollout check's step: a dozen intervals a side in the traffic


@dataclass
class Phase:
    prom: Prom
    start: float  # the report's range: a scrape of the counters before the traffic ...
    end: float  # ... and one after it
    stats: dict[str, dict[str, float]]  # version -> Triton's statistics' increase over the traffic
    out: Path
    table: pd.DataFrame = field(default_factory=pd.DataFrame)
    recs: pd.DataFrame = field(default_factory=pd.DataFrame)
    rollout: tuple[int, dict[str, Any]] = (0, {})
    window_s: float = 0.0
    sent: dict[str, int] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)


def _infer(url: str, version: str, value: float) -> None:
    body = {"inputs": [{"name": "INPUT", "shape": [1, 4], "datatype": "FP32", "data": [value] * 4}]}
    r = requests.post(f"{url}/v2/models/{MODEL}/versions/{version}/infer", json=body, timeout=30)
    r.raise_for_status()


def _drive(url: str, version: str, value: float, pause: float, stop: threading.Event, phase: Phase) -> None:
    key = f"v{version} {'failing' if value < 0 else 'ok'}"
    while not stop.is_set():
        counts = phase.errors if _send(url, version, value) else phase.sent  # a failed batch fails all
        counts[key] = counts.get(key, 0) + 1
        if pause:
            stop.wait(pause)


def _rounds(url: str, version: str, stop: threading.Event, phase: Phase) -> None:
    key = f"v{version} ok"
    with ThreadPoolExecutor(ROUND) as pool:
        while not stop.is_set():
            for failed in pool.map(lambda _: _send(url, version, 1.0), range(ROUND)):
                counts = phase.errors if failed else phase.sent
                counts[key] = counts.get(key, 0) + 1


def _send(url: str, version: str, value: float) -> bool:
    """One request; True when it failed."""
    try:
        _infer(url, version, value)
        return False
    except requests.RequestException:
        return True


def _stats(url: str, version: str) -> dict[str, float]:
    """Triton's cumulative statistics of one version: counts, and the durations in ns."""
    body = requests.get(f"{url}/v2/models/{MODEL}/versions/{version}/stats", timeout=10).json()
    (stats,) = body["model_stats"]
    infer = stats[c.STATS_INFERENCE_STATS]
    out = {"inferences": float(stats["inference_count"]), "executions": float(stats["execution_count"])}
    for name in (*c.STATS_REQUEST_FIELDS, "fail"):
        out[f"{name}_count"] = float(infer[name]["count"])
        out[f"{name}_ns"] = float(infer[name]["ns"])
    return out


def _rollout_check(url: str, window_s: float) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(
            [
                "rollout", "check", "--prometheus", url, "--model", MODEL,
                "--baseline-version", "1", "--candidate-version", "2",
                "--window", f"{math.ceil(window_s)}s", "--step", STEP, "--format", "json",
            ]
        )  # fmt: skip
    return code, json.loads(out.getvalue())


@pytest.fixture(scope="module")
def phase(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phase]:
    work = tmp_path_factory.mktemp("report-versions")
    repo = work / "models"
    shutil.copytree(REPOSITORY, repo, symlinks=False)  # the Python stub writes __pycache__ into it
    spec = default_spec()
    triton = LocalTriton(repo, workdir=work / "triton")
    triton.start()
    stop = threading.Event()
    drivers: list[threading.Thread] = []
    stack = contextlib.ExitStack()  # Prometheus and the exporter, stopped before Triton
    try:
        prom, exporter = stack.enter_context(private_prometheus(work, spec, triton))
        for version in VERSIONS:  # each version answers (and its stub has started) before the phase
            _infer(triton.http_url, version, 1.0)
        before = {v: _stats(triton.http_url, v) for v in VERSIONS}
        scraped_after(prom, spec.triton_job, time.time())
        scraped_after(prom, spec.exporter_job, time.time())
        start = time.time()  # the counters' latest scrape before it is `before`
        phase = Phase(prom, start, 0.0, {}, work / "report")
        drivers = [
            threading.Thread(target=_drive, args=(triton.http_url, "1", 1.0, 0.0, stop, phase), daemon=True),
            threading.Thread(target=_rounds, args=(triton.http_url, "2", stop, phase), daemon=True),
        ]
        drivers.append(
            threading.Thread(
                target=_drive, args=(triton.http_url, "1", -1.0, FAILING_PAUSE_S, stop, phase), daemon=True
            )
        )
        for d in drivers:
            d.start()
        stop.wait(TRAFFIC_S)
        stop.set()
        for d in drivers:
            d.join(timeout=30)
        stopped = time.time()
        scraped_after(prom, spec.triton_job, stopped)
        exporter.exporter.poll_once()
        scraped_after(prom, spec.exporter_job, time.time())
        after = {v: _stats(triton.http_url, v) for v in VERSIONS}
        phase.stats = {v: {k: after[v][k] - before[v][k] for k in after[v]} for v in VERSIONS}
        time.sleep(2.5)  # the report's last point (a whole number of 1 s steps from start) after that scrape
        phase.end = time.time()
        phase.window_s = phase.end - start
        phase.rollout = _rollout_check(prom.url, phase.window_s)
        stdout = io.StringIO()
        with contextlib.redirect_stdout(stdout):
            code = main(
                [
                    "report", "--prometheus-url", prom.url, "--start", f"{start:.3f}",
                    "--end", f"{phase.end:.3f}", "--out", str(phase.out),
                ]
            )  # fmt: skip
        assert code == c.EXIT_OK, stdout.getvalue()
        phase.table = pd.read_csv(phase.out / "models.csv", dtype={"version": str})
        phase.recs = pd.read_csv(phase.out / "recommendations.csv", dtype={"version": str})
    finally:
        stop.set()
        for d in drivers:
            d.join(timeout=30)
        stack.close()
        triton.stop()
    print("\nsent:", phase.sent, "errors:", phase.errors)
    print("stats:", json.dumps(phase.stats, indent=1))
    print(phase.table.to_string())
    print(phase.recs.to_string())
    print("rollout:", phase.rollout[0], json.dumps(phase.rollout[1], indent=1))
    yield phase


def _rows(phase: Phase) -> dict[str, dict[str, Any]]:
    rows = phase.table[phase.table["model"] == MODEL]
    return {str(r["version"]): r for r in rows.to_dict("records")}


def test_each_version_row_agrees_with_tritons_statistics(phase: Phase) -> None:
    rows = _rows(phase)
    assert list(rows) == [ALL_VERSIONS, *VERSIONS], list(rows)
    for version in VERSIONS:
        row, s = rows[version], phase.stats[version]
        # the counts: Prometheus' scrapes of /metrics at the range's edges, the statistics read then
        assert row["inferences"] == s["inferences"] == s["success_count"] > 100, (version, row, s)
        assert row["executions"] == s["executions"], (version, row, s)
        assert row["failures"] == s["fail_count"], (version, row, s)
        assert row["requests"] == s["success_count"] + s["fail_count"], (version, row, s)
        assert row["batching_ratio"] == pytest.approx(s["inferences"] / s["executions"], rel=1e-5)  # CSV
        assert row["max_batch_size"] == 4
        # the durations: µs counters against ns statistics (each request's ns truncated to µs)
        assert row["avg_latency_ms"] == pytest.approx(s["success_ns"] / s["success_count"] / 1e6, rel=1e-3)
        assert row["queue_share"] == pytest.approx(s["queue_ns"] / s["success_ns"], rel=1e-3, abs=1e-4)
        compute = s["compute_input_ns"] + s["compute_infer_ns"] + s["compute_output_ns"]
        assert row["compute_share"] == pytest.approx(compute / s["success_ns"], rel=1e-3, abs=1e-4)
        assert row["latency_source"] == c.LATENCY_SOURCE_SUMMARY
        assert row["p99_ms"] >= row["p95_ms"] >= row["p50_ms"] >= DELAY_MS[version], (version, row)
    v1, v2 = rows["1"], rows["2"]
    assert v1["failures"] > 0 and v2["failures"] == 0
    assert v2["batching_ratio"] > 3 and v1["batching_ratio"] < 1  # v1: failed batches are executions
    assert v2["p50_ms"] > 2 * v1["p50_ms"]
    total = rows[ALL_VERSIONS]
    for column in ("inferences", "executions", "requests", "failures"):
        assert total[column] == v1[column] + v2[column], column
    assert total["cost"] == pytest.approx(v1["cost"] + v2["cost"], rel=1e-5) and v1["cost"] > 0
    assert total["latency_source"] == LATENCY_PER_VERSION and math.isnan(total["p99_ms"])
    successes = sum(phase.stats[v]["success_count"] for v in VERSIONS)
    request_ns = sum(phase.stats[v]["success_ns"] for v in VERSIONS)
    assert total["avg_latency_ms"] == pytest.approx(request_ns / successes / 1e6, rel=1e-3)


def test_recommendations_name_the_version_they_hold_for(phase: Phase) -> None:
    """Version 1 waits in the batcher for batches that never fill, version 2 little: the delay
    advice is version 1's alone (the model's total queues less than half its time: judged alone, it
    called for nothing). Its ratio is judged without its failed requests' executions."""
    rows = _rows(phase)
    recs = phase.recs[phase.recs["model"] == MODEL]
    t = rec.Thresholds()
    v1, v2 = rows["1"], rows["2"]
    assert v1["queue_share"] >= t.queue_share_high and v2["queue_share"] < t.queue_share_high, (v1, v2)
    assert list(zip(recs["version"], recs["id"], strict=True)) == [("1", rec.REC_LOWER_QUEUE_DELAY)], recs
    (why,) = recs["why"]
    bound = v1["inferences"] / (v1["executions"] - v1["failures"])
    assert f"at most {bound:.2f} (measured {v1['batching_ratio']:.2f}" in why, why
    assert f"**{MODEL} v1** `{rec.REC_LOWER_QUEUE_DELAY}`" in (phase.out / "report.md").read_text()


def test_rollout_check_between_the_versions_agrees_with_the_statistics(phase: Phase) -> None:
    """`rollout check` over the traffic: version 2 spends 80 ms of compute per inference (Triton
    counts a batch's execution time for each of its requests) against version 1's 5 ms: fail. Each
    side's figures are medians of per-interval figures, Triton's statistics give each over the whole
    traffic: they agree within
    the figure's default margin (a difference the check itself would not call a regression; the
    error ratio, whose margin is the error budget, within 0.05)."""
    code, verdict = phase.rollout
    assert (code, verdict["verdict"]) == (c.EXIT_FAILURE, c.ROLLOUT_FAIL), verdict
    figures = {f["name"]: f for f in verdict["figures"]}
    assert figures[c.ROLLOUT_FIG_COMPUTE_PER_INFERENCE]["verdict"] == c.ROLLOUT_FAIL
    assert [f for f, r in figures.items() if r["verdict"] == c.ROLLOUT_FAIL] == [
        c.ROLLOUT_FIG_COMPUTE_PER_INFERENCE
    ], figures
    for side, version in (("baseline", "1"), ("candidate", "2")):
        s = phase.stats[version]
        compute = s["compute_input_ns"] + s["compute_infer_ns"] + s["compute_output_ns"]
        expected = {
            c.ROLLOUT_FIG_ERROR_RATIO: s["fail_count"] / (s["success_count"] + s["fail_count"]),
            c.ROLLOUT_FIG_QUEUE_SHARE: s["queue_ns"] / s["success_ns"],
            c.ROLLOUT_FIG_COMPUTE_PER_INFERENCE: compute / 1e9 / s["inferences"],
            c.ROLLOUT_FIG_BATCHING_RATIO: s["inferences"] / s["executions"],
        }
        for name, value in expected.items():
            got, margin = figures[name][side], figures[name]["margin"]
            if name == c.ROLLOUT_FIG_ERROR_RATIO:
                margin = 0.05
            if figures[name]["margin_kind"] == "relative":
                assert got == pytest.approx(value, rel=margin), (name, side, got, value)
            else:
                assert got == pytest.approx(value, abs=margin), (name, side, got, value)
        rate = (s["success_count"] + s["fail_count"]) / phase.window_s
        assert verdict["request_rate"][side] == pytest.approx(rate, rel=0.15), (side, verdict["request_rate"])
