"""Issue 20: CUDA's own error table (the ``cuda`` entries of library_errors.yaml that carry ``enum``).

Each cudaGetErrorString text is quoted as the layers around Triton print it, inside the frames users paste:
PyTorch's ``CUDA error: <text>`` (a Python model's exception as core's load failure quotes it), the backends'
common library's ``unable to create stream: <text>`` (backend_common.cc), ONNX Runtime's CUDA_CALL ``CUDA
failure <n>: <text> ; GPU=0 ; hostname=... ; expr=...``, TensorRT's cudaCheck ``Cuda Error in <fn>: <n>
(<text>)`` and 8.6-10's ``Error Code 1: Cuda Runtime (<text>)`` on its logger's line, TensorRT-LLM's
TLLM_CUDA_CHECK ``CUDA runtime error in <call>: <text>``, CuPy's ``cudaErrorXxx: <text>`` and a driver-API
check's ``CUDA_ERROR_XXX: <text>``. The first finding must be the table's page in every frame.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.library_errors import LibraryError, library_errors
from triton_sre.diagnosis.logparse import parse_text

DOC = Path(__file__).resolve().parent.parent / "docs" / "cuda-errors.md"
PYTORCH = "CUDA error: "
LOAD_FAILED = "E1207 10:01:02.123456 1 model_lifecycle.cc:642] failed to load 'm' version 1: Internal: "

TABLE = tuple(e for e in library_errors() if e.enum)


def cuda_text(entry: LibraryError) -> str:
    return entry.text.removeprefix(PYTORCH)


def number(entry: LibraryError) -> str:
    return re.search(r"\((\d+)", entry.enum).group(1)


def frames(entry: LibraryError) -> dict[str, str]:
    text, n = cuda_text(entry), number(entry)
    runtime_name = entry.enum.split(" ", 1)[0]
    shown = {
        "pytorch": f"{LOAD_FAILED}RuntimeError: {entry.text}\n",
        "core-stream": f"{LOAD_FAILED}unable to create stream: {text}\n",
        "onnxruntime": (
            f"{LOAD_FAILED}onnx runtime error 1: CUDA failure {n}: {text} ; GPU=0 ; hostname=triton-0 ;"
            " file=/onnxruntime_src/onnxruntime/core/providers/cuda/cuda_execution_provider.cc ; line=282 ;"
            " expr=cudaSetDevice(info_.device_id); \n"
        ),
        "tensorrt": (
            f"E1207 10:01:02.100000 1 logging.cc:43] ../rtSafe/safeRuntime.cpp (25) - Cuda Error in allocate:"
            f" {n} ({text})\n"
        ),
        "tensorrt-10": (
            "E1207 10:01:02.100000 1 logging.cc:43] 1: [resources.cpp::syncStreams::407] Error Code 1:"
            f" Cuda Runtime ({text})\n"
        ),
        "tensorrt-llm": (
            "E1207 10:01:02.100000 1 model_instance_state.cc:551] [TensorRT-LLM][ERROR] CUDA runtime error in"
            f" cudaSetDevice(device): {text} (/workspace/tensorrt_llm/cpp/common/cudaUtils.h:120)\n"
        ),
        "cupy": f"{LOAD_FAILED}cupy_backends.cuda.api.runtime.CUDARuntimeError: {runtime_name}: {text}\n",
    }
    driver = re.search(r"\bCUDA_ERROR_[A-Z_]+", entry.enum)
    if driver:
        shown["driver-api"] = (
            f"{LOAD_FAILED}cupy_backends.cuda.api.driver.CUDADriverError: {driver.group()}: {text}\n"
        )
    return shown


def first_runbook(log: str) -> str:
    report = diagnose_events(parse_text(log))
    return report.findings[0].runbook if report.findings else "(no finding)"


CASES = [
    pytest.param(entry, frame, log, id=f"{entry.enum.split(' ', 1)[0]}-{len(cuda_text(entry))}-{frame}")
    for entry in TABLE
    for frame, log in frames(entry).items()
]


@pytest.mark.parametrize(("entry", "frame", "log"), CASES)
def test_cuda_text_lands_on_its_page_in_every_frame(entry: LibraryError, frame: str, log: str) -> None:
    assert first_runbook(log) == entry.runbook, (frame, log)


def test_the_table_is_cudas_own_in_pytorchs_frame() -> None:
    assert len(TABLE) >= 30
    for entry in TABLE:
        assert entry.group == "cuda" and entry.text.startswith(PYTORCH), entry
        assert re.match(r"cudaError[A-Z]\w+ \(\d+", entry.enum), entry.enum
        assert entry.releases and entry.why
    assert len({cuda_text(e) for e in TABLE}) == len(TABLE)


def test_both_wordings_of_the_renamed_busy_error_read_the_same() -> None:
    """cudaErrorDevicesUnavailable (46): "all CUDA-capable devices are busy or unavailable" (CUDA 8 to 11.3 in
    the reports read), "CUDA-capable device(s) is/are busy or unavailable" after (and the driver's table)."""
    busy = [e for e in TABLE if e.enum.startswith("cudaErrorDevicesUnavailable (46)")]
    assert {cuda_text(e) for e in busy} == {
        "all CUDA-capable devices are busy or unavailable",
        "CUDA-capable device(s) is/are busy or unavailable",
    }
    assert {e.runbook for e in busy} == {c.RUNBOOK_CUDA_DRIVER_MISMATCH}
    assert all(("older wording" in e.releases) != ("newer wording" in e.releases) for e in busy)


def test_a_kernel_fault_that_aborts_the_process_is_the_crash() -> None:
    """No page covers an illegal memory access; when the process then aborts, the crash is the page."""
    log = (
        "terminate called after throwing an instance of 'c10::Error'\n"
        "  what():  CUDA error: an illegal memory access was encountered\n"
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below"
        " might be incorrect.\n"
        "Signal (6) received.\n"
        " 0# 0x00005603F4D6B459 in /opt/tritonserver/bin/tritonserver\n"
    )
    assert first_runbook(log) == c.RUNBOOK_SERVER_CRASHED


@pytest.mark.parametrize(
    ("line", "page"),
    [
        # operation not permitted is CUDA's refusal, not a file's EACCES; an illegal instruction the GPU's,
        # not a CPU without AVX: no page for either.
        (f"{LOAD_FAILED}RuntimeError: CUDA error: operation not permitted\n", c.RUNBOOK_UNKNOWN_LOAD_FAILURE),
        (
            f"{LOAD_FAILED}RuntimeError: CUDA error: an illegal instruction was encountered\n",
            c.RUNBOOK_UNKNOWN_LOAD_FAILURE,
        ),
        # ... while the words outside a CUDA frame keep their pages.
        (
            f"{LOAD_FAILED}[Errno 1] Operation not permitted: '/models/m/1/model.py'\n",
            c.RUNBOOK_PERMISSION_DENIED,
        ),
        # core's stream creation reads as the driver's unless CUDA's text names another page.
        (f"{LOAD_FAILED}unable to create stream: initialization error\n", c.RUNBOOK_CUDA_DRIVER_MISMATCH),
    ],
)
def test_cuda_frames_decide_over_the_words_around_them(line: str, page: str) -> None:
    assert first_runbook(line) == page


def test_the_docs_table_lists_every_entry() -> None:
    rows = {line for line in DOC.read_text(encoding="utf-8").splitlines() if line.startswith("| `")}
    for entry in TABLE:
        row = next((r for r in rows if r.startswith(f"| `{cuda_text(entry)}` |")), None)
        assert row is not None, cuda_text(entry)
        assert entry.enum.split(" ", 1)[0] in row and f"[{entry.runbook}](" in row, row
    assert len(rows) == len(TABLE)
