"""Pure: what copying a log does to its characters, undone.

A log pasted from a terminal keeps its colour codes (docker compose's service column, stern, k9s); one
copied from a web page, a chat or an editor may carry no-break or zero-width spaces, curled quotes, a
byte-order mark, or HTML character references (``&#39;``, ``&quot;``, ``&lt;``) when taken from the page's
source. Triton wrote plain ASCII: `retyped` gives it back, so every pattern reads the line as written.
"""

from __future__ import annotations

import html
import re
from typing import Final

__all__ = ["LOOKALIKES", "retyped"]

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")
"""ECMA-48 control sequences (colours, cursor moves) and two-character escapes."""
LOOKALIKES: Final = {
    **dict.fromkeys("\u00a0\u2007\u2009\u202f", " "),  # no-break and thin spaces of a web page or chat
    **dict.fromkeys("\u200b\u200c\u200d\u2060\ufeff", ""),  # zero-width characters; a BOM on the first line
    **dict.fromkeys("\u2018\u2019\u201a\u2032", "'"),  # quotes an editor or a blog engine curled
    **dict.fromkeys("\u201c\u201d\u201e\u2033", '"'),
}
"""What text editors, chat and web pages put in place of the ASCII a log was written in (the chunk
scanner looks for the same characters, `scan`)."""
_TRANSLATION = str.maketrans(LOOKALIKES)
_HTML_ENTITY = re.compile(r"&(?:#\d{1,7}|#[xX][0-9a-fA-F]{1,6}|quot|apos|lt|gt|amp);")


def retyped(line: str) -> str:
    """``line`` with colour codes removed, look-alike characters and HTML references mapped back."""
    if "\x1b" in line:
        line = _ANSI.sub("", line)
    if not line.isascii():
        line = line.translate(_TRANSLATION)
    if "&" in line and _HTML_ENTITY.search(line):
        line = html.unescape(line)
    return line
