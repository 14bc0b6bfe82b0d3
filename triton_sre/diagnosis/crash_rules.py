"""Pure data: the server process, or a backend inside it, died on a fatal signal (server-crashed).

A crash is rarely the root cause a reader wants first: a CUDA error, an out-of-memory or a model's own
exception printed before it says why, and their pages rank first (`rules.PRIORITY`). When nothing
else in the text explains it, the crash itself is the finding, in the words `signals.CRASH_WORDING`
lists, with the C++ runtime's verdict on an exception nobody caught (libstdc++'s verbose terminate
handler, ``__gnu_cxx::__verbose_terminate_handler``: ``terminate called after throwing an instance of
'std::runtime_error'`` then ``  what():  <message>``), which ends in SIGABRT. The ``what()`` line is not
claimed here: the message it quotes is read by the cause rules and classes like any other reason.
"""

from __future__ import annotations

from typing import Final

from triton_sre import conventions as c
from triton_sre.diagnosis.signals import (
    CRASH_WORDING,
    HEAP_CHECK_ABORT,
    HEAP_CORRUPTION_ABORT,
    PYTHON_FATAL,
    STACK_CHECK_ABORT,
    UNCAUGHT_EXCEPTION,
)
from triton_sre.diagnosis.stack_rules import CauseRule, rx

__all__ = ["CRASH_RULES"]

CRASH_RULES: Final[tuple[CauseRule, ...]] = (
    CauseRule(
        c.RUNBOOK_SERVER_CRASHED,
        rx(
            *CRASH_WORDING,
            rf"\b{UNCAUGHT_EXCEPTION}",
            # the process aborts right after: glibc's heap and stack checks, CPython's fatal error
            HEAP_CHECK_ABORT,
            HEAP_CORRUPTION_ABORT,
            STACK_CHECK_ABORT,
            PYTHON_FATAL,
        ),
        "server src/triton_signal.cc; bash jobs.c; Open MPI opal/util/stacktrace.c; UCX ucs/debug/debug.c; "
        "abseil failure_signal_handler.cc; glog signalhandler.cc; CPython faulthandler, pylifecycle.c; "
        "libstdc++ vterminate.cc; glibc malloc/malloc.c, debug/fortify_fail.c; Linux arch/x86/mm/fault.c",
    ),
)
