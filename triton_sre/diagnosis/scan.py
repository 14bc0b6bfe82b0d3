"""Streaming: a binary log stream -> the numbered lines that can matter, in constant memory.

A verbose Triton log is mostly ``I`` lines; the evidence is in a few ``E``/``W``/``F`` lines, the
model status table, ``libprotobuf``/``error:`` lines, Python-stub ``I`` lines and the raw
lines that continue them (tracebacks). Looking at every line from Python is far too slow for a
multi-GB log, so each chunk is classified with numpy in one vectorised pass: find the line starts,
look at the level letter of each (glog column 0, or column 21 of Triton's ISO8601 format), and
keep only

- log lines whose level is not ``I``;
- any line holding one of a few literals (`NEEDLES`, found with ``bytes.find``);
- every raw line (not in Triton's line format: tracebacks, table rows, ``libprotobuf`` and
  ``error:`` lines, third-party output; rare in a big log) and the log line it continues.

Log collectors put a prefix in front of every line: ``docker logs -t`` and ``kubectl logs
--timestamps`` an RFC3339Nano timestamp and a space, ``kubectl logs --prefix``
``[pod/NAME/CONTAINER] ``, ``docker compose logs`` ``NAME  | `` (and both a name and a timestamp
with ``--timestamps``). Each line that is not a log line at column 0 is checked for them in the
same vectorised pass (`strip_prefixes`), so mixed sources and a prefix that stops midway work
line by line; the parser then sees Triton's own text under the original line number, exactly
as in the unprefixed log.

A chunk whose lines are still mostly not log lines (a pasted snippet, syslog, quoting) is passed
through whole: `logparse` handles every shape, only more slowly. Skipped lines never change a
diagnosis; they only leave gaps in the line numbers, which end an event.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import BinaryIO, Final

import numpy as np
import numpy.typing as npt

from triton_sre.diagnosis import holes
from triton_sre.diagnosis.lineshape import MAX_LINE_CHARS
from triton_sre.diagnosis.logparse import CLOSING_FAILURE, PROGRESS_MARKS
from triton_sre.diagnosis.pastes import LOOKALIKES

__all__ = ["CHUNK_BYTES", "NEEDLES", "LogInputError", "scan_lines", "strip_prefixes"]

CHUNK_BYTES = 4 * 1024 * 1024
NEEDLES: tuple[bytes, ...] = (
    b"Python stub",
    CLOSING_FAILURE.encode(),
    CLOSING_FAILURE.replace("'", "&").encode(),
    *(mark.encode() for mark in PROGRESS_MARKS),
)
"""Literals that make an ``I`` line worth parsing (the Python stub reports its failures at ``I``, and 2.51
core's closing ``failed to load '<model>'``, also with its quote as a web page's source holds it, ``&#39;``;
`PROGRESS_MARKS` show start-up went on past a warning the engine weighs)."""


def _by_lead_byte(chars: Iterable[str]) -> tuple[tuple[bytes, re.Pattern[bytes]], ...]:
    groups: dict[bytes, list[bytes]] = {}
    for ch in chars:
        encoded = ch.encode()
        groups.setdefault(encoded[:1], []).append(re.escape(encoded))
    return tuple((lead, re.compile(b"|".join(parts))) for lead, parts in sorted(groups.items()))


_LOOKALIKE_BYTES: Final = _by_lead_byte(LOOKALIKES)
"""The UTF-8 of `pastes.LOOKALIKES`, grouped by lead byte (C2, E2, EF): one ``find`` of each lead byte (C
speed), the group's pattern only from its first occurrence on."""


def _has_lookalikes(data: bytes | bytearray, end: int) -> bool:
    """Whether ``data[:end]`` holds a character `pastes` maps back to ASCII (a no-break space, a curled
    quote, a BOM): the needles are ASCII and would miss a line written with them."""
    for lead, pattern in _LOOKALIKE_BYTES:
        first = data.find(lead, 0, end)
        if first != -1 and pattern.search(data, first, end) is not None:
            return True
    return False


class LogInputError(Exception):
    """The input cannot be read as a text log (binary data, a corrupt archive)."""


Bytes = npt.NDArray[np.uint8]
Ints = npt.NDArray[np.int64]
Mask = npt.NDArray[np.bool_]

_LEVEL_BYTES = np.zeros(256, dtype=bool)
for _c in b"IWEF":
    _LEVEL_BYTES[_c] = True
