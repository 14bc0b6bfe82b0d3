"""A fast, strict parser for the Prometheus text exposition format, version 0.0.4.

Built for polling Triton's `/metrics` every few seconds: a server with 1,000 models x 2 versions
serves ~96k sample lines (8 MB), which prometheus_client's parser needs about a second for.

Grammar accepted (the Go reference parser's lexical rules; see `parse` for what is not checked):

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

Not checked (semantics, not syntax): a TYPE repeated or given after the family's samples,
duplicate series, histogram/summary structure.

How it is fast: one `re.split` over the whole body with a pattern for the common shape
(`name{...} value\\n`, single spaces) does the line splitting and tokenising in C; label sets are
parsed once per distinct raw label string (the same `model=..,version=..` set recurs in every
family); values go through `map(float, ...)`; samples are built with C-level maps and the cyclic
garbage collector paused. Lines that do not fit the fast shape (odd whitespace, a `}` inside a
label value, ...) are parsed by a general line regex and spliced in; only when that fails too is
the body walked line by line to report the first bad line.
"""

from __future__ import annotations

import gc
import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain, compress, islice, repeat
from operator import floordiv
from typing import NoReturn, cast

from triton_sre.triton.budget import BodyBudget

__all__ = [
    "CHUNK_CHARS",
    "INNER_ONE",
    "NAME",
    "NON_SAMPLE_LINES",
    "TIMESTAMP",
    "VALUE",
    "DuplicateLabel",
    "ExpositionError",
    "Labels",
    "Sample",
    "decode_body",
    "iter_parse",
    "parse",
    "parse_bytes",
    "parse_labels",
]

Labels = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class Sample:
    """One sample line: metric name as written (`x_count`, `x_sum` included), labels sorted by name."""

    name: str
    labels: Labels
    value: float

    def label(self, name: str, default: str = "") -> str:
        """The value of label `name`, or `default` when the sample has no such label."""
        for key, value in self.labels:
            if key == name:
                return value
        return default


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
_FAST_LINE = re.compile(
    r"^(" + NAME + r")(?:\{([^}\n]*)\})? (" + VALUE + r")(?: " + TIMESTAMP + r")?\n", re.MULTILINE
)
# What may lie between two fast-path sample lines: blank and comment lines.
NON_SAMPLE_LINES = re.compile(r"(?:[ \t]*(?:" + _COMMENT + r")?\n)*")
# General path: any valid line; groups are None for blank and comment lines.
_ANY_LINE = re.compile(
    r"^[ \t]*(?:(" + NAME + r")(?:[ \t]*\{(" + _INNER + r")\}[ \t]*|[ \t]+)(" + VALUE + r")"
    r"(?:[ \t]+" + TIMESTAMP + r")?[ \t]*|" + _COMMENT + r")?\n",
    re.MULTILINE,
)
INNER_ONE = re.compile(_INNER)
# One label pair, with the `,` after it or the end of the label set. Splitting "\n".join(label
# sets) with it leaves only blanks and newlines between matches iff every label set is valid.
_PAIR_SPLIT = re.compile(
    r"[ \t]*("
    + _LABEL_NAME
    + r")[ \t]*=[ \t]*"
    + r'"([^"\\\n]*(?:\\[\\"n][^"\\\n]*)*)"'
    + r"[ \t]*(?:,|(?=\n)|\Z)"
)
_PAIR_PARTS = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)[ \t]*=[ \t]*"([^"\\\n]*(?:\\[\\"n][^"\\\n]*)*)"')
_ESCAPE = re.compile(r"\\(.)")
_UNESCAPED = {"\\": "\\", '"': '"', "n": "\n"}


def _unescape(match: re.Match[str]) -> str:
    return _UNESCAPED[match.group(1)]


class DuplicateLabel(Exception):
    pass


