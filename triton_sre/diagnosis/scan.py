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

A chunk whose lines are mostly not at column 0 (docker/kubectl prefixes, a pasted snippet) is
passed through whole: `logparse` handles every shape, only more slowly. Skipped lines never
change a diagnosis; they only leave gaps in the line numbers, which end an event.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import BinaryIO

import numpy as np
import numpy.typing as npt

from triton_sre.diagnosis.logparse import MAX_LINE_CHARS

__all__ = ["CHUNK_BYTES", "NEEDLES", "LogInputError", "scan_lines"]

CHUNK_BYTES = 4 * 1024 * 1024
NEEDLES: tuple[bytes, ...] = (b"Python stub",)
"""Literals that make an ``I`` line worth parsing (the Python stub reports its failures at ``I``)."""
BINARY_SNIFF_BYTES = 64 * 1024


class LogInputError(Exception):
    """The input cannot be read as a text log (binary data, a corrupt archive)."""


_LEVEL_BYTES = np.zeros(256, dtype=bool)
for _c in b"IWEF":
    _LEVEL_BYTES[_c] = True
_I = ord("I")


def _gather(
    a: npt.NDArray[np.uint8], starts: npt.NDArray[np.int64], k: int, last: int
) -> npt.NDArray[np.uint8]:
    return a[np.minimum(starts + k, last)]


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
        b0 = a[starts]
        b1 = _gather(a, starts, 1, last)
        level = np.where(_LEVEL_BYTES[b0] & (b1 >= 48) & (b1 <= 57), b0, 0)
        if int(np.count_nonzero(level)) * 2 < n:
            iso = (
                (_gather(a, starts, 4, last) == 45)
                & (_gather(a, starts, 10, last) == 84)
                & (_gather(a, starts, 19, last) == 90)
                & (_gather(a, starts, 20, last) == 32)
                & (_gather(a, starts, 22, last) == 32)
            )
            iso_level = _gather(a, starts, 21, last)
            iso &= _LEVEL_BYTES[iso_level]
            level = np.where(iso, iso_level, level)
        is_log = level != 0
        base = self.base_line
        self.base_line += n
        if int(np.count_nonzero(is_log)) * 2 < n:
            # Not Triton's own line format at column 0: let the parser see everything.
            self.tail_owner = None
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
            s = int(starts[i])
            self.tail_owner = (
                base + i + 1,
                data[s : min(int(nl[i]), s + MAX_LINE_CHARS)].decode("utf-8", "replace"),
            )
        for i in np.flatnonzero(keep).tolist():
            s = int(starts[i])
            e = min(int(nl[i]), s + MAX_LINE_CHARS)
            yield base + i + 1, data[s:e].decode("utf-8", "replace")


def scan_lines(
    stream: BinaryIO,
    *,
    chunk_bytes: int = CHUNK_BYTES,
    progress: Callable[[int], None] | None = None,
) -> Iterator[tuple[int, str]]:
    """Numbered candidate lines of a binary stream (see the module docstring).

    Raises `LogInputError` when the start of the stream holds NUL bytes (not a text log).
    ``progress`` gets the number of bytes read so far after each chunk.
    """
    scanner = _Scanner()
    buf = bytearray(chunk_bytes * 2)
    view = memoryview(buf)
    filled = 0  # bytes of buf holding the unfinished last line of the previous chunk
    consumed = 0
    first = True
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
        if first:
            first = False
            if b"\x00" in buf[: min(got, BINARY_SNIFF_BYTES)]:
                raise LogInputError("the input holds NUL bytes: it looks binary, not a text log")
        if not got:
            break
        consumed += got
        total = filled + got
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