_I = ord("I")
_DIGIT = np.zeros(256, dtype=bool)
_DIGIT[ord("0") : ord("9") + 1] = True
_ALNUM = _DIGIT.copy()
_ALNUM[ord("A") : ord("Z") + 1] = True
_ALNUM[ord("a") : ord("z") + 1] = True
_NAME = _ALNUM.copy()
for _c in b"_.-@":  # "@": `docker service logs` names a task with its node
    _NAME[_c] = True
_ZONE = _DIGIT.copy()
for _c in b".,Z+-:":
    _ZONE[_c] = True
_SPACE, _PIPE, _CLOSE = ord(" "), ord("|"), ord("]")
_POD_MARKS = tuple(enumerate(b"[pod/"))
_STAMP_DIGITS = (0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18)
_STAMP_MARKS = ((4, ord("-")), (7, ord("-")), (10, ord("T")), (13, ord(":")), (16, ord(":")))
POD_WINDOW = 160
POD_SHORT = 48
COMPOSE_WINDOW = 96
COMPOSE_SHORT = 24
DISTINCT_PREFIXES = 8
STAMP_WINDOW = 36


def _gather(a: Bytes, starts: Ints, k: int, last: int) -> Bytes:
    return a[np.minimum(starts + k, last)]


def _levels(a: Bytes, offs: Ints, last: int) -> Bytes:
    """The level letter of the log line at each offset (glog or ISO8601 format), 0 when not one."""
    b0 = a[np.minimum(offs, last)]
    b1 = _gather(a, offs, 1, last)
    level = np.where(_LEVEL_BYTES[b0] & _DIGIT[b1], b0, 0).astype(np.uint8)
    rows = np.flatnonzero(level == 0)
    if len(rows):
        o = offs[rows]
        iso_level = _gather(a, o, 21, last)
        iso = (
            (_gather(a, o, 4, last) == 45)
            & (_gather(a, o, 10, last) == 84)
            & (_gather(a, o, 19, last) == 90)
            & (_gather(a, o, 20, last) == 32)
            & (_gather(a, o, 22, last) == 32)
            & _LEVEL_BYTES[iso_level]
        )
        level[rows[iso]] = iso_level[iso]
    return level


def _windows(a: Bytes, offs: Ints, width: int) -> Bytes:
    """``a[o : o + width]`` for each offset, as rows (zero-padded past the end of ``a``)."""
    n = len(a)
    out = np.zeros((len(offs), width), dtype=np.uint8)
    safe = offs <= n - width
    if n >= width and bool(safe.any()):
        out[safe] = np.lib.stride_tricks.sliding_window_view(a, width)[offs[safe]]
    if not bool(safe.all()):
        base = max(0, n - width)
        tail = np.zeros(2 * width, dtype=np.uint8)
        tail[: n - base] = a[base:]
        out[~safe] = np.lib.stride_tricks.sliding_window_view(tail, width)[offs[~safe] - base]
    return out


def _first(mask: Mask) -> Ints:
    """Column of the first True in each row; the row's width when there is none."""
    width = mask.shape[1]
    return np.where(mask.any(axis=1), mask.argmax(axis=1), width).astype(np.int64)


def _after_space(win: Bytes, col: Ints) -> Ints:
    """``col`` moved past one space, when the byte there is a space."""
    rows = np.arange(len(col))
    inside = col < win.shape[1]
    space = np.zeros(len(col), dtype=bool)
    space[inside] = win[rows[inside], col[inside]] == _SPACE
    return col + space


def _matches(a: Bytes, offs: Ints, last: int, marks: tuple[tuple[int, int], ...]) -> Mask:
    ok = np.ones(len(offs), dtype=bool)
    for col, byte in marks:
        ok &= _gather(a, offs, col, last) == byte
    return ok


def _stamp_head(win: Bytes) -> Mask:
    """``YYYY-MM-DDTHH:MM:SS`` at the start of each window row."""
    ok = np.ones(len(win), dtype=bool)
    for col, byte in _STAMP_MARKS:
        ok &= win[:, col] == byte
    rows = np.flatnonzero(ok)
    if len(rows):
        ok[rows] = _DIGIT[win[rows][:, _STAMP_DIGITS]].all(axis=1)
    return ok


def _pod_in(win: Bytes) -> Ints:
    """Length of ``[pod/NAME/CONTAINER] `` in each row (rows that start with ``[pod/``), 0 if the
    ``]`` is not in the window."""
    close = _first(win == _CLOSE)
    return np.where(close < win.shape[1], _after_space(win, close + 1), 0)


