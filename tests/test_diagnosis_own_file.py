"""A Python model whose code cannot open a file of its own repository folder is told to restore the file.

journey23 removed `tokenizer/1/vocab.json` (a package that forgot a data file): the finding said to fix the
exception in model.py, while the code was right and the file was missing.
"""

from __future__ import annotations

import io

from triton_sre import conventions as c
from triton_sre.diagnosis.api import diagnose_stream
from triton_sre.diagnosis.catalog import load_catalog
from triton_sre.diagnosis.report import Finding

FAILED = (
    "E1205 17:16:31.130279 22294 model_lifecycle.cc:642] \"failed to load 'tokenizer' version 1: Internal: "
    "FileNotFoundError: [Errno 2] No such file or directory: '{path}'"
    '\\n\\nAt:\\n  /models/tokenizer/1/model.py(9): initialize\\n"'
)


LOADING = 'I1205 17:16:30.702506 22294 model_lifecycle.cc:472] "loading: tokenizer:1"\n'


def _finding(path: str) -> Finding:
    log = LOADING + FAILED.format(path=path)
    catalog = load_catalog()
    (finding,) = diagnose_stream(io.BytesIO(log.encode()), {}, catalog.remediations).findings
    assert finding.runbook == c.RUNBOOK_PYTHON_MODEL_ERROR
    return finding


def test_a_missing_file_of_the_models_own_folder_is_to_be_restored() -> None:
    finding = _finding("/models/tokenizer/1/vocab.json")
    assert "could not open /models/tokenizer/1/vocab.json" in finding.remediation
    assert "restore it" in finding.remediation
    assert "Fix the exception" not in finding.remediation


def test_a_missing_file_elsewhere_keeps_the_pages_fix() -> None:
    finding = _finding("/root/.cache/huggingface/hub/vocab.json")
    assert "could not open" not in finding.remediation
    assert finding.remediation.startswith("Fix the exception")
