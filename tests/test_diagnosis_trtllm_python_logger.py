"""TensorRT-LLM's Python runtime logger (tensorrt_llm/logger.py: ``[TRT-LLM] [<letter>] <msg>``, with
``[MPI_Rank N] `` before the letter when the world has more than one rank, under logging's
``[%m/%d/%Y-%H:%M:%S]`` time): its E and F lines are failure lines, its W, I and V lines are quiet."""

from __future__ import annotations

import pytest

from triton_sre.conventions import RUNBOOK_UNKNOWN_LOAD_FAILURE
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.lineshape import LEVEL_INFO, LEVEL_WARNING
from triton_sre.diagnosis.logparse import parse_text
from triton_sre.diagnosis.severity import line_level


@pytest.mark.parametrize(
    "line",
    [
        "[12/07/2024-10:00:01] [TRT-LLM] [E] Failed to load engine",
        "[TRT-LLM] [MPI_Rank 1] [F] Unexpected error",
    ],
)
def test_its_error_and_fatal_lines_are_never_an_empty_answer(line: str) -> None:
    findings = diagnose_events(parse_text(line + "\n")).findings
    assert [f.runbook for f in findings] == [RUNBOOK_UNKNOWN_LOAD_FAILURE]


@pytest.mark.parametrize(
    ("line", "level"),
    [
        # The logger's own notices (logger.py's set_level and __init__).
        (
            "[TRT-LLM] [W] Logger level already set from environment. Discard new verbosity: error",
            LEVEL_WARNING,
        ),
        ("[12/07/2024-10:00:00] [TRT-LLM] [W] Requested log level foo is invalid. Using 'warning' instead",
         LEVEL_WARNING),
        ("[TRT-LLM] [MPI_Rank 0] [I] Set nccl_plugin to None.", LEVEL_INFO),
        ("[TRT-LLM] [V] engine config read", LEVEL_INFO),
    ],
)
def test_its_quiet_lines_keep_their_level(line: str, level: str) -> None:
    assert line_level(line) == level
    assert not diagnose_events(parse_text(line + "\n")).findings


def test_a_failure_word_under_its_warning_letter_stays_a_warning() -> None:
    line = "[TRT-LLM] [W] Failed to infer the number of layers, falling back to the config's value"
    assert line_level(line) == LEVEL_WARNING
    assert all(f.severity != "critical" for f in diagnose_events(parse_text(line + "\n")).findings)
