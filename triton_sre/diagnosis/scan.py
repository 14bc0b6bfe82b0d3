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
same vectorised pass (`scan_prefixes.strip_prefixes`), so mixed sources and a prefix that stops midway work
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

from triton_sre.diagnosis import holes
from triton_sre.diagnosis.events import CLOSING_FAILURE, GPU_SEEN_MARKS, PROGRESS_MARKS
from triton_sre.diagnosis.lineshape import MAX_LINE_CHARS
from triton_sre.diagnosis.pastes import LOOKALIKES
from triton_sre.diagnosis.progress import STOP_MARK

__all__ = ["CHUNK_BYTES", "NEEDLES", "LogInputError", "scan_lines"]

CHUNK_BYTES = 4 * 1024 * 1024
NEEDLES: tuple[bytes, ...] = (
    b"Python stub",
    # The stub's own I lines: finalize()'s exception is logged at INFO (pb_stub.cc Stub::Finalize), in one
    # line when the message is escaped (24.06 on), with no raw traceback lines after it to keep it.
    b"pb_stub.cc",
    CLOSING_FAILURE.encode(),
    CLOSING_FAILURE.replace("'", "&").encode(),
    *(mark.encode() for mark in PROGRESS_MARKS),
    *(mark.encode() for mark in GPU_SEEN_MARKS),
    STOP_MARK.encode(),
    # kube-scheduler's klog I line for a pod no node fits (severity.SCHEDULER_NO_FIT): a failure at I.
    b"Unable to schedule",
    # An OS error a wrapper relays at I (absl's run_docker.py printing its container's stderr: "python: can't
    # open file ...: [Errno 13] Permission denied"): kept, so a log whose other lines are comments is read
    # as the line-by-line reader reads it (a log line, not a paste of comments, quoted.py).
    b"[Errno ",
)
"""Literals that make an ``I`` line worth parsing (the Python stub reports its failures at ``I``, and 2.51
core's closing ``failed to load '<model>'``, also with its quote as a web page's source holds it, ``&#39;``;
`PROGRESS_MARKS` show start-up went on past a warning the engine weighs, `GPU_SEEN_MARKS` that NVML
found a GPU; `progress.STOP_MARK` is where
the server began to stop, which makes a later crash a warning)."""


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


_I = ord("I")
SMALL_BYTES: Final = 64 * 1024
"""A chunk at most this long whose every line is a glog line at column 0 (a pasted line or a few) is
classified line by line in Python (`_Scanner.glog_lines_of`), with the same result as the vectorised pass:
importing numpy (and `scan_prefixes`) was 60 ms of a pasted line's 0.3 s start-up. Any other chunk is
numpy's."""
_GLOG_LEVELS: Final = frozenset(b"IWEF")
_DIGITS: Final = frozenset(b"0123456789")


class _Scanner:
    def __init__(self) -> None:
        self.base_line = 0
        self.tail_owner: tuple[int, str] | None = None  # the chunk's last line, if a log line not kept

    def lines_of(self, data: bytes | bytearray, end: int) -> Iterator[tuple[int, str]]:
        """Candidate lines of ``data[:end]`` (which ends with a newline)."""
        glog = self.glog_lines_of(data, end) if end <= SMALL_BYTES else None
        return self.vectorised_lines_of(data, end) if glog is None else iter(glog)

    def glog_lines_of(self, data: bytes | bytearray, end: int) -> list[tuple[int, str]] | None:
        """`lines_of` of a chunk whose every line is a glog line at column 0 (a level letter, then a digit),
        in Python; None for any other chunk. Such a chunk is all log lines and has no collector prefix to peel
        (`scan_prefixes.strip_prefixes` leaves a log line alone), so what the vectorised pass keeps is every
        non-``I`` line and every line holding a needle; or every line, from a web page or an editor."""
        lines = bytes(data[:end]).split(b"\n")[:-1]
        if not all(len(line) > 1 and line[0] in _GLOG_LEVELS and line[1] in _DIGITS for line in lines):
            return None
        base = self.base_line
        self.base_line += len(lines)
        self.tail_owner = None
        if _has_lookalikes(data, end):
            keep = [True] * len(lines)
        else:
            keep = [line[0] != _I or any(needle in line for needle in NEEDLES) for line in lines]
            if not keep[-1]:
                self.tail_owner = (base + len(lines), lines[-1][:MAX_LINE_CHARS].decode("utf-8", "replace"))
        return [
            (base + i + 1, line[:MAX_LINE_CHARS].decode("utf-8", "replace"))
            for i, (line, kept) in enumerate(zip(lines, keep, strict=True))
            if kept
        ]

    def vectorised_lines_of(self, data: bytes | bytearray, end: int) -> Iterator[tuple[int, str]]:
        """`lines_of` of any chunk, in one numpy pass."""
        import numpy as np  # (here: `glog_lines_of` spares a pasted line its import)

        from triton_sre.diagnosis.scan_prefixes import levels, strip_prefixes

        a = np.frombuffer(data, dtype=np.uint8, count=end)
        nl = np.flatnonzero(a == 10)
        n = len(nl)
        if n == 0:
            return
        starts = np.empty(n, dtype=np.int64)
        starts[0] = 0
        starts[1:] = nl[:-1] + 1
        last = end - 1
        level = levels(a, starts, last)
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
    refuse_blank: bool = False,
) -> Iterator[tuple[int, str]]:
    """Numbered candidate lines of a binary stream (see the module docstring), NUL bytes dropped (`holes`).

    Raises `LogInputError` when its first text is binary or it holds NULs only, and with ``refuse_blank``
    when it holds bytes but no text (blank lines, spaces). ``progress`` gets the number of bytes read so far
    after each chunk."""
    scanner = _Scanner()
    buf = bytearray(chunk_bytes * 2)
    view = memoryview(buf)
    filled = 0  # bytes of buf holding the unfinished last line of the previous chunk
    consumed = 0
    hole = 0  # NUL bytes read before the first text; -1 once text was read
    blank = refuse_blank  # True while nothing but whitespace (and NULs) was read, if that is refused
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
            if blank and consumed:  # "no failure found" would read as a healthy server, as for 0 bytes
                raise LogInputError("the log holds no text (blank lines, spaces or NUL bytes only)")
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
        if blank:  # checked only until the first text
            blank = not bytes(buf[filled:total]).strip()
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
