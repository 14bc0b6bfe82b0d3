"""heldout83-88's misses, fixed by class from their sources.

- NVML's return codes as pynvml raises them (nvidia-ml-py pynvml.py): the library missing, the driver not
  loaded, the NVML/RM version mismatch are the host driver's (cuda-driver-mismatch); the table is
  library_errors.yaml, group nvml, and tests/test_diagnosis_library_errors.py wraps each text.
- NCCL's own failure inside TensorRT-LLM's error (NCCLCHECK: ``[TensorRT-LLM][ERROR] Failed, NCCL error
  <file>:<line> '<ncclGetErrorString>'``) is NCCL's, not the backend's configuration; NCCL's texts have no
  page (unknown-load-failure). A crash report pasted under such a line is a crash of its own, and beside a
  server-wide failure no page covers, the crash's page comes first (server-crashed's Meaning: the crash
  that nothing in the log explains).
"""

from __future__ import annotations

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text

NCCL_INTERNAL = (
    "[TensorRT-LLM][ERROR] Failed, NCCL error "
    "/app/tensorrt_llm/cpp/tensorrt_llm/runtime/ncclCommunicator.cpp:122 "
    "'internal error - please report this issue to the NCCL developers'"
)
ABORT = [
    "double free or corruption (fasttop)",
    "[gpu-host:46796] *** Process received signal ***",
    "[gpu-host:46796] Signal: Aborted (6)",
]


def _runbooks(text: str) -> list[str]:
    return [f.runbook for f in diagnose_events(parse_text(text + "\n")).findings]


@pytest.mark.parametrize(
    "error",
    [
        "internal error - please report this issue to the NCCL developers",
        "unhandled system error (run with NCCL_DEBUG=INFO for details)",
        "unhandled cuda error (run with NCCL_DEBUG=INFO for details)",
    ],
)
def test_tensorrt_llms_nccl_check_is_nccls_failure_not_the_backend_config(error: str) -> None:
    line = f"[TensorRT-LLM][ERROR] Failed, NCCL error /app/cpp/tensorrt_llm/common/cudaUtils.h:210 '{error}'"
    assert _runbooks(line)[:1] == [c.RUNBOOK_UNKNOWN_LOAD_FAILURE]


def test_a_tensorrt_llm_config_error_stays_the_backend_config() -> None:
    line = "[TensorRT-LLM][ERROR] [json.exception.out_of_range.403] key 'lora_config' not found"
    assert _runbooks(line)[:1] == [c.RUNBOOK_LLM_BACKEND_CONFIG]


@pytest.mark.parametrize("prefix", ["", "root@node:/workspace# "])
def test_a_crash_pasted_under_an_unleveled_error_line_is_a_crash_of_its_own(prefix: str) -> None:
    found = _runbooks("\n".join([prefix + NCCL_INTERNAL, "", *ABORT]))
    assert found[:1] == [c.RUNBOOK_SERVER_CRASHED]
    assert found[1:] in ([], [c.RUNBOOK_UNKNOWN_LOAD_FAILURE])


def test_the_crash_folded_under_the_error_line_splits_off() -> None:
    assert _runbooks("\n".join([NCCL_INTERNAL, *ABORT])) == [
        c.RUNBOOK_SERVER_CRASHED,
        c.RUNBOOK_UNKNOWN_LOAD_FAILURE,
    ]


def test_the_crash_comes_after_a_cause_that_has_a_page() -> None:
    oom = "[TensorRT-LLM][ERROR] CUDA runtime error in cudaMalloc(ptr, n): out of memory"
    assert _runbooks("\n".join([oom, *ABORT]))[:1] == [c.RUNBOOK_GPU_OUT_OF_MEMORY]


def test_a_crash_under_a_line_that_says_no_failure_stays_with_it() -> None:
    # A bare line of no level and no failure wording (a program's own print) keeps the abort in its message:
    # one event, one finding, as before.
    assert len(_runbooks("\n".join(["Remove feature extractor!", "free(): invalid pointer"]))) == 1
