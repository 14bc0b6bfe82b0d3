"""Open MPI in front of the server (TensorRT-LLM's launch_triton_server.py runs one tritonserver per rank under
mpirun): its refusals and a rank's death are findings, never an empty answer (issue #20: the layers around
Triton). Wordings from Open MPI 4.x (ORTE) and 5.x (PRRTE) sources; the rank lines as users' pastes show them."""

# ruff: noqa: E501 - quoted log lines are test data

from __future__ import annotations

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text

_RULE = "-" * 74 + "\n"
_ERRHANDLER = (
    "*** An error occurred in MPI_Init_thread\n"
    "*** on a NULL communicator\n"
    "*** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,\n"
    "***    and potentially your MPI job)\n"
)


def _runbooks(text: str) -> list[str]:
    return [f.runbook for f in diagnose_events(parse_text(text)).findings]


@pytest.mark.parametrize(
    ("text", "runbook"),
    [
        # a rank SIGKILLed while the engine loads: the OOM killer
        (
            "I1203 10:00:00.000000 812 model_lifecycle.cc:461] loading: tensorrt_llm:1\n"
            + _RULE
            + "mpirun noticed that process rank 1 with PID 0 on node triton-0 exited on signal 9 (Killed).\n"
            + _RULE,
            c.RUNBOOK_HOST_RESOURCE_EXHAUSTED,
        ),
        # Open MPI 4.x and 5.x refusing root
        (_RULE + "mpirun has detected an attempt to run as root.\nRunning at root is *strongly* discouraged\n",
         c.RUNBOOK_SERVER_OPTION_INVALID),
        ("prterun has detected an attempt to run as root.\n\nRunning as root is *strongly* discouraged\n",
         c.RUNBOOK_SERVER_OPTION_INVALID),
        # more ranks than slots
        (
            _RULE
            + "There are not enough slots available in the system to satisfy the 4\n"
            + "slots that were requested by the application:\n\n  /opt/tritonserver/bin/tritonserver\n",
            c.RUNBOOK_SERVER_OPTION_INVALID,
        ),
        # the fatal error handler and a job aborted after a rank's non-zero exit: no cause named, never empty
        (_ERRHANDLER, c.RUNBOOK_UNKNOWN_LOAD_FAILURE),
        (
            _RULE
            + "Primary job  terminated normally, but 1 process returned\n"
            + "a non-zero exit code. Per user-direction, the job has been aborted.\n"
            + _RULE,
            c.RUNBOOK_UNKNOWN_LOAD_FAILURE,
        ),
        ("mpirun noticed that process rank 0 with PID 4100 on node gpu-1 exited on signal 11 (Segmentation fault).\n",
         c.RUNBOOK_SERVER_CRASHED),
    ],
)  # fmt: skip
def test_open_mpi_says_why_the_ranks_did_not_run(text: str, runbook: str) -> None:
    assert _runbooks(text)[:1] == [runbook]


def test_a_rank_stopped_by_a_signal_that_stops_is_no_failure() -> None:
    # SIGTERM / SIGINT: the job was stopped (Triton's exit handler's signals), nothing failed
    for signal in ("15 (Terminated)", "2 (Interrupt)"):
        assert _runbooks(f"mpirun noticed that process rank 0 with PID 9 on node n exited on signal {signal}.\n") == []


def test_the_cause_a_rank_printed_comes_before_its_death() -> None:
    text = (
        "[TensorRT-LLM][ERROR] Assertion failed: Failed to deserialize cuda engine (/src/tensorrt_llm/runtime/"
        "tllmRuntime.cpp:72)\n"
        + _RULE
        + "mpirun noticed that process rank 0 with PID 0 on node triton-0 exited on signal 6 (Aborted).\n"
    )
    assert _runbooks(text)[0] == c.RUNBOOK_LLM_BACKEND_CONFIG