def parse_labels(inner: str) -> Labels:
    """Pairs of an already validated label set, unescaped and sorted by name."""
    pairs = _PAIR_PARTS.findall(inner)
    if "\\" in inner:
        pairs = [(key, _ESCAPE.sub(_unescape, value)) for key, value in pairs]
    if len(pairs) > 1:
        pairs.sort()
        if len(dict(pairs)) != len(pairs):
            raise DuplicateLabel(inner)
    return tuple(pairs)


# Build frozen Samples without running the dataclass __init__ per object (three
# object.__setattr__ calls each): allocate, then fill each slot with a C-level map.
_new_object = object.__new__
_SET_NAME = Sample.__dict__["name"].__set__
_SET_LABELS = Sample.__dict__["labels"].__set__
_SET_VALUE = Sample.__dict__["value"].__set__


def _build(names: Sequence[str], labels: Iterable[Labels], values: Iterable[float]) -> list[Sample]:
    samples = list(map(_new_object, repeat(Sample, len(names))))
    deque(map(_SET_NAME, samples, names), maxlen=0)
    deque(map(_SET_LABELS, samples, labels), maxlen=0)
    deque(map(_SET_VALUE, samples, values), maxlen=0)
    return samples


# ---------------------------------------------------------------------------
# Public API.
# ---------------------------------------------------------------------------
def parse(text: str, *, keep: Callable[[str], bool] | None = None) -> list[Sample]:
    """Parse a whole exposition body into samples, in body order.

    `keep(name)` selects which samples are materialised; it is called once per distinct sample
    name (e.g. separately for `x`, `x_count`, `x_sum`) and must be pure. Skipping a name
    skips label unescaping/sorting, float conversion and object creation for its lines, not
    validation: every line, kept or not, is checked against the full grammar above (name, label
    syntax and escapes, `__name__`, value, timestamp), so `keep` never turns a rejected body into
    an accepted one, with one exception: duplicate label names within one label set are only
    detected on kept lines.

    Raises ExpositionError for the first invalid line (1-based number, excerpt), including a
    final line without its `\\n`. An empty body yields no samples.
    """
    return _parse_slice(text, keep, None)


# Label sets of unread families validated in earlier slices of a body, remembered so a later slice
# does not check them again, up to about this many: a body of millions of distinct unread sets would
# otherwise hold them all (1.8 million took 188 MB) where checking a set again costs only time.
VALIDATED_KEPT = 1 << 16

# Bodies are parsed in slices of about this many characters, cut at line ends: the whole-body
# regex split would otherwise hold ~6x the body in temporary strings at once.
CHUNK_CHARS = 1 << 20


def iter_parse(
    text: str,
    *,
    keep: Callable[[str], bool] | None = None,
    chunk_chars: int = CHUNK_CHARS,
    budget: BodyBudget | None = None,
) -> Iterator[list[Sample]]:
    """`parse` in slices: yields each slice's samples, so a caller that folds them as they come
    holds one slice's temporaries at a time. Errors carry line numbers of the whole body; samples
    of earlier slices may have been yielded before an error in a later one. With a `budget`
    (triton/budget.py), a slice past it raises `BudgetExceeded` before its label sets are parsed.
    """
    start = 0
    lines_before = 0
    size = len(text)
    cache = _LabelCache()
    while start < size:
        cut = start + chunk_chars
        newline = text.find("\n", cut - 1) if cut < size else -1
        end = newline + 1 if newline >= 0 else size  # no line end after the cut: take the rest
        chunk = text[start:end]
        try:
            yield _parse_slice(chunk, keep, cache, budget)
        except ExpositionError as exc:
            raise ExpositionError(exc.reason, exc.lineno + lines_before, exc.excerpt) from None
        lines_before += chunk.count("\n")
        start = end


def _parse_slice(
    text: str,
    keep: Callable[[str], bool] | None,
    cache: _LabelCache | None,
    budget: BodyBudget | None = None,
) -> list[Sample]:
    was_enabled = gc.isenabled()
    gc.disable()  # ~100k new objects would trigger many pointless collections
    try:
        return _parse(text, keep, cache, budget)
    finally:
        if was_enabled:
            gc.enable()