def _pod_prefix(a: Bytes, offs: Ints, last: int) -> Ints:
    """``kubectl logs --prefix``: ``[pod/NAME/CONTAINER] `` -> its length, 0 when absent."""
    length = np.zeros(len(offs), dtype=np.int64)
    rows = np.flatnonzero(_matches(a, offs, last, _POD_MARKS))
    if len(rows):
        length[rows] = _repeated_prefixes(a, offs[rows], lambda o: _pod_lengths(a, o))
    return length


def _pod_lengths(a: Bytes, offs: Ints) -> Ints:
    """The pod prefix length at each offset (lines starting ``[pod/``), short window first."""
    length = _pod_in(_windows(a, offs, POD_SHORT))
    rows = np.flatnonzero(length == 0)
    if len(rows):
        length[rows] = _pod_in(_windows(a, offs[rows], POD_WINDOW))
    return length


def _repeated_prefixes(a: Bytes, offs: Ints, read: Callable[[Ints], Ints]) -> Ints:
    """``read(offs)`` (prefix lengths, 0 for none) for lines that mostly repeat a few prefixes.

    A container writes the same ``[pod/...] `` or ``NAME  | `` on every line, so the few distinct
    prefixes of a chunk are each read once and then found by comparing bytes; what is left is read
    as usual. Exact: a line that starts with the very bytes of a prefix, up to its closing space,
    reads the same.
    """
    length = np.zeros(len(offs), dtype=np.int64)
    pending = np.arange(len(offs))
    for _ in range(DISTINCT_PREFIXES):
        if not len(pending):
            return length
        ref = pending[:1]
        n = int(read(offs[ref])[0])
        if n == 0 or a[offs[ref[0]] + n - 1] != _SPACE:
            break
        literal = _windows(a, offs[ref], n)[0]
        same = (_windows(a, offs[pending], n) == literal).all(axis=1)
        length[pending[same]] = n
        pending = pending[~same]
    if len(pending):
        length[pending] = read(offs[pending])
    return length


def _compose_in(win: Bytes) -> tuple[Ints, Mask]:
    """``NAME  | `` at the start of each window row: its length (0 when absent), and which rows
    could still hold one longer than the window (only name characters and spaces so far)."""
    width = win.shape[1]
    name = _NAME[win]
    name_end = _first(~name)
    at = np.arange(len(win))
    inside = name_end < width
    ok = inside & _ALNUM[win[:, 0]]
    ok[inside] &= win[at[inside], name_end[inside]] == _SPACE
    cols = np.arange(width)
    blank = win == _SPACE
    pipe = _first((cols[None, :] >= name_end[:, None]) & ~blank)
    inside = pipe < width
    longer = ok & ~inside
    ok &= inside
    ok[inside] &= win[at[inside], pipe[inside]] == _PIPE
    longer |= _ALNUM[win[:, 0]] & ~inside & (name_end >= width)
    return np.where(ok, _after_space(win, pipe + 1), 0), longer


def _stamp_in(win: Bytes) -> Ints:
    """Length of the timestamp prefix of each row (rows that start with `_stamp_head`), 0 if none:
    seconds, an optional fraction and zone (``.123456789Z``, ``+02:00``), then one space."""
    tail = win[:, 19:]
    end = _first(~_ZONE[tail])  # the first byte that is not part of a fraction or zone
    inside = end < tail.shape[1]
    ok = np.zeros(len(tail), dtype=bool)
    ok[inside] = tail[np.flatnonzero(inside), end[inside]] == _SPACE
    return np.where(ok, end + 20, 0)


def _name_or_stamp(a: Bytes, offs: Ints, last: int) -> tuple[Ints, Mask]:
    """A compose ``NAME  | `` or a ``docker logs -t`` timestamp at each offset: its length (0 when
    neither), and which were a name. One window serves both: a timestamp is never a service name
    (its ``:`` is neither a name character nor a space)."""
    length = np.zeros(len(offs), dtype=np.int64)
    named = np.zeros(len(offs), dtype=bool)
    rows = np.flatnonzero(_ALNUM[a[np.minimum(offs, last)]])
    if not len(rows):
        return length, named
    win = _windows(a, offs[rows], STAMP_WINDOW)
    head = _stamp_head(win)
    stamped = np.flatnonzero(head)
    length[rows[stamped]] = _stamp_in(win[stamped])
    other = np.flatnonzero(~head)
    rows = rows[other]
    length[rows] = _repeated_prefixes(a, offs[rows], lambda o: _compose_lengths(a, o))
    named[rows] = length[rows] > 0
    return length, named


