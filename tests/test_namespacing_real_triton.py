"""The real Triton 2.51 with `--model-namespacing=true` and two repositories each holding a model
named `vector_scale` (tests/namespacing_capture.py): what it shows, and the exporter polling it."""

from __future__ import annotations

from pathlib import Path

import pytest
import requests
from namespacing_capture import REPOSITORIES, SECOND_ROUND, build_repositories, send, triton_arguments

from triton_sre import conventions as c
from triton_sre.config import ExporterSettings
from triton_sre.demo import VECTOR_SCALE
from triton_sre.doctor.command import triton_facts
from triton_sre.exporter.service import Exporter
from triton_sre.triton.client import TritonClient
from triton_sre.triton.exposition import parse

pytestmark = pytest.mark.triton


def test_the_exporter_keeps_two_namespaces_apart_on_the_real_server(fresh_triton_factory, tmp_path):
    repositories = build_repositories(tmp_path)
    repository, extra = triton_arguments(repositories)
    triton = fresh_triton_factory(repository, extra_args=extra)

    # Triton accepts the flag and labels each model with its repository path
    send(triton.http_url, dict.fromkeys(REPOSITORIES, 1))
    body = requests.get(triton.metrics_url, timeout=30).text
    labelled = {
        dict(s.labels).get(c.LABEL_NAMESPACE)
        for s in parse(body)
        if dict(s.labels).get(c.LABEL_MODEL) == VECTOR_SCALE
    }
    assert labelled == {str(path) for path in repositories}
    index = requests.post(f"{triton.http_url}/v2/repository/index", timeout=30).json()
    assert [row["name"] for row in index].count(VECTOR_SCALE) == 2
    assert all(c.LABEL_NAMESPACE not in row for row in index)
    assert requests.get(f"{triton.http_url}/v2/models/stats", timeout=30).status_code == 400
    assert "::" in triton.read_log()  # log lines name a model `<repository path>::<model>`

    exporter = Exporter(
        ExporterSettings(
            triton_url=triton.http_url, metrics_url=triton.metrics_url, interval=0.2, window=60.0
        )
    )
    exporter.poll_once()
    send(triton.http_url, SECOND_ROUND)
    exporter.poll_once()
    ratios = {
        Path(dict(s.labels)[c.LABEL_NAMESPACE]).name: s.value
        for s in parse(exporter.metrics_text().decode())
        if s.name == c.M_BATCHING_RATIO and dict(s.labels)[c.LABEL_MODEL] == VECTOR_SCALE
    }
    assert ratios == {folder: float(rows) for folder, (_ensemble, rows) in REPOSITORIES.items()}
    # the refused statistics are counted at every poll, as docs/exporter.md says
    errors = {
        (dict(s.labels)[c.L_TARGET], dict(s.labels)[c.L_KIND]): s.value
        for s in parse(exporter.metrics_text().decode())
        if s.name == c.M_POLL_ERRORS
    }
    assert errors.get((c.TARGET_STATS, c.FAULT_HTTP_STATUS)) == 2.0

    # doctor reads the server (the statistics' refusal is its model-memory finding, not exit 2)
    facts = triton_facts(TritonClient(triton.http_url, triton.metrics_url))
    assert "namespacing" in facts.stats_refused
