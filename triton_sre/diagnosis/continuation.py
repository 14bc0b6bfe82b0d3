"""Pure: the raw lines folded under an ``I`` line, read as a possible cause.

A shell's error, a third-party library's output or a client's traceback pasted after one of Triton's
``I`` lines reaches the engine as that line's continuation. Its cause is read as any failure line's
(a rule first, then the line's own format and its cause class); a configuration dump's fields are
no event, and a backtrace without its message names no cause. What the engine does with the answer
(the model a ``.../m/1/model.py`` path names, or a pending cause) stays in the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from triton_sre.diagnosis.assemble import Obs
from triton_sre.diagnosis.classes import cause_class
from triton_sre.diagnosis.config_dump import blank_config_lines
from triton_sre.diagnosis.events import LogEvent
from triton_sre.diagnosis.frames import classify
from triton_sre.diagnosis.lineshape import LEVEL_ERROR, join_hand_wraps
from triton_sre.diagnosis.reasons import PY_PATH, is_harmless
from triton_sre.diagnosis.report import MAX_EVIDENCE_CHARS
from triton_sre.diagnosis.severity import failure_piece, only_frames
from triton_sre.diagnosis.signals import backend_failure_piece

__all__ = ["Continuation", "read_continuation"]


@dataclass(frozen=True, slots=True)
class Continuation:
    """What an ``I`` line's continuation showed: a cause (``obs.runbook`` set; ``model`` when a
    Python path names one), or a failure line no class explains (``obs.runbook`` None)."""

    obs: Obs
    model: str | None = None
    version: str | None = None


def _line_of(lines: list[str], piece: str) -> int:
    """The line (past the ``I`` line) that holds ``piece``, or that starts it when a person wrapped it."""
    stripped = [line.strip() for line in lines]
    for k in range(1, len(lines)):
        if stripped[k] == piece:
            return k
    return next((k for k in range(1, len(lines)) if stripped[k] and piece.startswith(stripped[k])), 1)


def read_continuation(event: LogEvent, index: int) -> Continuation | None:
    """The cause or unexplained failure in the raw lines after an ``I`` line, if any."""
    lines = event.message.split("\n")
    if len(lines) < 2:
        return None
    lines = [lines[0], *blank_config_lines(lines[1:])]  # a config dump's fields are no event
    rest = "\n".join(lines[1:])
    frames = only_frames(rest)  # a backtrace without its message: no cause known
    runbook = None if frames else classify(rest)
    decides: Callable[[str], bool] = lambda piece: classify(piece) == runbook  # noqa: E731
    if runbook is None:
        # A third-party line its own format marks as a failure (GStreamer's ERROR column, a
        # Python logging ERROR) inside an I line's continuation: read by its cause class.
        piece = failure_piece(rest) or backend_failure_piece(rest)
        if piece is None and (joined := join_hand_wraps(rest)) is not rest:
            piece = failure_piece(joined) or backend_failure_piece(joined)  # a failure line wrapped by hand
        if piece is None or is_harmless(piece):
            return None
        runbook = None if frames else cause_class(piece)
        k = _line_of(lines, piece)
        if runbook is None:
            text = piece[:MAX_EVIDENCE_CHARS]
            return Continuation(Obs(index, event.line + k, text, LEVEL_ERROR, None, piece, True))
        decides = lambda line: line is lines[k]  # noqa: E731
    if is_harmless(event.message):
        return None
    offset = next((k for k in range(1, len(lines)) if decides(lines[k])), 1)
    text = lines[offset][:MAX_EVIDENCE_CHARS]
    obs = Obs(index, event.line + offset, text, LEVEL_ERROR, runbook, "\n".join(lines[1:]))
    path = PY_PATH.search(event.message)
    if path:
        return Continuation(obs, path["model"], path["version"])
    return Continuation(obs)
