"""A fast, strict parser for the Prometheus text exposition format, version 0.0.4.

Built for polling Triton's `/metrics` every few seconds: a server with 1,000 models x 2 versions
serves ~96k sample lines (8 MB), which prometheus_client's parser needs about a second for.

The grammar it accepts and the error naming a body's first bad line are `grammar.py`'s.

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
from typing import cast

from triton_sre.triton.budget import BodyBudget
from triton_sre.triton.grammar import (
    ANY_LINE,
    FAST_LINE,
    INNER_ONE,
    NON_SAMPLE_LINES,
    PAIR_PARTS,
    PAIR_SPLIT,
    ExpositionError,
    raise_at_label_set,
    raise_first_bad_line,
)

__all__ = [
    "CHUNK_CHARS",
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


_ESCAPE = re.compile(r"\\(.)")
_UNESCAPED = {"\\": "\\", '"': '"', "n": "\n"}


def _unescape(match: re.Match[str]) -> str:
    return _UNESCAPED[match.group(1)]


class DuplicateLabel(Exception):
    pass


def parse_labels(inner: str) -> Labels:
    """Pairs of an already validated label set, unescaped and sorted by name."""
    pairs = PAIR_PARTS.findall(inner)
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
    validation: every line, kept or not, is checked against the full grammar (grammar.py: name, label
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
    pieces = FAST_LINE.split(text)
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
        pieces = ANY_LINE.split(gaps[k])
        if any(pieces[0::4]):
            raise_first_bad_line(text)
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
        raise_at_label_set(text, bad, None)
    if isinstance(labels, set):
        raise_at_label_set(text, labels, "duplicate label name")
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
    pieces = PAIR_SPLIT.split(joined)
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
