"""An ensemble on a CPU host is no GPU failure (journey26).

Triton's ensemble scheduler tries to create a CUDA stream for every ensemble it loads and, on a host without
a usable GPU, logs ``E ... ensemble_scheduler.cc] "unable to create stream for <ensemble>: <cuda error>"``
and goes on: the ensemble loads and serves. triage used to read that line as `cuda-driver-mismatch`,
CRITICAL, first in its answer. A backend's own ``unable to create stream: <cuda error>`` (no `for`) fails the
model's load and stays a cause.
"""

# ruff: noqa: E501 - quoted log lines are test data

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from corpus import OK_PY, config_pbtxt, ensemble_pbtxt

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text

# Real Triton 2.51 on this CPU host with two ensembles (tests/namespacing_capture.py): both READY.
CAPTURE = Path(__file__).parent / "data" / "namespacing_2.51" / "server.log"
ENSEMBLE_LINE = "unable to create stream for"
BACKEND_STREAM = 'E1206 00:35:56.294371 31511 model_lifecycle.cc:630] "failed to load \'m\' version 1: Internal: unable to create stream: CUDA driver version is insufficient for CUDA runtime version"\n'


def _diagnose(text: str):
    return diagnose_events(parse_text(text))


def test_the_captured_ensembles_stream_lines_are_no_failure() -> None:
    text = CAPTURE.read_text(encoding="utf-8")
    assert text.count(ENSEMBLE_LINE) == 2  # the capture still holds what the test is about
    report = _diagnose(text)
    assert [f.runbook for f in report.findings] == []
    assert report.harmless_lines >= 2 + text.count("CudaDriverHelper")


def test_a_backends_own_stream_failure_is_still_the_driver() -> None:
    assert [f.runbook for f in _diagnose(BACKEND_STREAM).findings] == [c.RUNBOOK_CUDA_DRIVER_MISMATCH]


def test_a_real_triton_loading_an_ensemble_on_the_cpu_has_no_failure(tmp_path: Path, fresh_triton_factory) -> None:
    repo = tmp_path / "repo"
    for name, files in {
        "step": {"config.pbtxt": config_pbtxt("step"), "1/model.py": OK_PY},
        "pipeline": {"config.pbtxt": ensemble_pbtxt("pipeline", "step"), "1/.keep": ""},
    }.items():
        for rel, body in files.items():
            path = repo / name / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(body, encoding="utf-8")
    server = fresh_triton_factory(repo)
    log = server.read_log()
    assert ENSEMBLE_LINE + " pipeline" in log  # what Triton 2.51 prints for it on a CPU host
    assert '"successfully loaded \'pipeline\'"' in log
    assert [f.runbook for f in _diagnose(log).findings] == []
    text = subprocess.run(
        [sys.executable, "-m", "triton_sre.cli", "triage", str(server.log_path)],
        capture_output=True, text=True, timeout=60,
    ).stdout  # fmt: skip
    assert "No load failure found." in text and "ensemble CUDA streams" in text  # what was ignored
