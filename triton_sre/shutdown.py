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

The CLI installs the handlers before it builds its parser when the command is a service
(`stopping_early`): building the parser imports every command, over a second on a loaded host, and a
signal in that time took the default action (exit 129 for SIGHUP, 143 for SIGTERM). The service's
own `stop_on_signals` then takes over that event, with any signal it already recorded.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator, Sequence

from triton_sre import conventions as c

__all__ = [
    "STOP_SIGNALS",
    "TICK_SECONDS",
    "StopEvent",
    "service_command",
    "stop_on_signals",
    "stopping_early",
    "stops_held",
    "unwinding_on_stop",
    "wait_until_set",
]

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


_early: StopEvent | None = None  # installed by `stopping_early`, taken by the next `stop_on_signals`


def stop_on_signals() -> StopEvent:
    """An event set by SIGINT, SIGTERM or SIGHUP (installs the handlers: call it on the main thread).

    Inside `stopping_early`, the event it installed (and any signal already recorded in it)."""
    global _early
    if _early is not None:
        stop, _early = _early, None
        return stop
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


def service_command(argv: Sequence[str]) -> bool:
    """Whether the CLI arguments run a service (`c.SERVICE_COMMANDS`), read before argparse: the first
    word that is neither an option nor the value of the global `--log-level`."""
    args = list(argv)
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--log-level":
            i += 2
            continue
        if arg.startswith("-"):
            i += 1
            continue
        return arg in c.SERVICE_COMMANDS
    return False


@contextlib.contextmanager
def stopping_early(argv: Sequence[str]) -> Iterator[None]:
    """For a service command, the stop signals' handlers from now on (see the module's note). A
    service that took them (`stop_on_signals`) keeps them until the process ends, as its own always
    were (a repeated SIGTERM while it exits is no default action); else the previous ones are back."""
    global _early
    if not service_command(argv) or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    _early = None
    _early = stop_on_signals()
    try:
        yield
    finally:
        taken, _early = _early is None, None
        if not taken:  # the command ended before its service began (a usage error, a bad config)
            for sig, handler in previous.items():
                signal.signal(sig, handler)


class _Stopped(BaseException):
    """Raised in the main thread by a SIGTERM or SIGHUP under `unwinding_on_stop`."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextlib.contextmanager
def unwinding_on_stop() -> Iterator[None]:
    """SIGTERM and SIGHUP unwind the block (its `with` and `finally` clauses run: `generate` removes
    its temp files), then end the process by the same signal, as their default action would have
    (exit 143 / 129 to a shell). Without this, `timeout` or a cancelled CI job killing `generate`
    mid-render left every file staged so far in --out (a 1,500-SLO spec: 13 hidden temp files,
    260 MB). A signal that was ignored (`nohup`) or handled stays so; Ctrl-C is KeyboardInterrupt
    already."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_signal(signum: int, _frame: object) -> None:
        raise _Stopped(signum)

    taken = [s for s in STOP_SIGNALS if s != signal.SIGINT and signal.getsignal(s) is signal.SIG_DFL]
    for sig in taken:
        signal.signal(sig, on_signal)
    try:
        yield
    except _Stopped as stop:
        for sig in taken:
            signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), stop.signum)
        raise  # not reached: the default action ends the process
    finally:
        for sig in taken:
            signal.signal(sig, signal.SIG_DFL)


@contextlib.contextmanager
def stops_held() -> Iterator[None]:
    """Run a cleanup to its end: SIGINT, SIGTERM and SIGHUP are ignored during the block (main thread
    only), then their handlers are back. A second Ctrl-C while `stack up` stopped what it had started
    (the first Ctrl-C's cleanup) interrupted that cleanup: the exporter it said it was stopping ran on.
    The command is stopping already: a signal in that time has nothing more to ask."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    for sig in before:
        signal.signal(sig, signal.SIG_IGN)
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
