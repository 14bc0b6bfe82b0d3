"""The Prometheus text exposition format's grammar (version 0.0.4), as the regular expressions the
parser (`exposition.py`) and the skeleton (`skeleton.py`) share, and why a line the grammar rejects is
rejected: `ExpositionError` names the first bad line of a body and its reason.

Grammar accepted (the Go reference parser's lexical rules; see `exposition.parse` for what is not
checked):

* lines end with `\\n`; the body must be empty or end with `\\n` (otherwise it was truncated);
* blank lines (spaces/tabs only) and comments are accepted; `# HELP <name> ...` and
  `# TYPE <name> <counter|gauge|histogram|summary|untyped>` must carry a valid metric name (and
  a lowercase type) when they carry one at all; HELP text is not interpreted (its escapes are
  not checked); a comment whose first token is not HELP/TYPE is ignored;
* a sample is `name[{label="value",...}] value [timestamp]`, tokens separated by spaces/tabs,
  leading and trailing spaces/tabs allowed; names `[a-zA-Z_:][a-zA-Z0-9_:]*`; label names
  `[a-zA-Z_][a-zA-Z0-9_]*`, not `__name__`, no duplicates; a trailing comma in the label set is
  allowed; label values escape only `\\\\`, `\\"` and `\\n`; values are decimal floats, `NaN`
  / `+Inf` / `-Inf` in any case (`Nan` as Triton writes it); no `_` digit separators, no hex;
  the optional timestamp is an integer and is ignored.

Pure, and no state: the error reporting runs only on a body already found invalid.
"""

from __future__ import annotations

import re
from typing import NoReturn

__all__ = [
    "ANY_LINE",
    "FAST_LINE",
    "INNER_ONE",
    "NAME",
    "NON_SAMPLE_LINES",
    "PAIR_PARTS",
    "PAIR_SPLIT",
    "TIMESTAMP",
    "VALUE",
    "ExpositionError",
    "raise_at_label_set",
    "raise_first_bad_line",
]


class ExpositionError(ValueError):
    """The body is not valid text exposition format; names the first offending line."""

    EXCERPT_CHARS = 80

    def __init__(self, reason: str, lineno: int, line: str = "") -> None:
        excerpt = line if len(line) <= self.EXCERPT_CHARS else line[: self.EXCERPT_CHARS - 3] + "..."
        super().__init__(reason, lineno, excerpt)
        self.reason = reason
        self.lineno = lineno
        self.excerpt = excerpt

    def __str__(self) -> str:
        return f"line {self.lineno}: {self.reason}: {self.excerpt!r}"


# ---------------------------------------------------------------------------
# Grammar pieces.
# ---------------------------------------------------------------------------
NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_LABEL_NAME = r"(?!__name__[ \t]*=)[a-zA-Z_][a-zA-Z0-9_]*"
_LABEL_VALUE = r'"[^"\\\n]*(?:\\[\\"n][^"\\\n]*)*"'
_PAIR = _LABEL_NAME + r"[ \t]*=[ \t]*" + _LABEL_VALUE
# What sits between `{` and `}`.
_INNER = r"[ \t]*(?:" + _PAIR + r"[ \t]*(?:,[ \t]*" + _PAIR + r"[ \t]*)*(?:,[ \t]*)?)?"
# ASCII-only on purpose: (?i:inf) would also match a dotless "ı", which float() rejects.
VALUE = (
    r"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
    r"|[Ii][Nn][Ff](?:[Ii][Nn][Ii][Tt][Yy])?|[Nn][Aa][Nn])"
)
TIMESTAMP = r"[+-]?[0-9]+"
_TYPES = r"counter|gauge|histogram|summary|untyped"
# After the `#` of a comment line (Go parser rules: a first token other than HELP/TYPE makes a
# plain comment; HELP/TYPE may stop early; when present, the name and type must be valid).
_COMMENT = (
    r"#(?:[ \t]*HELP(?:[ \t]+(?:" + NAME + r"(?:[ \t][^\n]*)?)?)?"
    r"|[ \t]*TYPE(?:[ \t]+(?:" + NAME + r"(?:[ \t]+(?:(?:" + _TYPES + r")[ \t]*)?)?)?)?"
    r"|(?![ \t]*(?:HELP|TYPE)[ \t\n])[^\n]*)"
)

# Fast path: the shape every prometheus-cpp / client_golang / prometheus_client server writes.
# The label set is captured loosely (no `}` inside) and validated once per distinct string.
FAST_LINE = re.compile(
    r"^(" + NAME + r")(?:\{([^}\n]*)\})? (" + VALUE + r")(?: " + TIMESTAMP + r")?\n", re.MULTILINE
)
# What may lie between two fast-path sample lines: blank and comment lines.
NON_SAMPLE_LINES = re.compile(r"(?:[ \t]*(?:" + _COMMENT + r")?\n)*")
# General path: any valid line; groups are None for blank and comment lines.
ANY_LINE = re.compile(
    r"^[ \t]*(?:(" + NAME + r")(?:[ \t]*\{(" + _INNER + r")\}[ \t]*|[ \t]+)(" + VALUE + r")"
    r"(?:[ \t]+" + TIMESTAMP + r")?[ \t]*|" + _COMMENT + r")?\n",
    re.MULTILINE,
)
INNER_ONE = re.compile(_INNER)
# One label pair, with the `,` after it or the end of the label set. Splitting "\n".join(label
# sets) with it leaves only blanks and newlines between matches iff every label set is valid.
PAIR_SPLIT = re.compile(
    r"[ \t]*("
    + _LABEL_NAME
    + r")[ \t]*=[ \t]*"
    + r'"([^"\\\n]*(?:\\[\\"n][^"\\\n]*)*)"'
    + r"[ \t]*(?:,|(?=\n)|\Z)"
)
PAIR_PARTS = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)[ \t]*=[ \t]*"([^"\\\n]*(?:\\[\\"n][^"\\\n]*)*)"')


