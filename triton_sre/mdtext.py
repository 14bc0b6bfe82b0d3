"""Text from logs and servers (model names, error messages) placed in Markdown that we write.

A model name is chosen by whoever names the model and an error line quotes it: in a table cell a `|`
opens a new cell, a newline a new row, and `<img onerror=...>` is a tag to a viewer that passes inline
HTML through. `text` makes one inline field safe; `fence` picks a code fence no line of the block can
close early.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from triton_sre.redact import printable

__all__ = ["code", "fence", "text"]

_BACKTICKS = re.compile(r"`+")


def text(value: object) -> str:
    """One line of inline Markdown: controls as escapes, `&` and `<` as entities, `|` escaped."""
    return printable(value).replace("&", "&amp;").replace("<", "&lt;").replace("|", "\\|")


def fence(lines: Iterable[str]) -> str:
    """A backtick fence longer than any run of backticks in `lines` (at least three)."""
    longest = max((len(m.group()) for line in lines for m in _BACKTICKS.finditer(line)), default=0)
    return "`" * max(3, longest + 1)


def code(value: str) -> str:
    """`value` as an inline code span that its own backticks cannot end (CommonMark: a longer run
    of backticks delimits, a space pads a value that starts or ends with one)."""
    value = printable(value)
    longest = max((len(m.group()) for m in _BACKTICKS.finditer(value)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{ticks}{pad}{value}{pad}{ticks}"
