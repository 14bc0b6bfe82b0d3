"""Round 26 of issue 20: two never-empty / no-false-alarm classes found while reading the release notes'
known issues (no held-out log behind them).

- CPython aborting the interpreter (Python/pylifecycle.c ``fatal_error``: ``Fatal Python error: <function>:
  <message>``) is a failure signal, also as a raw line after an ``I`` line (vLLM's engine dying at
  initialize, the 24.10-25.03 notes' known issue).
- vLLM's own INFO/WARNING/DEBUG line (vllm/logger.py's ``LEVEL MM-DD HH:MM:SS [file.py:N] msg``) names
  vLLM without refusing anything: it is no llm-backend-config cause.
"""

# ruff: noqa: E501 - quoted log lines are test data

from __future__ import annotations

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text

# vllm-project/vllm#10800's line.
FATAL = "Fatal Python error: _enter_buffered_busy: could not acquire lock for <_io.BufferedWriter name='<stdout>'> at interpreter shutdown, possibly due to daemon threads"
LOADING = 'I1201 00:00:00.000000 1 model_lifecycle.cc:473] "loading: vllm_model:1"'


@pytest.mark.parametrize(
    "text",
    [
        f"{FATAL}\n",
        f"{LOADING}\n{FATAL}\nPython runtime state: finalizing (tstate=0x00005581f2a3e850)\n",
        f"{LOADING}\nINFO 12-01 00:00:10 multiproc_worker_utils.py:120] Killing local vLLM worker processes\n{FATAL}\n",
    ],
    ids=["alone", "after-an-I-line", "after-vllm-info"],
)
def test_a_fatal_python_error_is_a_failure_quoted_as_the_deciding_line(text: str) -> None:
    report = diagnose_events(parse_text(text))
    assert report.has_failure and report.findings
    f = report.findings[0]
    assert (f.runbook, f.severity) == (c.RUNBOOK_UNKNOWN_LOAD_FAILURE, c.IMPACT_CRITICAL)
    assert f.evidence[0].text.startswith("Fatal Python error: _enter_buffered_busy")


@pytest.mark.parametrize(
    "line",
    [
        "INFO 12-01 00:00:10 multiproc_worker_utils.py:120] Killing local vLLM worker processes",
        "INFO 05-23 10:15:01 [__init__.py:239] Automatically detected platform cuda.",
        "(VllmWorkerProcess pid=4242) INFO 12-01 00:00:12 [multiproc_worker_utils.py:215] Worker ready; awaiting tasks (vLLM)",
        "WARNING 12-01 00:00:11 [config.py:1234] Casting torch.bfloat16 to torch.float16 for vLLM.",
    ],
)
def test_vllm_progress_lines_after_a_load_are_no_cause(line: str) -> None:
    report = diagnose_events(parse_text(f"{LOADING}\n{line}\n"))
    assert not report.has_failure and not report.findings


def test_a_vllm_error_line_still_decides() -> None:
    text = f"{LOADING}\nERROR 12-01 00:00:10 [engine.py:389] vLLM engine failed to start: tensor_parallel_size 3 must divide 32 attention heads\n"
    f = diagnose_events(parse_text(text)).findings[0]
    assert f.runbook == c.RUNBOOK_LLM_BACKEND_CONFIG
