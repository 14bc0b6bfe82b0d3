"""heldout80-81's misses, and heldout73's never-empty failure, fixed by class from their sources.

- GDB's report of a fatal signal (gdb/infrun.c print_signal_received_reason, corelow.c on a core file):
  ``Thread 327 "tritonserver" received signal SIGSEGV, Segmentation fault.``, ``Program terminated with signal
  SIGSEGV, Segmentation fault.``: the server crashed (server-crashed); a signal GDB stops on that kills
  nothing (SIGINT, SIGTRAP) is no crash. (SIGBUS keeps its page: shm-too-small.)
- Core's pinned-memory pool refused because CUDA says the host's GPUs are there but refused (``all
  CUDA-capable devices are busy or unavailable``: exclusive-process mode, a device another process holds) is
  no CPU host's harmless line: docs/cuda-errors.md gives that text cuda-driver-mismatch.
- The Python stub's own failure report, which pb_stub.cc prints at INFO (``Failed to initialize Python stub:
  <Error>``), is the model's failure (critical), also where the paste holds nothing else.
"""

from __future__ import annotations

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text


def _findings(text: str) -> list[tuple[str, str]]:
    return [(f.runbook, f.severity) for f in diagnose_events(parse_text(text + "\n")).findings]


@pytest.mark.parametrize(
    "line",
    [
        'Thread 327 "tritonserver" received signal SIGSEGV, Segmentation fault.',
        "Program terminated with signal SIGSEGV, Segmentation fault.",
        "Program received signal SIGABRT, Aborted.",
        "Thread 12 received signal SIGFPE, Arithmetic exception.",
    ],
)
def test_gdbs_fatal_signal_reports_are_a_crash(line: str) -> None:
    assert _findings(line)[:1] == [(c.RUNBOOK_SERVER_CRASHED, c.IMPACT_CRITICAL)]


def test_a_signal_gdb_stops_on_that_kills_nothing_is_no_crash() -> None:
    assert not _findings('Thread 1 "tritonserver" received signal SIGINT, Interrupt.')


GPU_HOST = (
    "I0416 20:04:12.365805 69759 metrics.cc:164] found 2 GPUs supporting NVML metrics\n"
    "I0416 20:04:12.371289 69759 metrics.cc:173]   GPU 0: Tesla T4\n"
)


def test_pinned_memory_refused_by_busy_gpus_is_the_drivers() -> None:
    line = (
        "E0416 20:04:12.388024 69759 pinned_memory_manager.cc:194] failed to allocate pinned system memory: "
        "all CUDA-capable devices are busy or unavailable"
    )
    assert _findings(GPU_HOST + line)[:1] == [(c.RUNBOOK_CUDA_DRIVER_MISMATCH, c.IMPACT_CRITICAL)]
    cpu_host = (
        'W1206 16:01:44.123433 1 pinned_memory_manager.cc:273] "Unable to allocate pinned system memory, '
        'pinned memory pool will not be available: no CUDA-capable device is detected"'
    )
    assert not _findings(cpu_host)


@pytest.mark.parametrize("auto", ["", " for auto-complete"])
def test_the_stubs_failure_at_info_is_the_models_failure(auto: str) -> None:
    line = (
        f'I0911 08:21:51.554457 1 pb_stub.cc:389] "Failed to initialize Python stub{auto}: ValueError: '
        "tokenizer_dir is not set\\n\\nAt:\\n  /models/pre/1/model.py(41): initialize\\n\""
    )
    assert _findings(line)[:1] == [(c.RUNBOOK_PYTHON_MODEL_ERROR, c.IMPACT_CRITICAL)]
