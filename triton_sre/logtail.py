"""The one log-tail helper: the last lines of a component's log for an error message.

Reads the file line by line (constant memory, whatever the log's size); an unreadable log is
said so in the text, never an exception, since the caller is already reporting a failure.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path

__all__ = ["LOG_TAIL_LINES", "tail"]

LOG_TAIL_LINES = 40


def tail(path: str | Path, lines: int = LOG_TAIL_LINES) -> str:
    """The last `lines` lines of `path`, newline-separated, without a trailing newline."""
    try:
        with Path(path).open("r", encoding="utf-8", errors="replace") as f:
            last = deque(f, maxlen=lines)
    except OSError as exc:
        return f"<log {path} unreadable: {exc}>"
    return "".join(last).rstrip("\n")
