"""diag26 (2026-12-06): the Python backend's load-time refusals the inventory did not hold, read from
triton-inference-server/python_backend at r21.08-r26.07 (inventory.yaml, "Python backend, read again").

Each line is a load failure as core's model_lifecycle.cc prints it, with the backend's message written
as the source builds it (the libarchive text is libarchive's own, archive_read.c's "Unrecognized archive
format" with ARCHIVE_FATAL = -30). Before these entries every one of them was unknown-load-failure (the
LastModifiedTime one model-file-missing, though the file missing is the environment archive).
"""

# ruff: noqa: E501 - quoted log lines are test data

from __future__ import annotations

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text

_LOAD = "E1206 09:14:02.118204 1 model_lifecycle.cc:654] failed to load 'preprocess' version 1: "


@pytest.mark.parametrize(
    ("message", "runbook"),
    [
        # src/pb_env.cc ExtractTarFile: EXECUTION_ENV_PATH names a file that is not a gzip tar
        ("Internal: archive_read_next_header() failed with error code = -30 error message is Unrecognized archive format", c.RUNBOOK_PYTHON_MODULE_MISSING),
        # src/pb_env.cc LastModifiedTime (r23.06 on) and ExtractIfNotExtracted's stat() (r24.06 on)
        ("Internal: LastModifiedTime() failed as file '/models/preprocess/env.tar.gz' does not exists.", c.RUNBOOK_PYTHON_MODULE_MISSING),
        ("Internal: stat() of : /models/preprocess/env.tar.gz returned error.", c.RUNBOOK_PYTHON_MODULE_MISSING),
        # src/python_be.cc: the parameter takes "yes" or "no" (the source's unbalanced quote kept)
        ("Unsupported: Incorrect value for FORCE_CPU_ONLY_INPUT_TENSORS: true'", c.RUNBOOK_CONFIG_PARSE_ERROR),
        # src/stub_launcher.cc ModelAutoComplete: the model's auto_complete_config gave no usable config
        ("Internal: Auto-complete failed for preprocess", c.RUNBOOK_PYTHON_MODEL_ERROR),
        ("Internal: Failed to parse auto-complete JSON.", c.RUNBOOK_PYTHON_MODEL_ERROR),
    ],
)
def test_python_backend_load_refusals_get_their_runbook(message: str, runbook: str) -> None:
    report = diagnose_events(parse_text(_LOAD + message + "\n"))
    assert report.findings and report.findings[0].runbook == runbook, message
    assert report.findings[0].model == "preprocess"
