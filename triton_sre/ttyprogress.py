"""Leaf (conventions only): a one-line progress display on stderr for long CLI work, shown only on a
terminal, and whether a command's output may be coloured (`colour_on`).

`triage` (megabytes read), `doctor` (model configs fetched) and `report` (range queries read) use
it: the line is rewritten in place at most every `EVERY_SECONDS` and cleared when the work ends,
so a pipe or a log file never sees it. No escape code is written (a `TERM=dumb` terminal shows them as
text): a shorter line is padded with spaces over the longer one, and the line is cleared with spaces.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping
from typing import TextIO

from triton_sre.conventions.process import ENV_NO_COLOR, ENV_TERM, TERM_DUMB

__all__ = ["EVERY_SECONDS", "Counter", "Progress", "colour_on", "on_terminal"]

EVERY_SECONDS = 0.5


class Progress:
    """`show(text)` rewrites the line (throttled unless `force`); `finish()` clears it."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.started = time.monotonic()
        self.last = 0.0
        self.width = 0  # characters of the line on screen

    def show(self, text: str, *, force: bool = False) -> None:
        now = time.monotonic()
        if now - self.last < EVERY_SECONDS and not force:
            return
        self.last = now
        self.stream.write(f"\r{text.ljust(self.width)}")
        self.width = max(self.width, len(text))
        self.stream.flush()

    def finish(self) -> None:
        if self.last:
            self.stream.write(f"\r{' ' * self.width}\r")
            self.stream.flush()


class Counter(Progress):
    """`counter(done, total)` shows `command: what done/total`."""

    def __init__(self, command: str, what: str, stream: TextIO) -> None:
        super().__init__(stream)
        self.command = command
        self.what = what

    def __call__(self, done: int, total: int) -> None:
        self.show(f"{self.command}: {self.what} {done:,}/{total:,}", force=done >= total)


def on_terminal(command: str, what: str) -> Counter | None:
    """A Counter on stderr when stderr is a terminal, else None (nothing is written)."""
    return Counter(command, what, sys.stderr) if sys.stderr.isatty() else None


def colour_on(stream: TextIO, environ: Mapping[str, str] | None = None) -> bool:
    """Colour codes only on a terminal, and not when `NO_COLOR` is set (to anything but "") or the
    terminal is `TERM=dumb`: triage, lint and doctor's text output."""
    env = os.environ if environ is None else environ
    if env.get(ENV_NO_COLOR) or env.get(ENV_TERM) == TERM_DUMB:
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed stream, or one without isatty
        return False
