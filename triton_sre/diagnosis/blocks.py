"""Pure: reading a pasted block of raw lines (``kubectl describe`` output, a container's banner).

A block reaches the engine as one event. Its finding must quote the line that decides, not the
block's first line, and a tool's own ``WARNING:`` banner stays a warning unless another line of the
block fails. Likewise a warning line whose folded lines show the process dying (libstdc++'s
``terminate called``/``what():``, Open MPI's ``Signal: Aborted (6)``) is a failure: whatever the
warning said, the server did not go on; and so is a backend warning whose own words say loading the
model fails (`event_level`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from triton_sre.diagnosis.assemble import evidence_text
from triton_sre.diagnosis.events import SOURCE_RAW, LogEvent
from triton_sre.diagnosis.frames import FRAME_PATH, classify
from triton_sre.diagnosis.lineshape import (
    LEVEL_ERROR,
    LEVEL_WARNING,
    PARSER_REFUSAL,
    join_hand_wraps,
    peel_collector_prefix,
)
from triton_sre.diagnosis.report import MAX_EVIDENCE_CHARS
from triton_sre.diagnosis.severity import LOADER_VERDICT, failure_piece, is_failure_line
from triton_sre.diagnosis.signals import is_backend_failure, is_server_failure

__all__ = [
    "PY_WARNING",
    "WARNING_BANNER",
    "deciding_line",
    "event_level",
    "fails_beside_warnings",
    "quiet_running_compat_banner",
]

_MAX_WRAP_LINES = 4  # a wrapped message spans a few lines; a longer run is a block of its own
_MAX_WRAP_SCAN = 200  # lines of a block searched for a hand-wrapped decision (bounded work per event)

PY_WARNING = r"^\s*(?:[A-Za-z]:)?[^\s:]+\.py:\d+: (?:[A-Z]\w*)?Warning: "
"""A line of Python's warnings module (``warnings.formatwarning``), its source line indented under it."""
WARNING_BANNER = re.compile(rf"^WARNING\b:?|{PY_WARNING}")
"""A pasted tool's own warning banner (the Docker CLI's, the NGC entrypoint's), and a line of Python's
warnings module (``warnings.formatwarning``: ``<file>.py:<line>: <Category>Warning: <message>``, a
UserWarning that a library's optional import failed is no failure)."""


# A line that is only a level word (``error:``, ``ERROR``, ``Fatal:``): the message is on the next line.
# Where a Python failure is, not what it is: a frame (frames.FRAME_PATH) or the traceback's header.
_PY_PLACE = re.compile(rf"{FRAME_PATH.pattern}|^\s*Traceback \(most recent call last\):")
_EXCEPTION = re.compile(r"\b[A-Z]\w*(?:Error|Exception)\b")


def _exception_piece(pieces: list[str]) -> int | None:
    """The index of the last piece naming an exception that is not a frame: CPython prints it under
    the frames, the Python backend's stub above them (`..., message: ValueError: ...` then `At:`)."""
    found = None
    for index, piece in enumerate(pieces):
        if _EXCEPTION.search(piece) and not _PY_PLACE.match(piece):
            found = index
    return found


_BARE_MARKER = re.compile(r"^\s*(?:error|fatal|critical)\s*:?\s*$", re.I)


def _past_marker(pieces: list[str], offset: int) -> int:
    """``error:`` alone on its line introduces the message on the next one: that line's offset."""
    if not _BARE_MARKER.match(pieces[offset]):
        return offset
    return next((k for k in range(offset + 1, len(pieces)) if pieces[k].strip()), offset)


def deciding_line(event: LogEvent, decides: Callable[[str], bool]) -> tuple[int, str]:
    """The line of a pasted block (raw lines: ``kubectl describe`` output, a banner) that
    ``decides`` holds for, so the finding quotes it rather than the block's first line. main's
    refusal of its command line (``Bad option: "--flag".``, ``Failed to build Triton option:``) names
    the flag on one line and what was wrong on the next: the quote holds both."""
    line, text = _deciding_line(event, decides)
    if PARSER_REFUSAL.match(text):
        pieces = event.message.split("\n")[line - event.line + 1 :]
        reason = next((p.strip() for p in pieces if p.strip()), "")
        if reason and not PARSER_REFUSAL.match(reason):
            text = f"{text} {peel_collector_prefix(reason)}"[:MAX_EVIDENCE_CHARS]
    return line, text


def folded_line(event: LogEvent, offset: int, piece: str) -> tuple[int, str]:
    """The line and quote of the ``offset``-th line of a leveled event's message. An escaped message (24.06
    on) holds its own lines on its first line, as ``\\n``: a piece among them is on that line (quoted as
    the piece: the exception says what failed); the lines folded under it come after it."""
    own = event.text.rstrip().rstrip('"')
    while own.endswith("\\n"):  # (a message's last line end is not kept as a line of its own)
        own = own[:-2]
    inline = own.count("\\n")
    if offset <= inline:
        return event.line, (piece if offset else evidence_text(event))[:MAX_EVIDENCE_CHARS]
    return event.line + offset - inline, piece[:MAX_EVIDENCE_CHARS]


