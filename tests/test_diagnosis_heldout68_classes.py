"""heldout68's two empty answers, fixed by class from the emitting sources.

- TensorFlow's fatal CPU-feature check at import (tensorflow/core/platform/cpu_feature_guard.cc): ``The
  TensorFlow library was compiled to use <set> instructions, but these aren't available on your machine.``,
  in any layout (TensorFlow's dated one, glog's, or its F column alone): the host CPU lacks an instruction
  set (platform-unsupported). Its INFO notice of the sets it *does* use is no finding.
- Triton's ErrorSignalHandler (server src/triton_signal.cc) writes ``Signal (N) received.`` and then
  ``boost::stacktrace::stacktrace()``: frame 0 is the handler in the server binary, frame 1 the kernel's
  signal return in libc. A paste that lost the signal line still shows a crash (server-crashed); a stack
  of other frames is not read as one.
"""

from __future__ import annotations

import pytest

from triton_sre.conventions import RUNBOOK_PLATFORM_UNSUPPORTED, RUNBOOK_SERVER_CRASHED
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text

_GUARD = (
    "The TensorFlow library was compiled to use {} instructions, but these aren't available on your machine."
)


def _runbooks(text: str) -> list[str]:
    return [f.runbook for f in diagnose_events(parse_text(text)).findings]


@pytest.mark.parametrize(
    "line",
    [
        "F tensorflow/core/platform/cpu_feature_guard.cc:38] " + _GUARD.format("AVX2"),
        "2022-11-24 10:00:00.000000: F tensorflow/core/platform/cpu_feature_guard.cc:37] "
        + _GUARD.format("AVX"),
        "F1124 10:00:00.000000 1 cpu_feature_guard.cc:38] " + _GUARD.format("FMA"),
    ],
)
def test_tensorflows_cpu_guard_is_the_platform(line: str) -> None:
    assert _runbooks(line + "\n") == [RUNBOOK_PLATFORM_UNSUPPORTED]


def test_tensorflows_notice_of_the_sets_it_uses_is_no_finding() -> None:
    line = (
        "2022-11-24 10:00:00.000000: I tensorflow/core/platform/cpu_feature_guard.cc:193] This TensorFlow"
        " binary is optimized with oneAPI Deep Neural Network Library (oneDNN) to use the following CPU"
        " instructions in performance-critical operations:  AVX2 FMA"
    )
    assert _runbooks(line + "\n") == []


_SERVING = (
    "I1205 10:47:59.401418 1 grpc_server.cc:225] Ready for RPC 'ServerLive', 1\n"
    "I1205 10:47:59.401449 1 grpc_server.cc:408] Done for ServerLive, 0\n"
)
_HANDLER_STACK = (
    " 0# 0x0000559CB99E68A9 in tritonserver\n"
    " 1# 0x00007F6596CA3210 in /usr/lib/x86_64-linux-gnu/libc.so.6\n"
    " 2# 0x0000559CB99EB196 in tritonserver\n"
    " 3# clone in /usr/lib/x86_64-linux-gnu/libc.so.6\n"
)


def test_the_signal_handlers_stack_without_its_signal_line_is_a_crash() -> None:
    assert _runbooks(_SERVING + _HANDLER_STACK) == [RUNBOOK_SERVER_CRASHED]
    # with the line, as the handler writes it: the same page
    assert _runbooks(_SERVING + "Signal (11) received.\n" + _HANDLER_STACK) == [RUNBOOK_SERVER_CRASHED]


def test_another_stack_of_the_server_is_not_read_as_the_handlers() -> None:
    stack = " 0# 0x0000559CB99E68A9 in tritonserver\n 1# 0x0000559CB9BB1226 in tritonserver\n"
    assert _runbooks(_SERVING + stack) == []
