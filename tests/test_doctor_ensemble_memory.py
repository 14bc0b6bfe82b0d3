"""doctor's `model-memory` check leaves ensembles out (journey26), against the real Triton 2.51.

An ensemble reports no `memory_usage` (its steps hold the memory) and has no backend: the check counted the
team's `pipeline` among the silent models and listed its backend as `?` ("5 of 5 models ...; backend ?,
python").
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from namespacing_capture import ENSEMBLE

from triton_sre import conventions as c
from triton_sre.demo import SAMPLE_REPOSITORY, VECTOR_SCALE
from triton_sre.doctor.command import diagnose
from triton_sre.slo import default_spec

PIPELINE = "pipeline"


def test_an_ensemble_is_not_a_model_without_memory(fresh_triton_factory: Any, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(SAMPLE_REPOSITORY / VECTOR_SCALE, repo / VECTOR_SCALE)
    (repo / PIPELINE / "1").mkdir(parents=True)
    config = ENSEMBLE.format(name=PIPELINE, platform=c.PLATFORM_ENSEMBLE, step=VECTOR_SCALE)
    (repo / PIPELINE / "config.pbtxt").write_text(config, encoding="utf-8")
    triton = fresh_triton_factory(repo)
    report = diagnose(triton.http_url, triton.metrics_url, default_spec())
    check = next(ch for ch in report.checks if ch.id == c.CHECK_MODEL_MEMORY)
    silent = f"1 of 1 models report no memory_usage in their statistics ({VECTOR_SCALE}; backend python)"
    assert check.found == silent
    assert not check.needed  # the Python backend reports none: absent, not missing
