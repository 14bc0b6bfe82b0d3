"""Pure: a log quoted in code comments, read as the log it quotes.

A ``#`` line in a paste is a shell prompt or a comment, never what failed (`lineshape.is_paste_prompt`),
so a paste whose every line is a comment gave no finding at all: a deploy script's or a notebook's note
quoting the failure it met (``#     "built for NVIDIA Driver Release 575.51 or later ..."``). When every
event of the input is such a line, the engine reads the comments' text once more with the comment
marker peeled. One non-comment event ends it: a shell transcript's root prompt (``# tritonserver ...``)
is followed by the program's output and stays a prompt. Memory stays bounded: past `MAX_QUOTED_LINES`
comment lines the input is not a quote but a commented file, and nothing is kept.
"""

from __future__ import annotations

import re

from triton_sre.diagnosis.events import SOURCE_RAW, LogEvent

__all__ = ["MAX_QUOTED_LINES", "QuotedComments"]

MAX_QUOTED_LINES = 400
_COMMENT = re.compile(r"[ \t]*#+(?!!)[ \t]?")  # ``#``, ``##`` (Markdown-ish), not a shebang's ``#!``


class QuotedComments:
    """Collects the comment lines of an input while every event so far is one."""

    __slots__ = ("_lines", "_open")

    def __init__(self) -> None:
        self._lines: list[tuple[int, str]] = []
        self._open = True

    def note(self, event: LogEvent) -> None:
        if not self._open:
            return
        m = _COMMENT.match(event.message) if event.source == SOURCE_RAW else None
        if m is None or "\n" in event.message or len(self._lines) >= MAX_QUOTED_LINES:
            self.close()
            return
        self._lines.append((event.line, event.message[m.end() :]))

    def close(self) -> None:
        self._open = False
        self._lines = []

    def lines(self) -> list[tuple[int, str]]:
        """The numbered lines the comments quote, peeled of their marker; empty unless every event was one."""
        return self._lines if self._open else []
