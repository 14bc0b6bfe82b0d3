"""The real Triton 2.51 crashing: its own signal handler's report is read as server-crashed, and a crash
after it was asked to stop is a warning (issue 20: a crash had only the fallback page)."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from typing import Any

from triton_sre import conventions as c
from triton_sre.demo import VECTOR_SCALE
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text


def _healthy(factory: Callable[..., Any]) -> Any:
    """A server with one healthy model (the sample repository's broken ones are findings of their own)."""
    return factory(model_control_mode="explicit", load_models=(VECTOR_SCALE,))


def _wait_exit(server: Any, timeout: float = 30.0) -> int:
    deadline = time.monotonic() + timeout
    while server.returncode is None:
        assert time.monotonic() < deadline, "tritonserver did not exit"
        time.sleep(0.1)
    return server.returncode


def test_a_segfault_of_the_real_triton_reads_as_the_crash(fresh_triton_factory: Callable[..., Any]) -> None:
    server = _healthy(fresh_triton_factory)
    os.kill(server.pid, signal.SIGSEGV)
    code = _wait_exit(server)
    log = server.read_log()
    assert "Signal (11) received." in log, log[-2000:]
    assert code != 0
    report = diagnose_events(parse_text(log))
    crash = report.findings[0]
    assert (crash.runbook, crash.severity) == (c.RUNBOOK_SERVER_CRASHED, c.IMPACT_CRITICAL)
    assert crash.evidence[0].text == "Signal (11) received."
    assert report.release  # the table's server_version: the release's known issues can be looked up


def test_a_segfault_while_the_real_triton_stops_is_a_warning(
    fresh_triton_factory: Callable[..., Any],
) -> None:
    # SIGTERM starts the stop (the exit handler prints "Signal (15) received." and waits for in-flight
    # requests up to --exit-timeout-secs); the segfault lands while it stops.
    server = _healthy(fresh_triton_factory)
    os.kill(server.pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    while "Signal (15) received." not in server.read_log():
        assert time.monotonic() < deadline, server.read_log()[-2000:]
        time.sleep(0.05)
    if server.returncode is None:
        os.kill(server.pid, signal.SIGSEGV)
    _wait_exit(server)
    log = server.read_log()
    report = diagnose_events(parse_text(log))
    crashes = [f for f in report.findings if f.runbook == c.RUNBOOK_SERVER_CRASHED]
    if "Signal (11) received." in log:  # the stop may have finished first: then nothing crashed
        assert [f.severity for f in crashes] == [c.IMPACT_WARNING]
    else:
        assert crashes == []
    assert not report.has_failure
