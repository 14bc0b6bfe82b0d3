"""`rollout check` on a blue/green pair of ensembles, on the real Triton 2.51 scraped with the exporter by
a real Prometheus (ensembles28).

Triton counts an ensemble request as one execution of its rows, so its "batching ratio" is the rows its
clients send per request, and as queue time only the scheduler's hand-off to its first step (its steps
queue). Two ensembles over one step, the green one sent 1 row a request and the blue one 4: before, the
verdict failed the green one on `batching-ratio` (1.0 against 4.0), a figure of its clients; now the
pair is judged end to end (error ratio, latencies, compute per inference) and the reason says why the
batching ratio and queue share are left out.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from live_prometheus import exporter_settings, start_prometheus, stop_prometheus, wait_ready
from namespacing_capture import ENSEMBLE, infer

from triton_sre import conventions as c
from triton_sre.cli import main
from triton_sre.demo import SAMPLE_REPOSITORY, VECTOR_SCALE
from triton_sre.exporter.endpoints import ExporterServer
from triton_sre.exporter.service import Exporter
from triton_sre.rollout.sides import ENSEMBLE_FIGURES
from triton_sre.stack.processes import free_port

pytestmark = [pytest.mark.triton, pytest.mark.server]

JOB = "triton"  # the shipped spec's scrape.triton_job and exporter job below
EXPORTER_JOB = "triton-sre"
BLUE, GREEN = "pipeline_blue", "pipeline_green"
ROWS = {BLUE: 4, GREEN: 1}
WINDOW_S, STEP_S = 30, 3
TRAFFIC_S = WINDOW_S + 6


def repository(root: Path) -> Path:
    repo = root / "repo"
    shutil.copytree(SAMPLE_REPOSITORY / VECTOR_SCALE, repo / VECTOR_SCALE)
    for name in ROWS:
        (repo / name / "1").mkdir(parents=True)
        config = ENSEMBLE.format(name=name, platform=c.PLATFORM_ENSEMBLE, step=VECTOR_SCALE)
        (repo / name / "config.pbtxt").write_text(config, encoding="utf-8")
    return repo


def send(http_url: str, model: str, until: float, errors: list[str]) -> None:
    while time.monotonic() < until:
        response = infer(http_url, model, ROWS[model])
        if response.status_code != 200:
            errors.append(response.text)
        time.sleep(0.02)


def test_a_pair_of_ensembles_is_judged_end_to_end_not_on_its_clients_rows(
    fresh_triton_factory: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    triton = fresh_triton_factory(repository(tmp_path))
    exporter_port, port = free_port(), free_port()
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s", "scrape_timeout": "900ms"},
        "scrape_configs": [
            {"job_name": JOB, "static_configs": [{"targets": [triton.metrics_url.split("/")[2]]}]},
            {"job_name": EXPORTER_JOB, "static_configs": [{"targets": [f"127.0.0.1:{exporter_port}"]}]},
        ],
    }
    proc, log = start_prometheus(tmp_path, config, port)
    exporter: ExporterServer | None = None
    try:
        prom = wait_ready(proc, tmp_path, port)
        exporter = ExporterServer(Exporter(exporter_settings(triton)), "127.0.0.1", exporter_port).start()
        until, errors = time.monotonic() + TRAFFIC_S, []
        threads = [
            threading.Thread(target=send, args=(triton.http_url, model, until, errors))
            for model in ROWS
            for _ in range(2)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not errors
        assert {r["metric"][c.LABEL_MODEL] for r in prom.wait_for(f"{c.M_MODEL_ENSEMBLE} == 1")} == set(ROWS)
        flags = ["--baseline-model", BLUE, "--candidate-model", GREEN, "--window", f"{WINDOW_S}s"]
        code = main(
            ["rollout", "check", "--prometheus", prom.url, *flags, "--step", f"{STEP_S}s", "--format", "json"]
        )
    finally:
        stop_prometheus(proc, log)
        if exporter is not None:
            exporter.stop()
    verdict = json.loads(capsys.readouterr().out)
    figures = {f["name"]: f for f in verdict["figures"]}
    # judged end to end: failures, latencies, compute per inference, on enough samples
    assert figures[c.ROLLOUT_FIG_ERROR_RATIO]["verdict"] == c.ROLLOUT_PASS
    assert figures[c.ROLLOUT_FIG_LATENCY_P99]["samples"][0] >= 1
    assert c.ROLLOUT_FIG_COMPUTE_PER_INFERENCE in figures
    # not on its clients' rows per request (before: batching-ratio 4.0 vs 1.0, fail) nor on a queue
    # that is its steps'
    assert not set(ENSEMBLE_FIGURES) & set(figures), figures
    assert c.ROLLOUT_FIG_BATCHING_RATIO not in verdict["reason"].split(";")[0]
    assert verdict["ensembles"] == {"baseline": [BLUE], "candidate": [GREEN]}
    assert f"{BLUE}: {BLUE}" in verdict["reason"] and f"{GREEN}: {GREEN}" in verdict["reason"]
    assert code in (c.EXIT_OK, c.EXIT_FAILURE)