# ---------------------------------------------------------------------------
# Error reporting (runs only on invalid input).
# ---------------------------------------------------------------------------
def raise_first_bad_line(text: str) -> NoReturn:
    """Find and report the first line that no valid line pattern accepts."""
    lines = text.split("\n")
    last = len(lines) - 1
    for lineno, line in enumerate(lines, 1):
        if lineno - 1 == last:
            if not line:
                break
            raise ExpositionError("body does not end with a newline (truncated?)", lineno, line)
        if not ANY_LINE.fullmatch(line + "\n"):
            raise ExpositionError(_diagnose(line), lineno, line)
    raise AssertionError("no invalid line found")  # pragma: no cover


def raise_at_label_set(text: str, bad: set[str], reason: str | None) -> NoReturn:
    """Report the first sample line whose raw label set is in `bad`."""
    for lineno, line in enumerate(text.split("\n"), 1):
        match = FAST_LINE.match(line + "\n") or ANY_LINE.match(line + "\n")
        if match and match.group(2) in bad:
            if reason is None:
                reason = _diagnose(line)
            elif reason == "duplicate label name":
                names = [name for name, _ in PAIR_PARTS.findall(match.group(2))]
                reason += " " + repr(next(name for name in names if names.count(name) > 1))
            raise ExpositionError(reason, lineno, line)
    raise AssertionError("label set not found")  # pragma: no cover


_NAME_AT = re.compile(r"[ \t]*(" + NAME + r")")
_BLANKS = re.compile(r"[ \t]*")
_OPEN_BRACE = re.compile(r"[ \t]*\{")
_PAIR_AT = re.compile(r"[ \t]*(" + _LABEL_NAME + r")[ \t]*=[ \t]*")
_LABEL_VALUE_AT = re.compile(_LABEL_VALUE)
_QUOTED_LOOSELY = re.compile(r'"(?:[^"\\]|\\.)*"')
_BAD_ESCAPE = re.compile(r'\\[^\\"n]')
_VALUE_AT = re.compile(r"[ \t]*(" + VALUE + r")(?=[ \t]|$)")
_TAIL = re.compile(r"(?:[ \t]+" + TIMESTAMP + r")?[ \t]*")
_ESCAPES_HINT = 'only \\\\, \\" and \\n are allowed'


def _diagnose(line: str) -> str:
    """Why `line` (without its newline) is not a valid line; best effort, for the error message."""
    if "\r" in line:
        return "carriage return in line (CRLF line endings are not allowed)"
    if line.lstrip(" \t").startswith("#"):
        return "malformed HELP or TYPE comment"
    match = _NAME_AT.match(line)
    if not match:
        return "expected a metric name"
    pos = match.end()
    brace = _OPEN_BRACE.match(line, pos)
    if brace:
        reason = _diagnose_label_set(line, brace.end())
        if isinstance(reason, str):
            return reason
        pos = reason
    elif pos < len(line) and line[pos] not in " \t":
        return "invalid character in metric name"
    value = _VALUE_AT.match(line, pos)
    if not value:
        return "invalid sample value" if line[pos:].strip(" \t") else "missing sample value"
    if not _TAIL.fullmatch(line, value.end()):
        return "unexpected text after the sample value"
    return "invalid line"


def _diagnose_label_set(line: str, pos: int) -> str | int:
    """The problem in the label set starting at `pos`, or the position after its `}`."""
    while True:
        pos = _BLANKS.match(line, pos).end()  # type: ignore[union-attr]
        if line.startswith("}", pos):
            return pos + 1
        if pos >= len(line):
            return "unterminated label set"
        pair = _PAIR_AT.match(line, pos)
        if not pair:
            if line.startswith("__name__", pos):
                return "label name __name__ is reserved"
            return "expected a label name"
        pos = pair.end()
        if not line.startswith('"', pos):
            return "label value must be double-quoted"
        value = _LABEL_VALUE_AT.match(line, pos)
        if not value:
            quoted = _QUOTED_LOOSELY.match(line, pos)
            text = quoted.group() if quoted else line[pos:]
            if _BAD_ESCAPE.search(text) or text.endswith("\\"):
                return f"invalid escape in label value ({_ESCAPES_HINT})"
            return "unterminated label value"
        pos = _BLANKS.match(line, value.end()).end()  # type: ignore[union-attr]
        if line.startswith(",", pos):
            pos += 1
        elif not line.startswith("}", pos):
            return "expected ',' or '}' in label set" if pos < len(line) else "unterminated label set"
