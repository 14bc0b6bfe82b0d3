"""NUL bytes in a text log: holes left by log rotation or a crash, told apart from binary data.

A text log often holds runs of NUL bytes:

- logrotate's ``copytruncate`` "truncate[s] the original log file to zero size in place after creating a
  copy" for "some program [that] cannot be told to close its logfile" (logrotate(8), e.g.
  https://gist.github.com/rnewson/4215207). A writer that opened the file without ``O_APPEND`` (a shell's
  ``tritonserver > triton.log``, a ``tee``, a container runtime's log file) keeps writing at its old offset,
  so the file starts with a hole as long as the log was before the rotation, read back as NUL bytes, then
  text (https://kazu.tv/blog/2014/01/16/logrotate-copytruncate-file-size/: ``command > a.log`` leaves the
  first 100 KB NUL, ``command >> a.log`` does not). On a file system with sparse files the hole takes no
  space; on others it is written as NULs (https://sobrelinux.info/questions/638831/, a translation of
  Server Fault's "Why do JBoss and logrotate create log files full of NUL characters").
- A crash while writing can leave a block of NULs in the middle (a file's size was committed before its
  data, as with ext4's and XFS's delayed allocation).

Such a log is read as the text around its holes: every NUL byte is dropped before lines are cut. A hole holds
no newline, so line numbers stay the file's own (what ``grep -an`` or an editor shows); text written on the
line a hole interrupts is joined to it. What is refused: a stream that holds NULs before or in its first
text and whose first text (its sniff window, NULs aside) is not text (random bytes, an executable, compressed
or image data; a log without NULs is read in whatever encoding, as before), and a stream that is NULs only
(``/dev/zero``), after at most `MAX_LEADING_HOLE` bytes of them.
"""

from __future__ import annotations

import errno
import os
from typing import Final

__all__ = [
    "BINARY",
    "MAX_LEADING_HOLE",
    "SNIFF_BYTES",
    "drop_nuls",
    "looks_binary",
    "only_nuls_message",
    "sparse_data_start",
]

MAX_LEADING_HOLE: Final = 1 << 30
"""NUL bytes read before the first text at most (1 GiB, read in about a second): a longer leading hole is
refused (a stream of NULs only would never end). A hole a file system keeps sparse is skipped without reading
it (`sparse_data_start`), whatever its length."""
SNIFF_BYTES: Final = 64 * 1024
"""The first text of a stream that `looks_binary` judges (NULs dropped)."""
BINARY: Final = (
    "the input is not text: it looks binary (an executable, compressed or random data), not a text log"
)
BINARY_SHARE: Final = 10
"""A sniff window is binary when more than 1 byte in `BINARY_SHARE` (NULs aside) is a control character that
text does not use or is not UTF-8: random, compressed and PNG data score 45–51 %, executables 33–60 %, every
text file in tests/data 0 %."""
_CONTROLS: Final = bytes(b for b in range(32) if b not in b"\x00\a\b\t\n\v\f\r\x1b") + b"\x7f"
"""C0 controls and DEL that text never holds (BEL, backspace and ESC stay: terminal colours and titles)."""


def drop_nuls(buf: bytearray, start: int, end: int) -> int:
    """Remove every NUL byte of ``buf[start:end]`` in place (``buf`` keeps its size); the new end.
    (A block of NULs only is told in 0.1 ms per 4 MB, ``translate`` drops them from text in 2 ms, ``replace``
    took 40 ms.) numpy is imported here, at the first NUL: a log without one never needs it (60 ms of a
    pasted line's start-up)."""
    import numpy as np

    if not np.frombuffer(buf, dtype=np.uint8, count=end)[start:].any():
        return start
    kept = buf[start:end].translate(None, b"\x00")
    buf[start : start + len(kept)] = kept
    return start + len(kept)


def looks_binary(window: bytes | bytearray) -> bool:
    """Whether the first text of a stream (NULs already dropped) is not text (see `BINARY_SHARE`)."""
    if not window:
        return False
    odd = len(window) - len(window.translate(None, _CONTROLS))
    odd += bytes(window).decode("utf-8", "replace").count("\ufffd")
    return odd * BINARY_SHARE > len(window)


def only_nuls_message(count: int, ended: bool) -> str:
    """Why a stream of NULs only is refused (``ended``: the stream ended, else the bound was reached)."""
    if ended:
        return f"the input holds only NUL bytes ({count:,} of them): no text to read"
    return (
        f"the first {count:,} bytes of the input are all NUL bytes: not a text log (a log with a longer "
        "hole, as copytruncate log rotation leaves, reads with: tr -d '\\000' < LOG | triton-sre triage -)"
    )


def sparse_data_start(fd: int, size: int) -> int | None:
    """Where a regular file's data starts past a leading sparse hole (``lseek`` ``SEEK_DATA``): 0 when it
    starts with data or the file system cannot tell; None when the whole file is a hole."""
    seek_data = getattr(os, "SEEK_DATA", None)
    if seek_data is None or size == 0:
        return 0
    try:
        return os.lseek(fd, 0, seek_data)
    except OSError as exc:
        return None if exc.errno == errno.ENXIO else 0  # ENXIO: no data at or past the offset
