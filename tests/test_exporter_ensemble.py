"""An ensemble gets no batching ratio or batch fill from the exporter (journey26), on the real Triton 2.51.

Triton counts an ensemble request once as an execution and its rows as inferences (core's
ensemble_scheduler.cc: `UpdateInferBatchStatsWithDuration(..., max(1, BatchSize()))` once per request), so
the ratio of a `pipeline` sent 2 rows a request read 2.0: a batching figure for a model with no batcher.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import requests
from namespacing_capture import ENSEMBLE, infer

from triton_sre import conventions as c
from triton_sre.config import ExporterSettings
from triton_sre.demo import SAMPLE_REPOSITORY, VECTOR_SCALE
from triton_sre.exporter.metricsfold import counters_from_samples
from triton_sre.exporter.service import Exporter
from triton_sre.exporter.snapshot import keep_family, row_value
from triton_sre.triton.exposition import parse

pytestmark = pytest.mark.triton

PIPELINE = "pipeline"
ROWS = 2
REQUESTS = 6


def ensemble_repository(root: Path) -> Path:
    """vector_scale (dynamic batching, max_batch_size 16) and a one-step ensemble over it."""
    repo = root / "repo"
    shutil.copytree(SAMPLE_REPOSITORY / VECTOR_SCALE, repo / VECTOR_SCALE)
    (repo / PIPELINE / "1").mkdir(parents=True)
    config = ENSEMBLE.format(name=PIPELINE, platform=c.PLATFORM_ENSEMBLE, step=VECTOR_SCALE)
    (repo / PIPELINE / "config.pbtxt").write_text(config, encoding="utf-8")
    return repo


def counters(metrics_url: str) -> dict:
    return counters_from_samples(parse(requests.get(metrics_url, timeout=30).text, keep=keep_family))[0]


def test_an_ensemble_has_no_batching_ratio_and_its_step_keeps_its_own(
    fresh_triton_factory: Any, tmp_path: Path
) -> None:
    triton = fresh_triton_factory(ensemble_repository(tmp_path))
    settings = ExporterSettings(
        triton_url=triton.http_url, metrics_url=triton.metrics_url, interval=0.2, window=600.0
    )
    exporter = Exporter(settings)
    before = counters(triton.metrics_url)
    exporter.poll_once()
    for _ in range(REQUESTS):
        infer(triton.http_url, PIPELINE, ROWS).raise_for_status()
    exporter.poll_once()
    after = counters(triton.metrics_url)

    # what Triton counts for the ensemble: the rows as inferences, one execution per request
    key = (PIPELINE, "1")
    inferences = row_value(after[key], c.NV_INFERENCE_COUNT) - row_value(before[key], c.NV_INFERENCE_COUNT)
    executions = row_value(after[key], c.NV_EXEC_COUNT) - row_value(before[key], c.NV_EXEC_COUNT)
    assert (inferences, executions) == (REQUESTS * ROWS, REQUESTS)

    samples = [(s.name, dict(s.labels), s.value) for s in parse(exporter.metrics_text().decode())]
    ratios = {labels[c.LABEL_MODEL]: v for name, labels, v in samples if name == c.M_BATCHING_RATIO}
    fills = {labels[c.LABEL_MODEL] for name, labels, _v in samples if name == c.M_BATCH_FILL_RATIO}
    assert PIPELINE not in ratios and PIPELINE not in fills
    # its step executed once per request, with the request's rows: its ratio is its own
    assert ratios[VECTOR_SCALE] == pytest.approx(float(ROWS))
    assert VECTOR_SCALE in fills
    ensembles = {labels[c.LABEL_MODEL]: v for name, labels, v in samples if name == c.M_MODEL_ENSEMBLE}
    assert ensembles == {PIPELINE: 1.0}