def _compose_lengths(a: Bytes, offs: Ints) -> Ints:
    """The compose ``NAME  | `` prefix length at each offset, 0 if none (short window first)."""
    length, longer = _compose_in(_windows(a, offs, COMPOSE_SHORT))
    rows = np.flatnonzero(longer)
    if len(rows):
        length[rows] = _compose_in(_windows(a, offs[rows], COMPOSE_WINDOW))[0]
    return length


def _stamp_prefix(a: Bytes, offs: Ints, last: int) -> Ints:
    """``docker logs -t`` / ``kubectl logs --timestamps``: an RFC3339 timestamp and a space."""
    win = _windows(a, offs, STAMP_WINDOW)
    head = np.flatnonzero(_stamp_head(win))
    length = np.zeros(len(offs), dtype=np.int64)
    length[head] = _stamp_in(win[head])
    return length


def strip_prefixes(a: Bytes, starts: Ints, ends: Ints, level: Bytes) -> Ints | None:
    """Where Triton's own text starts on each line that is not a log line at its start, once the
    prefixes log collectors add are removed; updates ``level`` in place. None when no line has one.

    Outermost first, each at most once per line: ``[pod/...] `` (kubectl), then a compose
    ``NAME  | ``, then a timestamp (``kubectl --prefix --timestamps`` and ``compose logs -t`` put
    the container's name before the timestamp). A line that is already a log line is never
    touched (an ISO8601 line starts with a timestamp of its own), and a prefix ends inside its line.
    """
    rows = np.flatnonzero(level == 0)
    if not len(rows):
        return None
    offs = starts.copy()
    last = len(a) - 1
    moved_any = False

    def advance(rows: Ints, length: Ints) -> Ints:
        """Move the rows past their prefixes; the rows that moved and are still not log lines."""
        nonlocal moved_any
        moved = (length > 0) & (offs[rows] + length <= ends[rows])
        hit = rows[moved]
        if len(hit):
            moved_any = True
            offs[hit] += length[moved]
            level[hit] = _levels(a, offs[hit], last)
        return hit[level[hit] == 0]

    advance(rows, _pod_prefix(a, offs[rows], last))
    rows = rows[level[rows] == 0]
    length, named = _name_or_stamp(a, offs[rows], last)
    named_rows = rows[named]
    rows = advance(rows, length)
    rows = rows[np.isin(rows, named_rows)]
    if len(rows):
        advance(rows, _stamp_prefix(a, offs[rows], last))
    return offs if moved_any else None


class _Scanner:
    def __init__(self) -> None:
        self.base_line = 0
        self.tail_owner: tuple[int, str] | None = None  # the chunk's last line, if a log line not kept

    def lines_of(self, data: bytes | bytearray, end: int) -> Iterator[tuple[int, str]]:
        """Candidate lines of ``data[:end]`` (which ends with a newline)."""
        a = np.frombuffer(data, dtype=np.uint8, count=end)
        nl = np.flatnonzero(a == 10)
        n = len(nl)
        if n == 0:
            return
        starts = np.empty(n, dtype=np.int64)
        starts[0] = 0
        starts[1:] = nl[:-1] + 1
        last = end - 1
        level = _levels(a, starts, last)
        stripped = strip_prefixes(a, starts, nl, level)
        offs = starts if stripped is None else stripped
        is_log = level != 0
        base = self.base_line
        self.base_line += n
        if int(np.count_nonzero(is_log)) * 2 < n or (int(a.max()) >= 0x80 and _has_lookalikes(data, end)):
            # Not Triton's own line format, or text a web page or an editor re-typed (the needles below
            # are ASCII): let the parser see everything, after the previous chunk's last log line when
            # this chunk starts by continuing it.
            if not is_log[0] and self.tail_owner is not None:
                yield self.tail_owner
            self.tail_owner = None
            # Whole lines, prefixes kept: the parser peels them as it peels a pasted log's, and a line a
            # terminal cut at its width keeps the width that shows it was cut.
            for i, raw in enumerate(data[:end].split(b"\n")[:-1]):
                yield base + i + 1, raw[:MAX_LINE_CHARS].decode("utf-8", "replace")
            return
        interesting = is_log & (level != _I)
        hits: list[int] = []
        for needle in NEEDLES:
            pos = data.find(needle, 0, end)
            while pos != -1:
                hits.append(pos)
                pos = data.find(needle, pos + 1, end)
        if hits:
            interesting[np.searchsorted(starts, np.asarray(hits, dtype=np.int64), side="right") - 1] = True
        # Raw lines (tracebacks, bash errors, third-party output) are rare in Triton's own format and
        # are where the surprises are: keep them all, with the log line they continue, so the parser
        # sees exactly what it would see line by line.
        raw = ~is_log
        raw_rows = np.flatnonzero(raw)
        if len(raw_rows):
            # The log line each raw line continues: the last log line before it.
            log_rows_all = np.flatnonzero(is_log)
            owners = np.searchsorted(log_rows_all, raw_rows) - 1
            owners = owners[owners >= 0]
            interesting[log_rows_all[owners]] = True
        keep = interesting | raw
        if raw[0] and self.tail_owner is not None:
            yield self.tail_owner
        self.tail_owner = None
        log_rows = np.flatnonzero(is_log)
        if len(log_rows) and not keep[log_rows[-1]] and bool(np.all(is_log[log_rows[-1] :])):
            i = int(log_rows[-1])
            s = int(offs[i])
            self.tail_owner = (
                base + i + 1,
                data[s : min(int(nl[i]), s + MAX_LINE_CHARS)].decode("utf-8", "replace"),
            )
        rows = np.flatnonzero(keep)
        kept_starts = offs[rows]
        kept_ends = np.minimum(nl[rows], kept_starts + MAX_LINE_CHARS)
        numbers = (rows + (base + 1)).tolist()
        for i, s, e in zip(numbers, kept_starts.tolist(), kept_ends.tolist(), strict=True):
            yield i, data[s:e].decode("utf-8", "replace")


