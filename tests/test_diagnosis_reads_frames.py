"""`CauseRule.reads_frames`: a rule that reads an exception together with its traceback frames is asked,
not recognised by its pattern's text or its identity (frames.classify, diag44). In a traceback the exception
line decides and the frames are context, except for such a rule: its match on the whole text decides."""

from __future__ import annotations

import re

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis import frames
from triton_sre.diagnosis.frames import classify
from triton_sre.diagnosis.rules import CAUSE_RULES, SHIPPED_BACKEND_LACKS
from triton_sre.diagnosis.stack_rules import CauseRule

# ENOSPC raised in CPython's multiprocessing (SemLock -> sem_open, on /dev/shm), in the stub's "At:" shape
# (python_backend pb_stub.cc) and in CPython's own traceback.
SHM_STUB = (
    "OSError: [Errno 28] No space left on device\n\nAt:\n"
    "  /usr/lib/python3.10/multiprocessing/synchronize.py(57): __init__\n"
    "  /usr/lib/python3.10/multiprocessing/context.py(68): Lock\n"
    "  /models/m/1/model.py(3): <module>\n"
)
SHM_TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/models/m/1/model.py", line 3, in <module>\n'
    "    lock = multiprocessing.Lock()\n"
    '  File "/usr/lib/python3.10/multiprocessing/synchronize.py", line 57, in __init__\n'
    "    sl = self._semlock = _multiprocessing.SemLock(\n"
    "OSError: [Errno 28] No space left on device"
)
# The vLLM backend's own model.py (under backends/) reading what the installed vLLM no longer has.
SHIPPED = (
    "AttributeError: 'AsyncLLM' object has no attribute 'engine'\n\nAt:\n"
    "  /opt/tritonserver/backends/vllm/model.py(365): _setup_metrics\n"
    "  /opt/tritonserver/backends/vllm/model.py(191): initialize\n"
)


def _claiming(text: str) -> CauseRule:
    return next(rule for rule in CAUSE_RULES if rule.pattern.search(text))


@pytest.mark.parametrize(
    ("text", "runbook"),
    [
        (SHM_STUB, c.RUNBOOK_SHM_TOO_SMALL),
        (SHM_TRACEBACK, c.RUNBOOK_SHM_TOO_SMALL),
        (SHIPPED, c.RUNBOOK_LIBRARY_VERSION_MISMATCH),
    ],
)
def test_the_frames_decide_for_a_rule_that_reads_them(text: str, runbook: str) -> None:
    rule = _claiming(text)
    assert rule.reads_frames
    assert rule.runbook == runbook
    assert classify(text) == runbook
    # ... where the exception line alone says something else: the property is what kept the whole's page
    head = "\n".join(line for line in text.split("\n") if not line.startswith(" ") and line != "At:")
    assert classify(head) != runbook


def test_the_rules_that_read_frames_declare_it() -> None:
    declared = [rule for rule in CAUSE_RULES if rule.reads_frames]
    assert SHIPPED_BACKEND_LACKS.reads_frames and SHIPPED_BACKEND_LACKS in declared
    pages = {rule.runbook for rule in declared}
    assert pages == {c.RUNBOOK_SHM_TOO_SMALL, c.RUNBOOK_LIBRARY_VERSION_MISMATCH}
    # every other rule lets the exception line decide
    assert len(declared) < len(CAUSE_RULES) // 10


def test_classify_asks_the_rule_not_its_pattern(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rule of no known pattern and no known identity: only its declared property keeps its page."""
    text = "ValueError: bad shape\n\nAt:\n  /opt/vendor/pipeline/model.py(12): initialize\n"

    def rules(reads_frames: bool) -> tuple[CauseRule, ...]:
        pattern = re.compile(r"ValueError: bad shape\s+At:\s+/opt/vendor/pipeline/")
        return (CauseRule(c.RUNBOOK_LIBRARY_VERSION_MISMATCH, pattern, reads_frames=reads_frames),)

    monkeypatch.setattr(frames, "_plain_left", [1_000])  # the plain first-match loop over CAUSE_RULES
    monkeypatch.setattr(frames, "CAUSE_RULES", rules(True))
    assert classify(text) == c.RUNBOOK_LIBRARY_VERSION_MISMATCH
    monkeypatch.setattr(frames, "CAUSE_RULES", rules(False))
    # the exception line decides: the model's Python code raised
    assert classify(text) == c.RUNBOOK_PYTHON_MODEL_ERROR
