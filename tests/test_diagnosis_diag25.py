"""diag25 (2026-12-05): the corpus's remaining first-finding misses, fixed by class.

- gRPC core's client channel backup poller (src/core/ext/filters/client_channel/backup_poller.cc, later
  src/core/client_channel/backup_poller.cc; grpc/grpc pull 12732) logs a failed poll of a client channel as
  "Run client channel backup poller: {...}" (grpc/grpc issue 22508: a Python client's process). It is a
  gRPC client's line, like a client's "failed to connect to all addresses": beside Triton's own lines it is
  no finding, before or after the model table; alone it still gets one (never an empty answer).
- NVRTC refusing the GPU architecture it is asked to compile for (``nvrtc: error: invalid value for
  --gpu-architecture (-arch)``, NVRTC_ERROR_INVALID_OPTION): the CUDA toolkit in the image has no target for
  this GPU (NVRTC 11.2 and sm_89, eyalroz/cuda-api-wrappers issue 509; CUDA 9.1 and compute_21, cupy/cupy
  issue 1651), as ``no kernel image is available``: platform-unsupported, ahead of the crash it causes.
"""

# ruff: noqa: E501 - quoted log lines are test data

from __future__ import annotations

from test_diagnosis_round8 import LOGS, diagnose
from test_diagnosis_round22 import _LOADED

from triton_sre import conventions as c

# Written the way gpr_log prints it (severity and date, nanoseconds, thread id, file:line) with the error
# JSON grpc_error_string gives for epoll_wait failing (the ev_epoll1 poller of grpc/grpc issue 22508).
_POLLER = (
    "E0314 08:12:45.118204733   48211 backup_poller.cc:132]       Run client channel backup poller: "
    '{"created":"@1710403965.118180112","description":"pollset_work","file":"src/core/lib/iomgr/ev_epoll1_linux.cc",'
    '"file_line":242,"referenced_errors":[{"created":"@1710403965.118171905","description":"Bad file descriptor",'
    '"errno":9,"file":"src/core/lib/iomgr/ev_epoll1_linux.cc","file_line":731,"os_error":"Bad file descriptor",'
    '"syscall":"epoll_wait"}]}\n'
)
# A model that loads, then its READY table (round 22's lines), then the listener.
_TRITON = (
    _LOADED + "I0603 10:00:01.394511 1 grpc_server.cc:2451] Started GRPCInferenceService at 0.0.0.0:8001\n"
)


def test_a_grpc_client_poller_line_before_a_ready_server_is_no_finding() -> None:
    report = diagnose(_POLLER + _TRITON)
    assert not report.findings


def test_a_grpc_client_poller_line_after_the_model_table_is_no_failure() -> None:
    report = diagnose(_TRITON + _POLLER)
    assert not report.has_failure
    assert not any(f.severity == c.IMPACT_CRITICAL for f in report.findings)


def test_a_grpc_client_poller_line_alone_still_gets_a_finding() -> None:
    assert diagnose(_POLLER).findings


def test_a_server_failure_beside_the_poller_line_still_leads() -> None:
    failed = "E0314 08:12:51.020334 1 model_lifecycle.cc:638] failed to load 'ranker' version 1: Invalid argument: model directory does not contain any version\n"
    report = diagnose(_POLLER + failed)
    assert report.has_failure and report.findings[0].model == "ranker"


def test_heldout57_notebook_docker_logs_has_no_finding() -> None:
    name = "healthy-fil-fraud-detection-notebook-2112-four-models-two-gpus"
    assert diagnose((LOGS / "heldout57" / f"{name}.log").read_text()).findings == ()


# -- 2. NVRTC without a target for this GPU ----------------------------------------------------------------

# PyTorch's fuser compiling a kernel at execute through Triton's libtorch backend (the backend's "PyTorch
# execute failure: " prefix, libtorch.cc), as NVRTC's log words the refused option.
_NVRTC_ARCH = "nvrtc: error: invalid value for --gpu-architecture (-arch)"


def _load_failed(reason: str) -> str:
    return f"E0902 11:04:32.107455 1 model_lifecycle.cc:638] failed to load 'vocoder' version 1: Internal: {reason}\n"


def test_nvrtc_refusing_the_gpu_architecture_is_platform_unsupported() -> None:
    report = diagnose(_load_failed(f"RuntimeError: {_NVRTC_ARCH}"))
    assert report.findings[0].runbook == c.RUNBOOK_PLATFORM_UNSUPPORTED


def test_nvrtc_arch_refusal_leads_the_crash_it_causes() -> None:
    text = (
        "I0902 11:04:31.552913 1 libtorch.cc:2076] TRITONBACKEND_ModelInstanceInitialize: vocoder (GPU device 0)\n"
        "I0902 11:04:32.107455 1 model_lifecycle.cc:693] successfully loaded 'vocoder' version 1\n"
        "terminate called after throwing an instance of 'std::runtime_error'\n"
        f"  what():  async response status: Internal - PyTorch execute failure: {_NVRTC_ARCH}\n"
        "\n"
        "nvrtc compilation failed:\n"
    )
    report = diagnose(text)
    assert report.has_failure
    assert report.findings[0].runbook == c.RUNBOOK_PLATFORM_UNSUPPORTED


def test_another_nvrtc_option_error_is_no_platform_finding() -> None:
    report = diagnose(_load_failed("RuntimeError: nvrtc: error: unrecognized option --fmad=maybe"))
    assert report.has_failure and report.findings[0].runbook != c.RUNBOOK_PLATFORM_UNSUPPORTED
