"""Pure (numpy): the vectorised half of the scan, over one chunk's line starts at once: the level letter
of each line (`levels`: glog column 0, or column 21 of Triton's ISO8601 format) and where Triton's own text
starts once the prefixes log collectors add are peeled (`strip_prefixes`: ``[pod/NAME/CONTAINER] ``,
compose's ``NAME  | ``, an RFC3339 timestamp). `scan.py` decides from them which lines to keep.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

Bytes = npt.NDArray[np.uint8]
Ints = npt.NDArray[np.int64]
Mask = npt.NDArray[np.bool_]

_LEVEL_BYTES = np.zeros(256, dtype=bool)
for _c in b"IWEF":
    _LEVEL_BYTES[_c] = True
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


def levels(a: Bytes, offs: Ints, last: int) -> Bytes:
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
            level[hit] = levels(a, offs[hit], last)
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
