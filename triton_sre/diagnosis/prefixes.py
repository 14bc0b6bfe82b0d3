"""Pure: the prefixes a paste puts before every line that only a later line shows to be prefixes.

A mixin of `logparse`'s parser, which owns the current event and feeds lines: the indentation of a
paste indented as a whole, grep -n's counting numbers, stern's ``<pod> <container> `` columns and the
prefix of a logger that relays Triton's output behind a level of its own. Each is learned from the line
that shows it, peeled from every later line, and from the line before, which is read again.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterator

from triton_sre.diagnosis.events import SOURCE_RAW, LogEvent
from triton_sre.diagnosis.lineshape import (
    KIND_LOG,
    KIND_RAW,
    classify_line,
    peel_collector_prefix,
    relay_prefix,
    stern_columns,
    stern_head,
)

__all__ = ["PrefixReader"]

_GREP_NUMBER = re.compile(r"(\d{1,9})[:-](?!\d\d[-:])")  # not a date's year or a time's hour
_FIRST_LINES = 3
_MAX_COLUMNS = 16
"""stern's columns (and relays' prefixes) of this many at most are remembered (a log of a few replicas)."""

LineRead = tuple[str, str, tuple[str, str, str] | None]


class PrefixReader:
    """The prefix-learning half of the log parser (`logparse._Parser` feeds lines and owns the event)."""

    cur: list[object] | None
    prev_raw: str
    last_line: int

    def __init__(self) -> None:
        self.columns: tuple[str, ...] = ()
        """stern's ``<pod> <container> `` columns seen before Triton's own lines (`stern_columns`)."""
        self.last_head: str | None = None
        """The stern-shaped columns the last raw line started with (two in a row: one pod's lines)."""
        self.indent: str | None = None
        """The blanks every line of the paste starts with (None before its first non-blank line)."""
        self.grep_next = 0
        """The number grep -n would print on this line, after a line that started with one (0: none)."""
        self.grep_seen = False
        """A pair of grep -n numbers was seen (`_read_again` read the pair's first line again)."""
        self.relays: tuple[re.Pattern[str], ...] = ()
        """Prefixes of another program's logger that printed Triton's own lines (`_relayed`)."""

    def feed(self, number: int, raw: str) -> Iterator[LogEvent]:
        raise NotImplementedError  # the parser's

    def _unindent(self, number: int, raw: str) -> str:
        """``raw`` without the blanks a paste indented as a whole put before every line (a Markdown code
        block), learned from its first lines."""
        if self.indent is None:  # the first line: a paste indented as a whole (a Markdown code block)
            if raw.strip() or number > _FIRST_LINES:
                # (past a collector's prefix: the streaming reader hands some chunks over with prefixes on)
                rest = peel_collector_prefix(raw)
                lead = len(rest) - len(rest.lstrip(" "))
                self.indent = " " * lead if 4 <= lead <= 8 and number <= _FIRST_LINES else ""
                return self._past_indent(raw, rest)
        elif self.indent:
            if raw.startswith(self.indent):
                return raw[len(self.indent) :]
            if raw.strip():
                rest = peel_collector_prefix(raw)
                if len(rest) < len(raw) and rest.startswith(self.indent):
                    return self._past_indent(raw, rest)
                self.indent = ""  # a line less indented: the paste's own indentation ends here
        return raw

    def _past_indent(self, raw: str, rest: str) -> str:
        """``raw`` without the paste's indentation, which starts ``rest`` (past a collector's prefix)."""
        return raw[: len(raw) - len(rest)] + rest[len(self.indent or "") :]

    def _peel(self, number: int, raw: str, before: str) -> Generator[LogEvent, None, LineRead]:
        """Reads ``raw`` past the prefixes learned so far, and learns those this line shows; returns the
        line's `classify_line` result after. Yields what reading the line before again gives (its prefix is
        one only this line showed)."""
        kind, s, fields = classify_line(raw)
        if raw[:1].isdigit():
            number_at = _GREP_NUMBER.match(raw)
            grep_next, self.grep_next = self.grep_next, int(number_at.group(1)) + 1 if number_at else 0
            counts_on = bool(number_at and grep_next and int(number_at.group(1)) == grep_next)
            if kind == KIND_RAW and number_at and counts_on:
                # grep -n's numbers, one more than the line before's: the rest is the line grep printed
                kind, s, fields = classify_line(raw[number_at.end() :])
            if counts_on and not self.grep_seen and (first := _GREP_NUMBER.match(before)) is not None:
                self.grep_seen = True
                yield from self._read_again(number - 1, before[first.end() :])
        else:
            self.grep_next = 0
        if kind == KIND_RAW:
            for head in self.columns:
                if s.startswith(head):
                    kind, s, fields = classify_line(s[len(head) :])
                    break
            else:
                # Two lines in a row that start with the same stern-shaped columns are one pod's lines.
                head = stern_head(s)
                if head is not None and head == self.last_head and len(self.columns) < _MAX_COLUMNS:
                    self.columns += (head,)
                    kind, s, fields = classify_line(s[len(head) :])
                    yield from self._read_again_past(number - 1, before, head)
                self.last_head = head
        elif len(self.columns) < _MAX_COLUMNS and len(s) < len(raw) - 1:
            head = stern_columns(raw, s)
            if head is not None and head not in self.columns:
                self.columns += (head,)
                yield from self._read_again_past(number - 1, before, head)
        if kind == KIND_RAW:
            rest = yield from self._relayed(number, before, s)
        elif kind == KIND_LOG and (line := raw.rstrip("\r\n")) != s and line.endswith(s):
            # Triton's line behind a prefix classify_line peeled (a Python wrapper's "- x - INFO - "): known
            # to start there, so a relay is learned without searching for it.
            rest = yield from self._relayed(number, before, line, len(line) - len(s))
        else:
            rest = None
        if rest is not None:
            kind, s, fields = classify_line(rest)
        return kind, s, fields

    def _read_again(self, number: int, line: str) -> Iterator[LogEvent]:
        """The line before was read with a prefix on that only this line showed to be one (grep -n's first
        number, stern's first columns): where it started the current event and nothing went on it yet,
        it is read again as ``line``, the prefix peeled."""
        cur = self.cur
        if cur is not None and len(cur[4]) == 1:
            yield from self._read_again_lines(number, [line])

    def _read_again_lines(self, first: int, lines: list[str]) -> Iterator[LogEvent]:
        """The current raw event, which starts at line ``first`` and holds one part per line, read again as
        ``lines`` (each past a prefix that only a later line showed: a relay's on several lines)."""
        cur = self.cur
        if cur is None or cur[0] != first or cur[2] != SOURCE_RAW:
            return
        self.cur = None
        kept = self.prev_raw, self.grep_next, self.last_line, self.last_head
        self.last_line = first - 1
        for offset, line in enumerate(lines):
            yield from self.feed(first + offset, line)
        self.prev_raw, self.grep_next, self.last_line, self.last_head = kept

    def _read_again_past(self, number: int, before: str, head: str) -> Iterator[LogEvent]:
        """`_read_again` for the line before, past stern's ``head`` (on the line as classify_line read it:
        stern's colours gone)."""
        seen = classify_line(before)[1]
        if seen.startswith(head):
            yield from self._read_again(number, seen[len(head) :])

    def _relayed(
        self, number: int, before: str, line: str, start: int | None = None
    ) -> Generator[LogEvent, None, str | None]:
        """``line`` past the prefix of a logger that relays another process's output (a NIM's
        ``ERROR <date> <time> nimutils.py:68] I0424 ...``, a Python wrapper's ``<time> - tritonserver - INFO -
        I0424 ...``), or None: the prefix's level is the relay's, for every line it carries, so a prefix
        seen before Triton's own line (at ``start`` when known) is peeled from every line that starts the
        same way (its digits free), the line before included. Yields the events that reading the line before
        again gives."""
        for relay in self.relays:
            for text in (line, self.prev_raw):
                if (m := relay.match(text)) is not None:
                    return text[m.end() :]
        found = relay_prefix(line, start) if len(self.relays) < _MAX_COLUMNS else None
        if found is None:
            return None
        relay, end = found
        self.relays += (relay,)
        # The line before as the current event holds it (past the prefixes peeled already: grep -n's number,
        # stern's columns), else as written; by its own number (in a log export, other lines lie between).
        cur = self.cur
        parts = [str(part) for part in cur[4]] if cur is not None else []  # type: ignore[attr-defined]
        if (
            cur is not None
            and len(parts) > 1
            and int(cur[0]) + len(parts) == number  # type: ignore[call-overload]
            and all(relay.match(part) for part in parts)
        ):
            # Several lines the relay carried before the first that shows it (a library's warnings on the
            # server's stderr before its first log line): each is read again past the prefix.
            rest = [part[m.end() :] for part in parts if (m := relay.match(part)) is not None]
            yield from self._read_again_lines(int(cur[0]), rest)  # type: ignore[call-overload]
        elif cur is not None and (m := relay.match(str(cur[3])) or relay.match(before)) is not None:
            yield from self._read_again(int(cur[0]), m.string[m.end() :])  # type: ignore[call-overload]
        return line[end:]