def decode_body(body: bytes | bytearray) -> str:
    """An HTTP body as text; the format is UTF-8 by definition."""
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        start = body.rfind(b"\n", 0, exc.start) + 1
        end = body.find(b"\n", exc.start)
        line = bytes(body[start : end if end >= 0 else len(body)]).decode("utf-8", "replace")
        lineno = body.count(b"\n", 0, exc.start) + 1
        raise ExpositionError(f"invalid UTF-8 at byte {exc.start}", lineno, line) from None


def parse_bytes(body: bytes | bytearray, *, keep: Callable[[str], bool] | None = None) -> list[Sample]:
    """`parse` for an HTTP body."""
    return parse(decode_body(body), keep=keep)


# ---------------------------------------------------------------------------
# Implementation.
# ---------------------------------------------------------------------------
def _parse(
    text: str, keep: Callable[[str], bool] | None, cache: _LabelCache | None, budget: BodyBudget | None
) -> list[Sample]:
    pieces = _FAST_LINE.split(text)
    # pieces = [gap, name, inner, value, gap, name, inner, value, ..., gap]; a gap is the text
    # between two fast-shape sample lines: normally nothing, or HELP/TYPE/blank lines.
    gaps = pieces[0::4]
    names: list[str] = pieces[1::4]
    inners: list[str | None] = pieces[2::4]
    values: list[str] = pieces[3::4]
    odd = [k for k in compress(range(len(gaps)), gaps) if not NON_SAMPLE_LINES.fullmatch(gaps[k])]
    if odd:
        names, inners, values = _merge_odd_lines(text, gaps, odd, names, inners, values)
    return _assemble(text, names, inners, values, keep, cache, budget)


def _merge_odd_lines(
    text: str,
    gaps: list[str],
    odd: list[int],
    names: list[str],
    inners: list[str | None],
    values: list[str],
) -> tuple[list[str], list[str | None], list[str]]:
    """Parse the gaps holding more than blank/comment lines with the general line pattern and
    splice their samples in (gap k precedes fast sample k)."""
    all_names: list[str] = []
    all_inners: list[str | None] = []
    all_values: list[str] = []
    start = 0
    for k in odd:
        all_names += names[start:k]
        all_inners += inners[start:k]
        all_values += values[start:k]
        start = k
        pieces = _ANY_LINE.split(gaps[k])
        if any(pieces[0::4]):
            _raise_first_bad_line(text)
        gap_names = pieces[1::4]  # None for blank and comment lines
        all_names += compress(gap_names, gap_names)
        all_inners += compress(pieces[2::4], gap_names)
        all_values += compress(pieces[3::4], gap_names)
    all_names += names[start:]
    all_inners += inners[start:]
    all_values += values[start:]
    return all_names, all_inners, all_values


def _assemble(
    text: str,
    names: list[str],
    inners: list[str | None],
    values: list[str],
    keep: Callable[[str], bool] | None,
    cache: _LabelCache | None = None,
    budget: BodyBudget | None = None,
) -> list[Sample]:
    """Samples from the lines' names, raw label sets (None: no braces) and value strings.

    With a `cache` (slices of one body), label sets parsed or validated in an earlier slice are
    not parsed again."""
    skipped: set[str | None] = set()
    decisions = {} if keep is None else {name: bool(keep(name)) for name in set(names)}
    if not all(decisions.values()):
        mask = list(map(decisions.__getitem__, names))
        skipped = set(inners)
        names = list(compress(names, mask))
        inners = list(compress(inners, mask))
        values = list(compress(values, mask))
    needed = set(inners)
    skipped -= needed
    needed.discard(None)
    skipped.discard(None)
    distinct = cast("set[str]", needed)
    if cache is not None:
        distinct -= cache.parsed.keys()
        skipped -= cache.parsed.keys()
        skipped -= cache.validated
    if budget is not None:  # before a pair is parsed or a sample built
        budget.take_samples(len(names))
        budget.check_label_sets(chain(distinct, cast("set[str]", skipped)))
    labels = _label_sets(list(distinct), list(cast("set[str]", skipped)))
    if labels is None:
        bad = {inner for inner in distinct | cast("set[str]", skipped) if not INNER_ONE.fullmatch(inner)}
        _raise_at_label_set(text, bad, None)
    if isinstance(labels, set):
        _raise_at_label_set(text, labels, "duplicate label name")
    if cache is not None:
        cache.parsed.update(labels)
        if len(cache.validated) < VALIDATED_KEPT:  # past it, a set seen again is checked again
            cache.validated.update(cast("set[str]", skipped))
        labels = cache.parsed
    return _build(names, map(labels.__getitem__, inners), map(float, values))


