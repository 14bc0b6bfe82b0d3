"""The report's split of an ensemble on the real Triton 2.51 (reportens): tests/ensemble_steps.py's
pipeline3 under load, a private Prometheus scraping Triton and the exporter, `build_report` over the
load. Before: pipeline3's queue share was its hand-off to its first step (about 0 %), slow_batch's queue
in its "other", and no step named."""

from __future__ import annotations

from typing import Any

import pytest
import requests
from ensemble_steps import ENSEMBLE, SLOW, STEPS, loaded_pipeline

from triton_sre import conventions as c
from triton_sre.report.command import build_report
from triton_sre.slo import default_spec

pytestmark = [pytest.mark.triton, pytest.mark.server]

CLIENTS, PER_CLIENT = 16, 20


def _queue_share(steps: dict[tuple[str, str], float]) -> float:
    return sum(v for (_step, stage), v in steps.items() if stage == c.STAGE_QUEUE) / sum(steps.values())


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("report-ensemble-steps")
    with loaded_pipeline(root, CLIENTS, PER_CLIENT) as (prom, started, stopped):
        built = build_report(
            prom.url,
            started,
            stopped + 2.0,
            step=1.0,
            scrape_interval=1.0,
            triton_job=default_spec().triton_job,
        )
        # the same samples the report reads: the range query at its start, end and step (an instant
        # avg_over_time leaves out the sample the range's first point looks back to: 0.54 vs 0.63 once)
        span = {"query": c.M_ENSEMBLE_STEP_SECONDS, "start": started, "end": stopped + 2.0, "step": 1.0}
        answer = requests.get(f"{prom.url}/api/v1/query_range", params=span, timeout=10).json()
        steps = {
            (r["metric"][c.L_STEP], r["metric"][c.L_STAGE]): sum(float(v) for _t, v in r["values"])
            / len(r["values"])
            for r in answer["data"]["result"]
        }
        last = {
            (r["metric"][c.L_STEP], r["metric"][c.L_STAGE]): float(r["value"][1])
            for r in prom.query(c.M_ENSEMBLE_STEP_SECONDS)
        }
        print(
            f"the exporter's split at the end: {_queue_share(last):.3f} of {sum(last.values()) * 1000:.1f} ms"
        )
        yield built, steps


def test_the_ensembles_row_reads_its_steps_and_names_the_batching_step(report: Any) -> None:
    built, steps = report
    rows = built.table.set_index("model")
    row = rows.loc[ENSEMBLE]
    print(f"{ENSEMBLE}: {row.to_dict()}")
    own = rows.loc[list(STEPS)]  # the steps' own counters over the range, for the record
    counted = (own["queue_share"] * own["avg_latency_ms"]).sum() / own["avg_latency_ms"].sum()
    print(f"the steps' counters over the range: queue share {counted:.3f}")
    assert row["queue_step"] == SLOW
    assert row["queue_step_ms"] > 20.0  # slow_batch queues for executions of 50 ms
    assert row["queue_share"] > 0.3
    other = 1.0 - row["queue_share"] - row["compute_share"]
    assert other < row["queue_share"] / 10  # the steps' queue is no longer "other"
    # the exporter's samples over the range the report reads: the same share
    assert row["queue_share"] == pytest.approx(_queue_share(steps), rel=0.05)
    assert {step for step, _stage in steps} == set(STEPS)
    assert rows.loc[SLOW, "queue_step"] == ""  # a step's row keeps its own split
