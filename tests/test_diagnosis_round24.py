"""Round 24 of issue 20: the classes behind heldout31's, heldout32's and heldout33's scored misses.

The three sets were scored once (tests/data/logs/SPLIT.md); their misses are development cases
now. Each class is checked on wording from its emitting source (named in a comment) and on the held-out
case beside it.
"""

# ruff: noqa: E501 - quoted log lines are test data

from __future__ import annotations

import accuracy
import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.assemble import STUB_DIED_FIX
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text


def _first(text: str) -> tuple[str, str]:
    """The runbook and the first quoted line of the first finding (("", "") when there is none)."""
    findings = diagnose_events(parse_text(text)).findings
    if not findings:
        return "", ""
    return findings[0].runbook, findings[0].evidence[0].text


# ------------------------------- class 1: Paddle's C++ traceback is no Python model's traceback
# Paddle's enforce (paddle/fluid/platform/enforce.h, GetCurrentTraceBackString; paddle/fluid/platform/
# init.cc, the signal handler) prints "C++ Traceback (most recent call last):", the C++ frames, then an
# "Error Message Summary:" whose last line is "<Kind>Error: <message>". Inside the Paddle backend it is
# the library failing, not a model.py: its summary decides, else the terminate line, never python-model-error.
_PADDLE_HEADER = (
    "I0404 13:46:31.825222 1 paddle.cc:1138] TRITONBACKEND_ModelInstanceInitialize: ocr_det_0 (GPU device 0)\n"
    "\n\n--------------------------------------\n"
    "C++ Traceback (most recent call last):\n"
    "--------------------------------------\n"
    "0   paddle_infer::Predictor::Predictor(paddle::AnalysisConfig const&)\n"
    "1   paddle::AnalysisPredictor::Init(std::shared_ptr<paddle::framework::Scope> const&, std::shared_ptr<paddle::framework::ProgramDesc> const&)\n"
    "\n----------------------\nError Message Summary:\n----------------------\n"
)


@pytest.mark.parametrize(
    ("summary", "runbook"),
    [
        (
            "FatalError: `Segmentation fault` is detected by the operating system.\n"
            "  [SignalInfo: *** SIGSEGV (@0x0) received by PID 1 (TID 0x7f5c) from PID 0 ***]\n",
            c.RUNBOOK_SERVER_CRASHED,
        ),
        (
            "PreconditionNotMetError: The third-party dynamic library (libcudnn.so) that Paddle depends on is not "
            "configured correctly. (error code is libcudnn.so: cannot open shared object file: No such file or directory)\n",
            c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
        ),
    ],
)
def test_paddle_cpp_traceback_reads_its_summary(summary: str, runbook: str) -> None:
    got, quote = _first(_PADDLE_HEADER + summary)
    assert (got, quote) == (runbook, summary.splitlines()[0])


def test_a_python_traceback_is_still_the_model() -> None:
    text = (
        "Traceback (most recent call last):\n"
        '  File "/models/det/1/model.py", line 12, in initialize\n'
        "    self.net = build()\n"
        "NameError: name 'build' is not defined\n"
    )
    assert _first(text)[0] == c.RUNBOOK_PYTHON_MODEL_ERROR


def test_heldout32_paddle_terminate_without_summary() -> None:
    # the paste ends in the C++ frames: the terminate line is the only failure, the crash's page
    got, quote = _first(accuracy.case_text("paddlepaddle-backend-5", "heldout32"))
    assert (got, quote) == (
        c.RUNBOOK_SERVER_CRASHED,
        "terminate called after throwing an instance of 'phi::enforce::EnforceNotMet'",
    )