def _deciding_line(event: LogEvent, decides: Callable[[str], bool]) -> tuple[int, str]:
    if event.source != SOURCE_RAW:
        # A leveled line with raw lines folded under it (a crash after a warning): the folded line that
        # decides, where the leveled line itself does not.
        first, *folded = event.message.split("\n")
        if folded and not decides(first):
            for offset, piece in enumerate(folded, 1):
                if piece.strip() and decides(piece):
                    if _PY_PLACE.match(piece) and (told := _exception_piece([first, *folded])) is not None:
                        # a frame (or the traceback's header) places the failure; the exception says what
                        offset, piece = told, (folded[told - 1] if told else first)
                    return folded_line(event, offset, piece.strip())
        return event.line, evidence_text(event)
    pieces = event.message.split("\n")
    for offset, piece in enumerate(pieces):
        if len(pieces) > 1 and not (piece.strip() and decides(piece)):
            continue
        offset = _past_marker(pieces, offset)
        text = peel_collector_prefix(pieces[offset].strip())
        return event.line + offset, text[:MAX_EVIDENCE_CHARS]
    if (wrapped := _wrapped_deciding_line(pieces, decides)) is not None:
        offset = _past_marker(pieces, wrapped)
        return event.line + offset, peel_collector_prefix(pieces[offset].strip())[:MAX_EVIDENCE_CHARS]
    # No single line decides (the rule needs the block, e.g. a describe of a failed container): quote
    # the line the block's own format marks as the failure, not its first line.
    for offset, piece in enumerate(pieces):
        if piece.strip() and failure_piece(piece) is not None:
            return event.line + offset, peel_collector_prefix(piece.strip())[:MAX_EVIDENCE_CHARS]
    # A line marked only by the block around it (a prefixed traceback's exception line).
    piece = failure_piece(event.message)
    stripped = [p.strip() for p in pieces]
    if piece is not None and piece in stripped:
        offset = _past_marker(pieces, stripped.index(piece))
        return event.line + offset, stripped[offset][:MAX_EVIDENCE_CHARS]
    if (offset := _past_marker(pieces, 0)) > 0:
        return event.line + offset, peel_collector_prefix(stripped[offset])[:MAX_EVIDENCE_CHARS]
    return event.line, peel_collector_prefix(evidence_text(event))


# A line that is a field of its own (``kubectl describe``'s ``    State:   Waiting``), never a wrap's rest.
_FIELD = re.compile(r"\s*[\w.-]+(?: [\w.-]+)?:(?:\s|$)")


def _indent(piece: str) -> int:
    return len(piece) - len(piece.lstrip(" \t"))


def _wrapped_deciding_line(pieces: list[str], decides: Callable[[str], bool]) -> int | None:
    """The line a decision starts on when a person wrapped it by hand: a head line and the lines under it
    indented deeper (a list's items at one indentation are lines of their own, as ``kubectl describe``'s
    fields are), joined; of the lines that still decide with the wrap's end, the latest."""
    if len(pieces) > _MAX_WRAP_SCAN or not any(p[:1] in (" ", "\t") for p in pieces[1:]):
        return None
    for end in range(1, len(pieces)):
        depth = _indent(pieces[end])
        if not depth or not pieces[end].strip():
            continue
        head = next((k for k in range(end - 1, max(end - _MAX_WRAP_LINES, 0) - 1, -1)
                     if pieces[k].strip() and _indent(pieces[k]) < depth), None)  # fmt: skip
        if head is None or pieces[head].rstrip().endswith(":"):
            continue  # (a section's header: what follows are its fields)
        rest = pieces[head + 1 : end + 1]
        if any(_indent(p) <= _indent(pieces[head]) or _FIELD.match(p) for p in rest):
            continue
        if not decides(join_hand_wraps("\n".join(pieces[head : end + 1]))):
            continue
        return max(k for k in range(head, end) if decides(join_hand_wraps("\n".join(pieces[k : end + 1]))))
    return None


# The NGC entrypoint's driver check when the container runs anyway (its CUDA compatibility script, 21.xx on):
# "WARNING: CUDA Minor Version Compatibility mode ENABLED." and its indented lines, which end with the reason
# forward compatibility was not used instead, "  [[<cuInit's error> (CUDA_ERROR_...) cuInit()=803]]". The
# driver is one CUDA minor release behind and the container runs: the bracketed error is no failure. (The
# same bracketed line under the check's "ERROR: This container was built for ..." banner stays its detail.)
_COMPAT_RUNS = re.compile(r"^WARNING: CUDA Minor Version Compatibility mode ENABLED\b")


def quiet_running_compat_banner(message: str) -> str:
    """``message`` with the lines of the NGC entrypoint's Minor Version Compatibility warning emptied
    (positions kept), so the cuInit error it quotes is not read as a driver failure."""
    if "Minor Version Compatibility mode ENABLED" not in message:
        return message
    lines = message.split("\n")
    k = 0
    while k < len(lines):
        if _COMPAT_RUNS.match(peel_collector_prefix(lines[k]).strip()):
            lines[k] = ""
            k += 1
            while k < len(lines) and lines[k][:1] in (" ", "\t") and lines[k].strip():
                lines[k] = ""
                k += 1
            continue
        k += 1
    return "\n".join(lines)


def fails_beside_warnings(block: str) -> bool:
    """True when a pasted block holds a failure line besides its ``WARNING:`` lines."""
    return any(
        classify(piece) or is_server_failure(piece) or is_backend_failure(piece)
        for piece in (p.strip() for p in block.split("\n"))
        if piece and not WARNING_BANNER.match(piece)
    )


def event_level(event: LogEvent) -> str:
    """The event's level, raised to error where a warning (or a line folded under it) is marked as a failure
    (`severity.is_failure_line`: a C++ terminate, a signal handler's report, a loader's "loading model
    fails"): the warning did not end the story, a failure did."""
    level, message = event.level, event.message
    if level != LEVEL_WARNING:
        return level
    if "\n" not in message and not any(word in message for word in LOADER_VERDICT.literals):
        return level  # (a plain test first: most warnings are one line the engine reads as it is)
    return LEVEL_ERROR if is_failure_line(message, level) else level