@dataclass
class _LabelCache:
    """Label sets already handled in earlier slices of the same body."""

    parsed: dict[str | None, Labels] = field(default_factory=lambda: {None: ()})
    validated: set[str] = field(default_factory=set)


def _label_sets(needed: list[str], others: list[str]) -> dict[str | None, Labels] | set[str] | None:
    """Parse the distinct raw label sets `needed`, and validate `others` without parsing them.

    Returns the parsed sets (plus None: ()), the sets with duplicate label names, or None if
    some set is syntactically invalid. Works on all sets at once: one regex split of the joined
    sets yields every pair; pair counts per set come from counting quotes; C-level maps cut the
    pair list into sorted tuples.
    """
    joined = "\n".join(needed + others)
    pieces = _PAIR_SPLIT.split(joined)
    if "".join(pieces[0::3]).strip(" \t\n"):
        return None
    if "\\" in joined:  # escaped quotes break quote counting: one set at a time
        parsed: dict[str | None, Labels] = {None: ()}
        duplicates: set[str] = set()
        for inner in needed:
            try:
                parsed[inner] = parse_labels(inner)
            except DuplicateLabel:
                duplicates.add(inner)
        return duplicates or parsed
    counts = list(map(floordiv, map(str.count, needed, repeat('"')), repeat(2)))
    pairs = iter(zip(pieces[1::3], pieces[2::3], strict=True))
    tuples = list(map(tuple, map(sorted, map(islice, repeat(pairs), counts))))
    if list(map(len, map(dict, tuples))) != counts:
        return {
            inner for inner, pairs_ in zip(needed, tuples, strict=True) if len(dict(pairs_)) != len(pairs_)
        }
    parsed = dict(zip(needed, tuples, strict=True))
    parsed[None] = ()
    return parsed


# ---------------------------------------------------------------------------
# Error reporting (runs only on invalid input).
# ---------------------------------------------------------------------------
def _raise_first_bad_line(text: str) -> NoReturn:
    """Find and report the first line that no valid line pattern accepts."""
    lines = text.split("\n")
    last = len(lines) - 1
    for lineno, line in enumerate(lines, 1):
        if lineno - 1 == last:
            if not line:
                break
            raise ExpositionError("body does not end with a newline (truncated?)", lineno, line)
        if not _ANY_LINE.fullmatch(line + "\n"):
            raise ExpositionError(_diagnose(line), lineno, line)
    raise AssertionError("no invalid line found")  # pragma: no cover


def _raise_at_label_set(text: str, bad: set[str], reason: str | None) -> NoReturn:
    """Report the first sample line whose raw label set is in `bad`."""
    for lineno, line in enumerate(text.split("\n"), 1):
        match = _FAST_LINE.match(line + "\n") or _ANY_LINE.match(line + "\n")
        if match and match.group(2) in bad:
            if reason is None:
                reason = _diagnose(line)
            elif reason == "duplicate label name":
                names = [name for name, _ in _PAIR_PARTS.findall(match.group(2))]
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