# ------------------------------- class 2: a Python exception line pasted alone is a failure sign
# traceback.format_exception_only's last line, "[module.]Name: message", is what users quote of a
# traceback; alone it still gets a finding (issue 20 item 2: never empty), the page its words name
# when a class applies, else the fallback quoting it.
@pytest.mark.parametrize(
    ("line", "runbook"),
    [
        ("ValueError: Unrecognized configuration class for this kind of AutoModel", c.RUNBOOK_UNKNOWN_LOAD_FAILURE),
        ("KeyError: 'qwen2'", c.RUNBOOK_UNKNOWN_LOAD_FAILURE),
        ("ModuleNotFoundError: No module named 'tensorrt_llm'", c.RUNBOOK_PYTHON_MODULE_MISSING),
        ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB", c.RUNBOOK_GPU_OUT_OF_MEMORY),
    ],
)
def test_a_bare_exception_line_gets_a_finding(line: str, runbook: str) -> None:
    assert _first(line) == (runbook, line)


def test_warnings_and_prose_are_not_exception_lines() -> None:
    for text in ("UserWarning: TypedStorage is deprecated", "the loader raised no ValueError: all good"):
        assert _first(text) == ("", ""), text


# ------------------------------- class 3: the Python stub binary cannot find libpython
# ld.so's refusal (glibc elf/dl-load.c: "<prog>: error while loading shared libraries: <lib>: cannot open
# shared object file: No such file or directory") for the Python backend's stub, which is linked to one
# Python's libpython (PyTriton's installation guide: the stub is linked to a fixed Python; in a conda or
# venv Python add the environment's lib folder to LD_LIBRARY_PATH): a native library the Python side
# needs is not on the loader's path.
@pytest.mark.parametrize("version", ["3.8", "3.10"])
def test_the_stub_without_libpython(version: str) -> None:
    line = (
        "/root/.cache/pytriton/workspace_x/tritonserver/backends/python/triton_python_backend_stub: error while "
        f"loading shared libraries: libpython{version}.so.1.0: cannot open shared object file: No such file or directory"
    )
    text = "I0212 16:32:55.775014 9771 model_lifecycle.cc:461] loading: Linear:1\n" + line + "\n"
    assert _first(text) == (c.RUNBOOK_PYTHON_SHARED_LIBRARY_MISSING, line)


def test_heldout33_stub_libpython() -> None:
    text = accuracy.case_text("agi-study-pytriton-stub-libpython-missing", "heldout33")
    assert _first(text)[0] == c.RUNBOOK_PYTHON_SHARED_LIBRARY_MISSING


def test_another_binary_without_its_library_is_not_the_stub() -> None:
    # nim-deploy's worker without libnvinfer (heldout16): no Python stub, not this page
    line = "trtllm-worker: error while loading shared libraries: libnvinfer.so.10: cannot open shared object file: No such file or directory"
    assert _first(line)[0] != c.RUNBOOK_PYTHON_SHARED_LIBRARY_MISSING


# ------------------------------- class 4: a stub that died without a Python exception
# python_be.cc's health check ("Stub process '<instance>' is not healthy.") says the stub stopped answering,
# not why; with no exception in the log the fix starts outside model.py (heldout31's speech-cascade notes:
# the stub was killed at the cgroup's memory limit while four models loaded at once).
def test_a_silent_stub_death_points_outside_the_code() -> None:
    silent = "E1202 10:00:00.000 1 model_lifecycle.cc:642] failed to load 'llm' version 1: Internal: Stub process 'llm_0_0' is not healthy.\n"
    finding = diagnose_events(parse_text(silent)).findings[0]
    assert finding.runbook == c.RUNBOOK_PYTHON_MODEL_ERROR
    assert finding.remediation.startswith(STUB_DIED_FIX)
    raised = (
        "E1202 10:00:00.000 1 model_lifecycle.cc:642] failed to load 'llm' version 1: Internal: Stub process 'llm_0_0' "
        "is not healthy.\nTraceback (most recent call last):\n  File \"/models/llm/1/model.py\", line 3, in initialize\n"
        "NameError: name 'x' is not defined\n"
    )
    assert STUB_DIED_FIX not in diagnose_events(parse_text(raised)).findings[0].remediation


def test_heldout31_stub_host_oom_says_what_to_check() -> None:
    finding = diagnose_events(parse_text(accuracy.case_text("speech-cascade-stub-host-oom", "heldout31"))).findings[0]
    assert STUB_DIED_FIX in finding.remediation
