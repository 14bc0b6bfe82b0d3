"""Replaying a server's metrics body: the same lines again, with new values, without parsing them.

A server such as Triton writes the same lines in the same order at every scrape. `Skeleton` keeps
a digest of a valid body's text between its values (checked once against `grammar`'s rules)
and reads only the value strings of later bodies whose text between values is identical.
"""

from __future__ import annotations

import hashlib
import re
from array import array
from collections.abc import Callable, Iterator

from triton_sre.triton.exposition import CHUNK_CHARS, DuplicateLabel, Labels, parse_labels
from triton_sre.triton.grammar import INNER_ONE, NAME, NON_SAMPLE_LINES, TIMESTAMP, VALUE

__all__ = ["Skeleton"]

# What ends a plain sample line: one space, the value, an optional timestamp, the newline. A
# `re.split` with it leaves the text between values ("heads": comment lines, then the next
# line's `name{labels}`) and the value strings.
_SEGMENT = re.compile(r" (" + VALUE + r")(?: " + TIMESTAMP + r")?\n")
_FAST_HEAD = re.compile(r"(" + NAME + r")(?:\{([^}\n]*)\})?")
# A comment line that stays valid whatever segment follows it (HELP text with a name, or a plain
# comment): `# TYPE x` + ` 5` is not valid, and `# HELP` + ` NaN` names a metric `NaN`.
_SAFE_COMMENT = re.compile(
    r"#(?:[ \t]*HELP[ \t]+" + NAME + r"[ \t][^\n]*|(?![ \t]*(?:HELP|TYPE)(?:[ \t]|$))[^\n]*)"
)


class _HeadsDigest:
    """SHA-256 of a list of strings fed in parts: of their concatenation and of their lengths
    (together they determine the list), so any cut into parts gives the same digest."""

    __slots__ = ("_lengths", "_text", "count")

    def __init__(self) -> None:
        self._text = hashlib.sha256()
        self._lengths = hashlib.sha256()
        self.count = 0

    def add(self, parts: list[str]) -> None:
        self._text.update("".join(parts).encode("utf-8", "surrogatepass"))
        self._lengths.update(array("q", map(len, parts)).tobytes())
        self.count += len(parts)

    def key(self) -> tuple[int, bytes, bytes]:
        return self.count, self._text.digest(), self._lengths.digest()


class Skeleton:
    """A valid body less its sample values, for polling a server whose lines repeat.

    A server such as Triton writes the same lines in the same order at every scrape; only the
    values change. `Skeleton.of(text)` checks a whole body against the grammar (as `parse`
    does) and keeps a digest of the text between the values; `values(other)` then returns the
    value strings of a later body whose text between values is identical, without parsing it
    again. Such a body is valid (the text kept was, and every value matched the value grammar)
    and has the same samples, in the same order: `samples` holds their (value index, name,
    labels). The text between values is compared by SHA-256 (of the text and of the pieces'
    lengths), so the skeleton holds no copy of it: a difference that compared equal would need a
    SHA-256 collision.
    """

    __slots__ = ("_key", "samples")

    def __init__(self, key: tuple[int, bytes, bytes], samples: list[tuple[int, str, Labels]]) -> None:
        self._key = key
        self.samples = samples

    def without_samples(self) -> Skeleton:
        """The same skeleton without its `samples` (for a caller that keeps what it needs of them)."""
        return Skeleton(self._key, [])

    @classmethod
    def of(cls, text: str, *, keep: Callable[[str], bool] | None = None) -> Skeleton | None:
        """The skeleton of `text`; None when the body is not valid or some sample line is not in
        the plain shape (`name{labels} value [timestamp]`, single spaces), so it cannot be replayed.
        `keep` is `parse`'s: `samples` holds the kept samples only, and the other lines are
        checked as `parse` checks them."""
        decisions: dict[str, bool] = {}
        samples: list[tuple[int, str, Labels]] = []
        labels: dict[str | None, Labels] = {None: ()}
        digest = _HeadsDigest()
        for heads, values, final in _slices(text):
            first = digest.count  # value index of this slice's first head
            digest.add(heads)
            for offset, head in enumerate(heads):
                before, newline, prefix = head.rpartition("\n")
                if newline and not NON_SAMPLE_LINES.fullmatch(before + "\n"):
                    return None
                if final and offset == len(values):  # after the last value: complete lines or nothing
                    if prefix:
                        return None
                    break
                match = _FAST_HEAD.fullmatch(prefix)
                if match is None:
                    if _SAFE_COMMENT.fullmatch(prefix):
                        continue
                    return None
                name, inner = match.groups()
                kept = decisions.get(name)
                if kept is None:
                    kept = decisions[name] = keep is None or bool(keep(name))
                if not kept:
                    if inner is not None and not INNER_ONE.fullmatch(inner):
                        return None
                    continue
                if inner not in labels:
                    if not INNER_ONE.fullmatch(inner):
                        return None
                    try:
                        labels[inner] = parse_labels(inner)
                    except DuplicateLabel:
                        return None
                samples.append((first + offset, name, labels[inner]))
        return cls(digest.key(), samples)

    @staticmethod
    def fingerprint(text: str) -> tuple[int, bytes, bytes]:
        """What two bodies of one skeleton share (without checking that they are valid)."""
        digest = _HeadsDigest()
        for heads, _, _ in _slices(text):
            digest.add(heads)
        return digest.key()

    def values(self, text: str, chunk_chars: int = CHUNK_CHARS) -> list[str] | None:
        """The value strings of `text` (one per value of the skeleton, comment ones included), or
        None when `text` differs from the skeleton's body in more than its values."""
        digest = _HeadsDigest()
        values: list[str] = []
        for heads, more, _ in _slices(text, chunk_chars):
            digest.add(heads)
            values += more
            if digest.count > self._key[0]:
                return None
        return values if digest.key() == self._key else None


def _slices(text: str, chunk_chars: int = CHUNK_CHARS) -> Iterator[tuple[list[str], list[str], bool]]:
    """`_SEGMENT.split(text)` in slices cut at line ends (a segment never spans a line end), so
    only one slice's pieces exist at a time: (the heads completed in the slice, its values, whether
    it is the last slice). A slice's heads come before its values one for one; the last slice also
    has the text after the last value."""
    carry = ""  # the start of a head that continues in the next slice
    start, size = 0, len(text)
    while True:
        newline = text.find("\n", start + chunk_chars - 1) if start + chunk_chars < size else -1
        end = newline + 1 if newline >= 0 else size
        pieces = _SEGMENT.split(text[start:end])
        heads = pieces[0::2]
        values = pieces[1::2]
        del pieces
        heads[0] = carry + heads[0]
        if end == size:
            yield heads, values, True
            return
        carry = heads.pop()
        yield heads, values, False
        start = end
