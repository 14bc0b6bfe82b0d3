"""`rollout check` on a real Triton 2.51 and Prometheus: a canary that is the baseline's own code but gets
half its traffic is not failed on its batching ratio.

journey27: version 3 of a batching `ranker`, identical to version 1, at half version 1's requests/s
batched 1.22 requests per execution against 1.57 and the check said FAIL on `batching-ratio` alone
(p 7e-07), exit 1: roll back a good version. A dynamic batcher forms its batches from the requests
waiting, so a side with fewer requests a second makes smaller batches; the ratio is judged only when
the candidate has at least (1 - margin) of the baseline's traffic.

The model (`tests/data/rollout_batching/ranker`): max_batch_size 8, a 2 ms batcher delay, 4 ms per
execution in both versions. Version 1 gets four closed-loop clients, version 2 one.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from live_prometheus import start_prometheus, stop_prometheus, wait_ready

from triton_sre import conventions as c
from triton_sre.cli import main
from triton_sre.rollout.model import BATCHING_AT_LOWER_LOAD
from triton_sre.slo import default_spec
from triton_sre.stack.local_triton import LocalTriton
from triton_sre.stack.processes import free_port

pytestmark = [pytest.mark.triton, pytest.mark.server]  # a private Triton started without the fixtures

REPOSITORY = Path(__file__).parent / "data" / "rollout_batching"
MODEL = "ranker"
CLIENTS = {"1": 4, "2": 1}
TRAFFIC_S = 36.0
WINDOW, STEP = "30s", "3s"


def _drive(url: str, version: str, stop: threading.Event, sent: dict[str, int]) -> None:
    body = {"inputs": [{"name": "INPUT", "shape": [1, 4], "datatype": "FP32", "data": [1.0] * 4}]}
    with requests.Session() as session:
        while not stop.is_set():
            r = session.post(f"{url}/v2/models/{MODEL}/versions/{version}/infer", json=body, timeout=30)
            key = f"v{version} {r.status_code}"
            sent[key] = sent.get(key, 0) + 1


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, dict[str, Any]]]:
    work = tmp_path_factory.mktemp("rollout-batching")
    repo = work / "models"
    shutil.copytree(REPOSITORY, repo, symlinks=False)  # the Python stub writes __pycache__ into it
    triton = LocalTriton(repo, workdir=work / "triton").start()
    port = free_port()
    target = triton.metrics_url.split("//", 1)[1].split("/", 1)[0]
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s", "scrape_timeout": "900ms"},
        "scrape_configs": [
            {"job_name": default_spec().triton_job, "static_configs": [{"targets": [target]}]},
        ],
    }
    proc, log = start_prometheus(work, config, port)
    stop, sent = threading.Event(), {}
    drivers = [
        threading.Thread(target=_drive, args=(triton.http_url, version, stop, sent), daemon=True)
        for version, n in CLIENTS.items()
        for _ in range(n)
    ]
    try:
        prom = wait_ready(proc, work, port)
        for d in drivers:
            d.start()
        stop.wait(TRAFFIC_S)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main(
                [
                    "rollout", "check", "--prometheus", prom.url, "--model", MODEL,
                    "--baseline-version", "1", "--candidate-version", "2",
                    "--window", WINDOW, "--step", STEP, "--format", "json",
                ]
            )  # fmt: skip
    finally:
        stop.set()
        for d in drivers:
            d.join(timeout=30)
        stop_prometheus(proc, log)
        triton.stop()
    print("\nsent:", sent, "\nrollout:", code, out.getvalue())
    yield code, json.loads(out.getvalue())


def test_an_equal_canary_with_less_traffic_passes_with_its_batching_ratio_not_judged(
    checked: tuple[int, dict[str, Any]],
) -> None:
    code, body = checked
    figures = {f["name"]: f for f in body["figures"]}
    batching = figures[c.ROLLOUT_FIG_BATCHING_RATIO]
    rates = body["request_rate"]
    # the situation of the journey: the candidate has well under (1 - margin) of the baseline's traffic,
    # and batches less for it, beyond the margin
    assert rates["candidate"] < rates["baseline"] * (1 - batching["margin"]), rates
    assert batching["candidate"] < batching["baseline"] * (1 - batching["margin"]), batching
    assert batching["verdict"] == BATCHING_AT_LOWER_LOAD
    assert f"{c.ROLLOUT_FIG_BATCHING_RATIO} not judged" in body["reason"]
    # the code is the same: nothing else is worse, so the verdict is promote
    assert figures[c.ROLLOUT_FIG_ERROR_RATIO]["verdict"] == c.ROLLOUT_PASS
    assert figures[c.ROLLOUT_FIG_COMPUTE_PER_INFERENCE]["verdict"] == c.ROLLOUT_PASS
    assert (code, body["verdict"]) == (c.EXIT_OK, c.ROLLOUT_PASS), body["reason"]
