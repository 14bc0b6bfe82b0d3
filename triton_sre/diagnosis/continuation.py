"""Pure: the raw lines folded under an ``I`` line, read as a possible cause.

A shell's error, a third-party library's output or a client's traceback pasted after one of Triton's
``I`` lines reaches the engine as that line's continuation. Its cause is read as any failure line's
(a rule first, then the line's own format and its cause class); a configuration dump's fields are
no event, and a backtrace without its message names no cause. What the engine does with the answer
(the model a ``.../m/1/model.py`` path names, or a pending cause) stays in the engine.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from triton_sre import conventions as c
from triton_sre.diagnosis.assemble import Obs
from triton_sre.diagnosis.blocks import PY_WARNING, folded_line
from triton_sre.diagnosis.classes import cause_class, over_crash
from triton_sre.diagnosis.config_dump import blank_config_lines
from triton_sre.diagnosis.dropped import is_dropped_setting
from triton_sre.diagnosis.events import LogEvent
from triton_sre.diagnosis.frames import classify
from triton_sre.diagnosis.lineshape import LEVEL_ERROR, LEVEL_INFO, LEVEL_WARNING, join_hand_wraps
from triton_sre.diagnosis.reasons import PY_PATH
from triton_sre.diagnosis.report import MAX_EVIDENCE_CHARS
from triton_sre.diagnosis.severity import failure_piece, is_failure_line, line_level, only_frames
from triton_sre.diagnosis.signals import (
    backend_failure_piece,
    crash_signal_piece,
    is_backend_failure,
    is_harmless,
    is_server_failure,
)

__all__ = ["Continuation", "read_continuation"]


@dataclass(frozen=True, slots=True)
class Continuation:
    """What an ``I`` line's continuation showed: a cause (``obs.runbook`` set; ``model`` when a
    Python path names one), or a failure line no class explains (``obs.runbook`` None)."""

    obs: Obs
    model: str | None = None
    version: str | None = None


# A Python logging record below ERROR (``03/24/2022 10:27:49 PM INFO:msg``, ``INFO:name:msg``, ``2024-01-01
# 10:00:00,123 - name - WARNING - msg``) whose message ends in a colon announces its rest on the next lines,
# which carry no record prefix of their own (faiss/loader.py logs "Could not load library with AVX2 support
# due to:" and the exception's repr, then loads its fallback). A line that fails by its own format or words
# (a traceback, a crash) is never such a rest.
_QUIET_RECORD = re.compile(
    r"^(?:(?:\S*\d\S*\s+){1,3}(?:[AP]M\s+)?(?:[-|]\s*(?:[\w.]+\s*[-|]\s*)?)?)?\[?(?:INFO|DEBUG|WARNING|WARN)\]?[:\s]"
)
# Python's warnings module, then the source line that warned, indented (a library's UserWarning that an
# optional import failed): the same line blocks.WARNING_BANNER reads as a warning.
_PY_WARNING = re.compile(PY_WARNING)
_RECORD_START = re.compile(r"^(?:\S*\d\S*\s+){1,3}|^[A-Z]+:|^\[?[A-Z]+\]?\s")


def _blank_quiet_records(lines: list[str]) -> list[str]:
    """``lines`` with the announced rest of each below-ERROR Python logging record emptied."""
    out = list(lines)
    quiet = False
    for k, line in enumerate(lines):
        if _PY_WARNING.match(line):  # a warning, not a failure: it and the source line under it
            out[k] = ""
            quiet = True
        elif _QUIET_RECORD.match(line):
            quiet = line.rstrip().endswith(":")  # the message announces its rest ("... due to:")
        elif quiet and line.strip() and not _RECORD_START.match(line) and not _fails_alone(line):
            out[k] = ""
        else:
            quiet = False
    return out


# The shell's report of its child's death by a signal (bash's strsignal text, "(core dumped)" when it did).
_SHELL_SIGNAL = re.compile(
    r"^\s*(?:Killed|Aborted|Segmentation fault|Bus error|Illegal instruction|Floating point exception)"
    r"(?: \(core dumped\))?\s*$"
)


def _fails_alone(line: str) -> bool:
    """A line that reports a failure by its own format or words: never a record's rest."""
    return bool(
        _SHELL_SIGNAL.match(line)
        or is_failure_line(line.strip())
        or is_server_failure(line)
        or is_backend_failure(line)
    )


