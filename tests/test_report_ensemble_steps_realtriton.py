"""The report's split of an ensemble on the real Triton 2.51 (reportens, reportsplit): the
pipeline3 of tests/ensemble_steps.py under load, a private Prometheus scraping Triton and the exporter,
`build_report` over the load. Before reportens: pipeline3's queue share was its hand-off to its first
step (about 0 %), slow_batch's queue in its "other", and no step named. Before reportsplit: the share
was the exporter's samples averaged over the range (51.7 % where the steps' counters said 72.3 %: its
60 s window held less of the load in the range's first samples); now it is the steps' own counters,
weighted by requests."""

from __future__ import annotations

from typing import Any

import pytest
import requests
from ensemble_steps import ENSEMBLE, SLOW, STEPS, loaded_pipeline

from triton_sre import conventions as c
from triton_sre.report.command import build_report
from triton_sre.report.ensemble_steps import SPLIT_COUNTERS
from triton_sre.slo import default_spec

pytestmark = [pytest.mark.triton, pytest.mark.server]

CLIENTS, PER_CLIENT = 16, 20
POINTS = 0.03  # "within a few points" of the counters' share


def _queue_share(steps: dict[tuple[str, str], float]) -> float:
    return sum(v for (_step, stage), v in steps.items() if stage == c.STAGE_QUEUE) / sum(steps.values())


def _stats(http_url: str) -> dict[str, dict[str, float]]:
    """Each step's statistics (Triton's own, in ns): successful requests, their duration and queue."""
    out = {}
    for step in STEPS:
        answer = requests.get(f"{http_url}/v2/models/{step}/stats", timeout=30).json()
        stats = answer["model_stats"][0][c.STATS_INFERENCE_STATS]
        out[step] = {
            "count": float(stats["success"]["count"]),
            "ns": float(stats["success"]["ns"]),
            "queue": float(stats["queue"]["ns"]),
        }
    return out


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("report-ensemble-steps")
    before: dict[str, Any] = {}

    def read_before(triton: Any) -> None:
        before["triton"], before["stats"] = triton, _stats(triton.http_url)

    with loaded_pipeline(root, CLIENTS, PER_CLIENT, read_before) as (prom, started, stopped):
        after = _stats(before["triton"].http_url)
        built = build_report(
            prom.url,
            started,
            stopped + 2.0,
            step=1.0,
            scrape_interval=1.0,
            triton_job=default_spec().triton_job,
        )
        # the exporter's samples over the range, as the report read them before (its time average)
        span = {"query": c.M_ENSEMBLE_STEP_SECONDS, "start": started, "end": stopped + 2.0, "step": 1.0}
        answer = requests.get(f"{prom.url}/api/v1/query_range", params=span, timeout=10).json()
        samples = {
            (r["metric"][c.L_STEP], r["metric"][c.L_STAGE]): sum(float(v) for _t, v in r["values"])
            / len(r["values"])
            for r in answer["data"]["result"]
        }
        # Triton's own statistics over the load: each pipeline3 request is one request of each step
        spent = {s: {k: after[s][k] - before["stats"][s][k] for k in after[s]} for s in STEPS}
        yield built, samples, spent


def test_the_ensembles_row_weighs_its_steps_counters_by_requests(report: Any) -> None:
    built, samples, spent = report
    rows = built.table.set_index("model")
    row = rows.loc[ENSEMBLE]
    counted = sum(s["queue"] for s in spent.values()) / sum(s["ns"] for s in spent.values())
    print(
        f"{ENSEMBLE}: queue share {row['queue_share']:.3f}, compute {row['compute_share']:.3f}, "
        f"{row['queue_step']} {row['queue_step_ms']:.1f} ms; Triton's statistics of its steps over the "
        f"load: {counted:.3f}; the exporter's samples averaged over the range: {_queue_share(samples):.3f}; "
        f"requests per step: {[s['count'] for s in spent.values()]}"
    )
    assert {s["count"] for s in spent.values()} == {CLIENTS * PER_CLIENT}  # one step request each
    assert row["split_from"] == SPLIT_COUNTERS
    assert abs(row["queue_share"] - counted) < POINTS
    assert row["queue_step"] == SLOW
    queue_ms = spent[SLOW]["queue"] / spent[SLOW]["count"] / 1e6
    assert row["queue_step_ms"] == pytest.approx(queue_ms, rel=0.05)
    other = 1.0 - row["queue_share"] - row["compute_share"]
    assert other < row["queue_share"] / 10  # the steps' queue is not "other"
    assert {step for step, _stage in samples} == set(STEPS)
    assert rows.loc[SLOW, "queue_step"] == "" and rows.loc[SLOW, "split_from"] == ""  # a step: its own
