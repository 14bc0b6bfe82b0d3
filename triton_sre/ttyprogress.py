"""Leaf: a one-line progress display on stderr for long CLI work, shown only on a terminal.

`triage` (megabytes read), `doctor` (model configs fetched) and `report` (range queries read) use
it: the line is rewritten in place at most every `EVERY_SECONDS` and cleared when the work ends,
so a pipe or a log file never sees it.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["EVERY_SECONDS", "Counter", "Progress", "on_terminal"]

EVERY_SECONDS = 0.5


class Progress:
    """`show(text)` rewrites the line (throttled unless `force`); `finish()` clears it."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.started = time.monotonic()
        self.last = 0.0

    def show(self, text: str, *, force: bool = False) -> None:
        now = time.monotonic()
        if now - self.last < EVERY_SECONDS and not force:
            return
        self.last = now
        self.stream.write(f"\r{text}")
        self.stream.flush()

    def finish(self) -> None:
        if self.last:
            self.stream.write("\r\033[K")
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
