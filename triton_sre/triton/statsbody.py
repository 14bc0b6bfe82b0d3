"""The entries of a `/v2/models/stats` body, decoded as its bytes arrive (pure: no I/O).

Triton answers `{"model_stats": [entry, entry, ...]}`, 39 MB at 10,000 models × 3 versions. `StatsDecoder`
is fed the body in pieces of any size and yields each entry as soon as its text is complete; the text
of yielded entries is dropped, so what it holds is one partial entry (at most `max_bytes`
characters: a larger one is `too_large`), not the body. A piece may end inside an entry, a string,
a number or a UTF-8 sequence. A body whose first key is not `model_stats` (or not an object at all)
is decoded whole at the end, the whole body under `max_bytes`.

`StatsBodyError.kind` is the poll fault (`parse` or `too_large`); the client turns it into its
`FetchError`.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from triton_sre import conventions as c

_PREFIX = '{"model_stats":['
_STATS_START = re.compile(r'\s*\{\s*"model_stats"\s*:\s*\[')
_SPACE = re.compile(r"\s*")
_NEAR_END = 8  # characters: a decode error this close to the end of the text may be a cut value
_NUMBER_GOES_ON = re.compile(r"(?:\.\d*)?(?:[eE][-+]?\d*)?\Z")  # what a cut number may end with

# states
_HEAD, _WHOLE, _FIRST, _VALUE, _AFTER, _TAIL = range(6)


class StatsBodyError(ValueError):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


class StatsDecoder:
    """Feed the body with `feed` (bytes) or `feed_text`, then call `finish`; each returns an
    iterator of the entries completed, to be exhausted before the next call. `max_bytes=None`: no cap."""

    def __init__(self, max_bytes: int | None = None) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")()
        self._max = max_bytes
        self._text = ""  # received and not yet consumed (from self._at)
        self._at = 0
        self._state = _HEAD
        self._retry = 0  # a cut entry is decoded again once this many characters are pending

    def entries(self, pieces: Iterable[bytes]) -> Iterator[Any]:
        """Every entry of a body given in pieces."""
        for piece in pieces:
            yield from self.feed(piece)
        yield from self.finish()

    def feed(self, data: bytes) -> Iterator[Any]:
        return self.feed_text(self._decode(data, final=False))

    def feed_text(self, text: str) -> Iterator[Any]:
        self._text = self._text[self._at :] + text if self._at else self._text + text
        self._at = 0
        yield from self._scan(final=False)
        pending = len(self._text) - self._at
        if self._max is not None and pending > self._max:
            raise self._too_large(
                "an entry of the statistics" if self._state in (_VALUE, _AFTER) else "the statistics"
            )

    def finish(self) -> Iterator[Any]:
        """The entries left; StatsBodyError(parse) when the body ended before its end."""
        self._text = self._text[self._at :] + self._decode(b"", final=True)
        self._at = 0
        yield from self._scan(final=True)

    def _too_large(self, what: str) -> StatsBodyError:
        return StatsBodyError(c.FAULT_TOO_LARGE, f"{what} exceeds {self._max} bytes")

    def _decode(self, data: bytes, final: bool) -> str:
        try:
            return self._utf8.decode(data, final)
        except UnicodeDecodeError as exc:
            raise StatsBodyError(c.FAULT_PARSE, f"statistics are not UTF-8: {exc}") from None

    def _scan(self, final: bool) -> Iterator[Any]:
        try:
            yield from self._entries(final)
        except (ValueError, RecursionError) as exc:  # RecursionError: nested too deep to decode
            if isinstance(exc, StatsBodyError):
                raise
            raise StatsBodyError(c.FAULT_PARSE, f"statistics are not valid JSON: {shorten(exc)}") from None

    def _entries(self, final: bool) -> Iterator[Any]:
        text, at = self._text, self._at
        if self._state == _HEAD:
            start = _STATS_START.match(text)
            if start is not None:
                self._state, at = _FIRST, start.end()
            else:
                probe = "".join(text.split())[: len(_PREFIX)]
                if not final and len(probe) < len(_PREFIX) and _PREFIX.startswith(probe):
                    return  # too little yet to tell
                self._state = _WHOLE
        if self._state == _WHOLE:  # another key first, or not an object: decoded whole at the end
            if final:
                yield from _whole(text)
            return
        end = len(text)
        while True:
            at = _SPACE.match(text, at).end()
            self._at = at
            if self._state == _TAIL:
                if final:
                    _tail(text[at:])
                return
            if at == end:
                if final:
                    raise ValueError(f"the body ends at character {at} before the list does")
                return
            if self._state == _FIRST:
                if text[at] == "]":
                    self._state, at = _TAIL, at + 1
                    continue
                self._state = _VALUE
            if self._state == _AFTER:
                if text[at] == ",":
                    self._state, at = _VALUE, at + 1
                elif text[at] == "]":
                    self._state, at = _TAIL, at + 1
                else:
                    raise ValueError(f"expected ',' or ']' at character {at}")
                continue
            # _VALUE: one entry
            if not final and end - at < self._retry:
                return  # cut last time: wait until twice as much text is here (linear in the entry)
            try:
                entry, after = _DECODER.raw_decode(text, at)
            except json.JSONDecodeError as exc:
                if final or not (exc.pos >= end - _NEAR_END or exc.msg.startswith("Unterminated string")):
                    raise
                self._retry = 2 * (end - at)
                return
            if not final and not isinstance(entry, (dict, list, str)) and _NUMBER_GOES_ON.match(text, after):
                # a number may go on in the next piece (`1` of `17`; `1.` and `2e+` decode as 1 and 2)
                self._retry = end - at + 1
                return
            if self._max is not None and after - at > self._max:
                raise StatsBodyError(
                    c.FAULT_TOO_LARGE, f"an entry of the statistics exceeds {self._max} bytes"
                )
            self._retry = 0
            self._state, at = _AFTER, after
            self._at = after
            yield entry


_DECODER = json.JSONDecoder()


def _whole(text: str) -> list[Any]:
    data = json.loads(text)
    stats = data.get("model_stats") if isinstance(data, dict) else None
    if not isinstance(stats, list):
        raise ValueError("no model_stats list")
    return stats


def _tail(rest: str) -> None:
    """What follows the list: `}`, or more keys of the object (checked, not kept)."""
    rest = rest.strip()
    if rest == "}":
        return
    if not rest.startswith(",") or rest[1:].lstrip().startswith("}"):
        raise ValueError("the object does not end after the model_stats list")
    json.loads("{" + rest[1:])  # the other keys: valid JSON, or ValueError


def shorten(exc: BaseException) -> str:
    text = str(exc)
    return text if len(text) <= 200 else text[:197] + "..."
