"""How a long-running command (export, bot, demo, the stack's Triton) waits for SIGINT, SIGTERM or SIGHUP.

All three stop it the same way (the exporter's server closed, the bot's outbox kept): these commands
have no configuration worth reloading, and SIGHUP's default action ended them at once with exit 129
and no word of why (the terminal or the session that started them went away, or an operator's
`kill -HUP` meaning "reload"). The event names the signal, for the one line the command logs.

CPython runs a Python signal handler on the main thread only, between bytecodes; the kernel delivers a
process-directed signal to any thread that does not block it. When it picks a worker thread, a main thread
parked in an untimed ``Event.wait()`` is never woken to run the handler, and the command ignores the
signal: measured with `triton-sre export` on a loaded two-core host, 2 of 24 SIGTERMs left it running
until killed. The main thread therefore waits in short ticks, so a pending handler runs within one tick.
"""

from __future__ import annotations

import signal
import threading

__all__ = ["STOP_SIGNALS", "TICK_SECONDS", "StopEvent", "stop_on_signals", "wait_until_set"]

TICK_SECONDS = 0.25
# SIGHUP does not exist on Windows
STOP_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)


class StopEvent(threading.Event):
    """Set by the first stop signal; `by` is its name (SIGTERM...), None when set otherwise."""

    def __init__(self) -> None:
        super().__init__()
        self.by: str | None = None


def stop_on_signals() -> StopEvent:
    """An event set by SIGINT, SIGTERM or SIGHUP (installs the handlers: call it on the main thread)."""
    stop = StopEvent()

    def on_signal(signum: int, _frame: object) -> None:
        if stop.by is None:
            stop.by = signal.Signals(signum).name
        stop.set()

    for sig in STOP_SIGNALS:
        signal.signal(sig, on_signal)
    return stop


def wait_until_set(stop: threading.Event) -> None:
    """Block the main thread until `stop` is set, waking every tick so signal handlers can run."""
    while not stop.wait(TICK_SECONDS):
        pass
