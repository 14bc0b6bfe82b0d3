"""`triton-sre report` on an ensemble served in two versions by a real Triton 2.51 (tidy32), scraped by a
real Prometheus with the exporter beside it: `pipeline3` (tests/ensemble_steps.py) with versions 1 and
2 loaded (`version_policy: all`), requests sent to each version.

What 2.51 exports: its statistics API counts each version's requests apart, but its metrics count
every request of the ensemble, whichever version was asked, on version 1's series (version 2's reads 0);
the exporter's triton_sre_ensemble_step_calls has no ensemble version (the versions share one config),
and the steps' counters do not say which version called them. So nothing tells the versions apart: the
report's row is the model's, said so (version `all`, a note), not a row labelled version 1 holding
version 2's requests, and its split is the steps' once.
"""

from __future__ import annotations

import contextlib
import io
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
import requests
from ensemble_steps import ENSEMBLE, SLOW, build_repository
from live_prometheus import private_prometheus, scraped_after

from triton_sre import conventions as c
from triton_sre.cli import main
from triton_sre.report.ensemble_steps import SPLIT_COUNTERS
from triton_sre.report.figures import ALL_VERSIONS
from triton_sre.report.render import VERSIONS_TOGETHER
from triton_sre.slo import default_spec
from triton_sre.stack.local_triton import LocalTriton

pytestmark = [pytest.mark.triton, pytest.mark.server]  # a private Triton started without the fixtures

SENT = {"1": 6, "2": 10}  # requests to each version of the ensemble, one after the other


def _infer(url: str, version: str) -> None:
    body = {"inputs": [{"name": "INPUT", "shape": [1, 8], "datatype": "FP32", "data": [1.0] * 8}]}
    r = requests.post(f"{url}/v2/models/{ENSEMBLE}/versions/{version}/infer", json=body, timeout=60)
    r.raise_for_status()


def _successes(url: str, version: str) -> int:
    body = requests.get(f"{url}/v2/models/{ENSEMBLE}/versions/{version}/stats", timeout=10).json()
    (stats,) = body["model_stats"]
    return int(stats[c.STATS_INFERENCE_STATS]["success"]["count"])


def _metric(url: str, version: str) -> float:
    """Triton's own /metrics: the ensemble version's successful requests."""
    wanted = f'{c.NV_REQUEST_SUCCESS}{{{c.LABEL_MODEL}="{ENSEMBLE}",{c.LABEL_VERSION}="{version}"}} '
    text = requests.get(url, timeout=10).text
    return float(next(line for line in text.splitlines() if line.startswith(wanted)).split()[-1])


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, tuple[int, float]]]]:
    """The report's output directory, and per version (its statistics' successes, its metric's) over the
    range."""
    work = tmp_path_factory.mktemp("report-ensemble-versions")
    repo = build_repository(work)
    (repo / ENSEMBLE / "2").mkdir()
    config = repo / ENSEMBLE / "config.pbtxt"
    config.write_text(config.read_text(encoding="utf-8") + "version_policy: { all { } }\n", encoding="utf-8")
    spec = default_spec()
    triton = LocalTriton(repo, workdir=work / "triton")
    triton.start()
    try:
        with private_prometheus(work, spec, triton) as (prom, exporter):
            for version in SENT:  # the stubs started, every step counted once before the range
                _infer(triton.http_url, version)
            scraped_after(prom, spec.triton_job, time.time())
            scraped_after(prom, spec.exporter_job, time.time())
            before = {v: (_successes(triton.http_url, v), _metric(triton.metrics_url, v)) for v in SENT}
            start = time.time()
            for version, count in SENT.items():
                for _ in range(count):
                    _infer(triton.http_url, version)
            scraped_after(prom, spec.triton_job, time.time())
            exporter.exporter.poll_once()
            scraped_after(prom, spec.exporter_job, time.time())
            after = {v: (_successes(triton.http_url, v), _metric(triton.metrics_url, v)) for v in SENT}
            assert prom.wait_for(f'{c.M_ENSEMBLE_STEP_CALLS}{{{c.L_STEP}="{SLOW}"}}')
            time.sleep(2.5)  # the report's last point (whole 1 s steps from start) after that scrape
            out = work / "report"
            stdout = io.StringIO()
            with contextlib.redirect_stdout(stdout):
                code = main(
                    [
                        "report", "--prometheus-url", prom.url, "--start", f"{start:.3f}",
                        "--end", f"{time.time():.3f}", "--out", str(out),
                    ]
                )  # fmt: skip
            assert code == c.EXIT_OK, stdout.getvalue()
            yield out, {v: (after[v][0] - before[v][0], after[v][1] - before[v][1]) for v in SENT}
    finally:
        triton.stop()


def test_triton_counts_an_ensembles_versions_on_one_series(
    served: tuple[Path, dict[str, tuple[int, float]]],
) -> None:
    """What 2.51 exports (the premise of the report's rows): the statistics count each version's
    requests, the metrics put them all on version 1."""
    _, counted = served
    assert {v: stats for v, (stats, _) in counted.items()} == SENT
    assert {v: metric for v, (_, metric) in counted.items()} == {"1": sum(SENT.values()), "2": 0.0}


def test_the_report_says_an_ensembles_row_is_every_versions(
    served: tuple[Path, dict[str, tuple[int, float]]],
) -> None:
    """Before: one row, version 1, holding version 2's requests too. Now the row is the model's (version
    `all`), its split the steps' once, and a note under the table says why."""
    out, _ = served
    table = pd.read_csv(out / "models.csv", dtype={"version": str}, keep_default_na=False)
    rows = table[table["model"] == ENSEMBLE]
    assert list(rows["version"]) == [ALL_VERSIONS], rows
    (row,) = rows.to_dict("records")
    assert float(row["requests"]) == pytest.approx(sum(SENT.values()), abs=0.5)
    assert row["split_from"] == SPLIT_COUNTERS and row["queue_step"] == SLOW, row
    assert f"{ENSEMBLE}: {VERSIONS_TOGETHER}" in (out / "report.md").read_text(encoding="utf-8")
