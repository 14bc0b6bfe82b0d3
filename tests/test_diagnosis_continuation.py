"""The raw lines folded under one of Triton's ``I`` lines (diagnosis/continuation.py): a library's own INFO record
that announces its rest ("... due to:") keeps that rest, and a failure printed after it is still read."""

# ruff: noqa: E501 - quoted log lines are test data

from __future__ import annotations

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text

_I = "I0324 22:27:49.533671 1676 model_inst_state.hpp:64] Loading TritonPythonModel from model.py in path './repo/2_queryfaiss/1'\n"
# faiss/loader.py (1.7 on): an INFO record, the exception's repr on the next line, then the fallback it loads
FAISS = (
    "03/24/2022 10:27:49 PM INFO:Loading faiss with AVX2 support.\n"
    "03/24/2022 10:27:49 PM INFO:Could not load library with AVX2 support due to:\n"
    "ModuleNotFoundError(\"No module named 'faiss.swigfaiss_avx2'\")\n"
    "03/24/2022 10:27:49 PM INFO:Loading faiss.\n"
    "03/24/2022 10:27:49 PM INFO:Successfully loaded faiss.\n"
)


def _runbooks(text: str) -> list[str]:
    return [f.runbook for f in diagnose_events(parse_text(text)).findings]


@pytest.mark.parametrize("record", [FAISS, FAISS.replace("03/24/2022 10:27:49 PM INFO:", "INFO:faiss.loader:")])
def test_an_info_records_announced_rest_is_no_failure(record: str) -> None:
    assert _runbooks(_I + record) == []


@pytest.mark.parametrize(
    ("after", "runbook"),
    [
        ("Killed\n", c.RUNBOOK_HOST_RESOURCE_EXHAUSTED),
        (
            'Traceback (most recent call last):\n  File "/models/m/1/model.py", line 3, in initialize\n'
            "ImportError: cannot import name 'IndexFlat' from 'faiss'\n",
            c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
        ),
    ],
)
def test_a_failure_after_the_record_is_still_read(after: str, runbook: str) -> None:
    record = "03/24/2022 10:27:49 PM INFO:Could not load library with AVX2 support due to:\n"
    assert _runbooks(_I + record + after) == [runbook]


def test_a_python_warning_and_its_source_line_are_no_failure() -> None:
    # warnings.formatwarning: a library's UserWarning that an optional import failed (Merlin's torch mappings)
    warning = (
        "/usr/local/lib/python3.8/dist-packages/merlin/dtypes/mappings/torch.py:43: UserWarning: PyTorch dtype "
        "mappings did not load successfully due to an error: No module named 'torch'\n"
        '  warn(f"PyTorch dtype mappings did not load successfully due to an error: {exc.msg}")\n'
    )
    assert _runbooks(_I + warning) == []
    # alone, as the first lines of a paste: a warning at most
    assert {f.severity for f in diagnose_events(parse_text(warning)).findings} <= {c.IMPACT_WARNING}