def scan_lines(
    stream: BinaryIO,
    *,
    chunk_bytes: int = CHUNK_BYTES,
    progress: Callable[[int], None] | None = None,
) -> Iterator[tuple[int, str]]:
    """Numbered candidate lines of a binary stream (see the module docstring), NUL bytes dropped (`holes`).

    Raises `LogInputError` when its first text is binary or it holds NULs only. ``progress`` gets the number
    of bytes read so far after each chunk."""
    scanner = _Scanner()
    buf = bytearray(chunk_bytes * 2)
    view = memoryview(buf)
    filled = 0  # bytes of buf holding the unfinished last line of the previous chunk
    consumed = 0
    hole = 0  # NUL bytes read before the first text; -1 once text was read
    skipping = False  # inside a line longer than any chunk: drop bytes until its newline
    readinto = getattr(stream, "readinto", None)
    while True:
        if len(buf) - filled < chunk_bytes:
            view.release()
            buf.extend(bytes(chunk_bytes))
            view = memoryview(buf)
        if readinto is not None:
            got = readinto(view[filled : filled + chunk_bytes])
        else:
            block = stream.read(chunk_bytes)
            got = len(block)
            buf[filled : filled + got] = block
        if not got:
            if hole > 0:
                raise LogInputError(holes.only_nuls_message(hole, ended=True))
            break
        consumed += got
        total = filled + got
        if buf.find(0, filled, total) != -1:
            total = holes.drop_nuls(buf, filled, total)
        if hole >= 0:
            hole += got - (total - filled)
            if total == filled:  # still in a leading hole
                if hole >= holes.MAX_LEADING_HOLE:
                    raise LogInputError(holes.only_nuls_message(hole, ended=False))
                if progress is not None:
                    progress(consumed)
                continue
            # (judged only where NULs came with it: a NUL-free GBK or Shift-JIS log is no less a log)
            if hole > 0 and holes.looks_binary(buf[: min(total, holes.SNIFF_BYTES)]):
                raise LogInputError(holes.BINARY)
            hole = -1
        if skipping:
            cut = buf.find(b"\n", filled, total)
            if cut == -1:
                continue
            view.release()
            del buf[filled : cut + 1]
            buf.extend(bytes(cut + 1 - filled))
            view = memoryview(buf)
            total -= cut + 1 - filled
            skipping = False
        end = buf.rfind(b"\n", 0, total) + 1
        if end == 0:
            if total > max(4 * chunk_bytes, MAX_LINE_CHARS):
                # One enormous line: keep its head as a line of its own and skip the rest of it.
                head = bytes(buf[:MAX_LINE_CHARS]) + b"\n"
                yield from scanner.lines_of(head, len(head))
                filled = 0
                skipping = True
            else:
                filled = total
            continue
        yield from scanner.lines_of(buf, end)
        rest = total - end
        if rest:
            buf[:rest] = buf[end:total]
        filled = rest
        if progress is not None:
            progress(consumed)
    if filled:
        data = bytes(buf[:filled]) + b"\n"
        yield from scanner.lines_of(data, len(data))
    if progress is not None:
        progress(consumed)
