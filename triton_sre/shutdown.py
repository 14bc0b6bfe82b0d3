"""How a long-running command (export, bot, demo, the stack's Triton) waits for SIGINT or SIGTERM.

CPython runs a Python signal handler on the main thread only, between bytecodes; the kernel delivers a
process-directed signal to any thread that does not block it. When it picks a worker thread, a main thread
parked in an untimed ``Event.wait()`` is never woken to run the handler, and the command ignores the
signal: measured with `triton-sre export` on a loaded two-core host, 2 of 24 SIGTERMs left it running
until killed. The main thread therefore waits in short ticks, so a pending handler runs within one tick.
"""

from __future__ import annotations

import signal
import threading

__all__ = ["TICK_SECONDS", "stop_on_signals", "wait_until_set"]

TICK_SECONDS = 0.25


def stop_on_signals() -> threading.Event:
    """An event set by SIGINT or SIGTERM (installs the handlers: call it on the main thread)."""
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    return stop


def wait_until_set(stop: threading.Event) -> None:
    """Block the main thread until `stop` is set, waking every tick so signal handlers can run."""
    while not stop.wait(TICK_SECONDS):
        pass
