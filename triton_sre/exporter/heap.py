"""Keep the exporter's freed heap for the next poll instead of handing it back to the OS.

Every poll holds a few MB of short-lived buffers at once (the metrics and statistics bodies, their
decoded text). With glibc's defaults the memory freed at the end of a poll sits at the top of the
heap and is trimmed (`brk` down), so the next poll faults ~1,300 fresh pages back in (measured at
1,000 models × 2 versions: ~7 ms of system CPU per poll, bench/RESULTS.md). Raising the trim
threshold, with a fixed mmap threshold so the bodies stay on the heap, makes the steady state reuse
the same pages. Peak RSS is unchanged (the pages are the poll's peak anyway); only the drop back
between polls goes. A no-op where the C library is not glibc.
"""

from __future__ import annotations

import ctypes
import ctypes.util

# mallopt parameters of glibc's malloc.h
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
# Bodies up to this size come from the heap (glibc's largest allowed mmap threshold on 64-bit).
MMAP_THRESHOLD = 32 * 1024 * 1024
# Free memory at the top of the heap up to this size is kept.
TRIM_THRESHOLD = 128 * 1024 * 1024

_kept = False


def keep_heap() -> bool:
    """Set the thresholds once per process; True when the C library took them."""
    global _kept
    if _kept:
        return True
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to set
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    _kept = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    )
    return _kept
