"""Where an ensemble's time goes, and the exporter's split of it by step (ensembles29), on the real 2.51.

pipeline3 = prep -> slow_batch -> post (tests/ensemble_steps.py) under 16 concurrent clients: the steps
queue (slow_batch batches on one instance), the ensemble's own counters hold only the hand-off as queue,
and the pending-requests gauge counts the steps' waiting requests, never the ensemble's. The exporter
gives the ensemble its steps' time as triton_sre_ensemble_step_seconds, so the queueing step shows.
"""

from __future__ import annotations

from typing import Any

import pytest
import requests
from ensemble_steps import ENSEMBLE, POST, PREP, SLOW, STEPS, build_repository, infer, load

from triton_sre import conventions as c
from triton_sre.config import ExporterSettings
from triton_sre.exporter.service import Exporter
from triton_sre.exporter.snapshot import config_summary
from triton_sre.stack.local_triton import LocalTriton
from triton_sre.triton.exposition import parse

pytestmark = [pytest.mark.triton, pytest.mark.server]  # a private LocalTriton, started here

CLIENTS, PER_CLIENT = 16, 8
STAGES = (*c.STAGE_COUNTERS, c.STAGE_OTHER)


def per_model(metrics_url: str, family: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for sample in parse(requests.get(metrics_url, timeout=30).text):
        model = dict(sample.labels).get(c.LABEL_MODEL)
        if sample.name == family and model is not None:
            out[model] = out.get(model, 0.0) + sample.value
    return out


def per_request(before: dict, after: dict, model: str, family: str) -> float:
    """Seconds per successful request of `model` in `family` between two readings."""
    done = after[c.NV_REQUEST_SUCCESS][model] - before[c.NV_REQUEST_SUCCESS][model]
    return (after[family][model] - before[family][model]) / 1e6 / done


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory, request: Any) -> dict[str, Any]:
    """One private Triton loaded once: the counters before and after the load, the pending gauge's
    peak per model while it ran, and the exporter's samples after polling across it."""
    root = tmp_path_factory.mktemp("ensemble-steps")
    triton = LocalTriton(build_repository(root), workdir=root / "work")
    triton.start()
    request.addfinalizer(triton.stop)
    infer(triton.http_url)  # each step's instances warmed
    families = (c.NV_REQUEST_SUCCESS, c.NV_REQUEST_DURATION_US, *c.STAGE_COUNTERS.values())
    settings = ExporterSettings(
        triton_url=triton.http_url, metrics_url=triton.metrics_url, interval=0.2, window=600.0
    )
    exporter = Exporter(settings)
    exporter.poll_once()
    before = {f: per_model(triton.metrics_url, f) for f in families}
    peaks: dict[str, float] = {}

    def sample() -> None:
        for model, value in per_model(triton.metrics_url, c.NV_PENDING_REQUEST_COUNT).items():
            peaks[model] = max(peaks.get(model, 0.0), value)

    load(triton.http_url, CLIENTS, PER_CLIENT, sample)
    after = {f: per_model(triton.metrics_url, f) for f in families}
    exporter.poll_once()
    samples = [(s.name, dict(s.labels), s.value) for s in parse(exporter.metrics_text().decode())]
    config = requests.get(f"{triton.http_url}/v2/models/{ENSEMBLE}/config", timeout=30).json()
    return {"before": before, "after": after, "peaks": peaks, "samples": samples, "config": config}


def test_triton_counts_no_pending_request_on_the_ensemble_while_its_step_queues(measured: dict) -> None:
    peaks = measured["peaks"]
    assert peaks[ENSEMBLE] == 0  # the gauge is there, and stays 0 under load
    assert peaks[SLOW] >= 4  # while requests wait for the batching step


def test_triton_counts_the_steps_queue_under_none_of_the_ensembles_stages(measured: dict) -> None:
    before, after = measured["before"], measured["after"]
    queue = per_request(before, after, ENSEMBLE, c.NV_QUEUE_DURATION_US)
    step_queue = per_request(before, after, SLOW, c.NV_QUEUE_DURATION_US)
    assert queue < 0.002 < 0.02 < step_queue  # the ensemble's queue is its hand-off to the first step
    # its compute counters hold its steps' compute; what is left over ("other") is their queue
    infer_s = per_request(before, after, ENSEMBLE, c.NV_COMPUTE_INFER_DURATION_US)
    steps_infer = sum(per_request(before, after, s, c.NV_COMPUTE_INFER_DURATION_US) for s in STEPS)
    assert infer_s == pytest.approx(steps_infer, rel=0.05)
    request_s = per_request(before, after, ENSEMBLE, c.NV_REQUEST_DURATION_US)
    counted = sum(per_request(before, after, ENSEMBLE, f) for f in c.STAGE_COUNTERS.values())
    steps_queue = sum(per_request(before, after, s, c.NV_QUEUE_DURATION_US) for s in STEPS)
    assert request_s - counted == pytest.approx(steps_queue, rel=0.1)


def test_the_exporter_splits_the_ensembles_time_by_step(measured: dict) -> None:
    samples = measured["samples"]
    by_step = {
        (labels[c.L_STEP], labels[c.L_STAGE]): v
        for name, labels, v in samples
        if name == c.M_ENSEMBLE_STEP_SECONDS and labels[c.LABEL_MODEL] == ENSEMBLE
    }
    assert set(by_step) == {(step, stage) for step in STEPS for stage in STAGES}
    own = {
        (labels[c.LABEL_MODEL], labels[c.L_STAGE]): v
        for name, labels, v in samples
        if name == c.M_REQUEST_STAGE_SECONDS
    }
    for step in STEPS:  # each step's own split, post's named by version 1, the others by -1
        for stage in STAGES:
            assert by_step[(step, stage)] == pytest.approx(own[(step, stage)])
    queues = {step: by_step[(step, c.STAGE_QUEUE)] for step in STEPS}
    assert max(queues, key=queues.__getitem__) == SLOW
    assert queues[SLOW] > 10 * max(queues[PREP], queues[POST])
    # no step series for a model that is not an ensemble
    assert {labels[c.LABEL_MODEL] for name, labels, _v in samples if name == c.M_ENSEMBLE_STEP_SECONDS} == {
        ENSEMBLE
    }


def test_the_config_api_gives_each_steps_version(measured: dict) -> None:
    assert config_summary(measured["config"]).steps == ((PREP, -1), (SLOW, -1), (POST, 1))


def test_the_ensembles_steps_are_exported_from_its_config(measured: dict) -> None:
    """reportsplit: what the report weighs the steps' counters by, from the real 2.51's config JSON (its
    int64 model_version a string there): prep and slow_batch at -1 (the latest), post at version 1."""
    calls = {
        (labels[c.L_STEP], labels[c.L_STEP_VERSION]): v
        for name, labels, v in measured["samples"]
        if name == c.M_ENSEMBLE_STEP_CALLS and labels[c.LABEL_MODEL] == ENSEMBLE
    }
    assert calls == {(PREP, "-1"): 1.0, (SLOW, "-1"): 1.0, (POST, "1"): 1.0}