def _line_of(lines: list[str], piece: str) -> int:
    """The line (past the ``I`` line) that holds ``piece``, or that starts it when a person wrapped it."""
    stripped = [line.strip() for line in lines]
    for k in range(1, len(lines)):
        if stripped[k] == piece:
            return k
    return next((k for k in range(1, len(lines)) if stripped[k] and piece.startswith(stripped[k])), 1)


def _own_level(lines: list[str], offset: int) -> str:
    """The deciding line's level by its own logger's format (`severity.line_level`: a TensorRT-LLM or vLLM
    WARNING), where no other folded line fails by its own format or words; else an error. A setting the server
    refused and served without (dropped.py) is a warning."""
    if is_dropped_setting(lines[offset]):
        return LEVEL_WARNING
    own = line_level(lines[offset].strip())
    others = (line for line in lines[1:] if line.strip() and not line_level(line.strip()))
    if not own or any(_fails_alone(line) for line in others):
        return LEVEL_ERROR
    return own


def read_continuation(event: LogEvent, index: int) -> Continuation | None:
    """The cause or unexplained failure in the raw lines after an ``I`` line, if any."""
    lines = event.message.split("\n")
    if len(lines) < 2:
        return None
    # a config dump's fields are no event, nor the rest of a library's INFO record
    lines = [lines[0], *_blank_quiet_records(blank_config_lines(lines[1:]))]
    rest = "\n".join(lines[1:])
    frames = only_frames(rest)  # a backtrace without its message: no cause known
    runbook = None if frames else classify(rest)
    runbook = over_crash(runbook, rest)
    decides: Callable[[str], bool] = lambda piece: classify(piece) == runbook  # noqa: E731
    if runbook is None:
        # A third-party line its own format marks as a failure (GStreamer's ERROR column, a
        # Python logging ERROR) inside an I line's continuation: read by its cause class.
        piece = failure_piece(rest) or backend_failure_piece(rest)
        if piece is None and (joined := join_hand_wraps(rest)) is not rest:
            piece = failure_piece(joined) or backend_failure_piece(joined)  # a failure line wrapped by hand
        if piece is None and (signal := crash_signal_piece(rest)) is not None:
            # Triton's crash report, unprefixed, folded under the I line before it (often the shutdown's
            # "Waiting for in-flight requests"): a failure; its message is that line and the stack (what
            # the server was doing, and where it crashed).
            k = _line_of(lines, signal)
            stack = "\n".join([lines[0], *lines[k:]])
            return Continuation(Obs(index, event.line + k, signal, LEVEL_ERROR, None, stack, True))
        if piece is None or is_harmless(piece):
            return None
        runbook = None if frames else cause_class(piece)
        k = _line_of(lines, piece)
        if runbook is None:
            text = piece[:MAX_EVIDENCE_CHARS]
            return Continuation(Obs(index, event.line + k, text, LEVEL_ERROR, None, piece, True))
        decides = lambda line: line is lines[k]  # noqa: E731
    if is_harmless(rest):
        return None
    offset = next((k for k in range(1, len(lines)) if decides(lines[k])), 1)
    at, text = folded_line(event, offset, lines[offset])
    message = "\n".join(lines[1:])
    if runbook == c.RUNBOOK_SERVER_CRASHED:
        message = "\n".join([lines[0], *lines[offset:]])  # what the server was doing, where it crashed
    level = _own_level(lines, offset)
    if level == LEVEL_INFO:
        return None  # another logger's INFO line: no cause, as Triton's own I lines are not
    obs = Obs(index, at, text, level, runbook, message)
    path = PY_PATH.search(event.message)
    if path:
        return Continuation(obs, path["model"], path["version"])
    return Continuation(obs)
