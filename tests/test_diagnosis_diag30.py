"""diag30: the crash after a failed start-up, and the severity of a loaded model's request errors.

``startup-stub-exits-then-double-free.log`` is the real 2.51 (CPU) in explicit control loading twenty-four
Python stubs and ``init_exit`` (whose ``initialize`` calls ``os._exit``) by ``--load-model``: the start-up
fails, the server stops (``Waiting for in-flight requests to complete.``, the unloads), prints ``error:
creating server: ...`` and then glibc aborts it with ``double free or corruption (out)`` (signal 6). The
abort is unprefixed, on a line of its own, so the log reader folds it under the ``error:`` line before it.
"""

from __future__ import annotations

from corpus import FIXTURES, diagnose_file

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text
from triton_sre.diagnosis.signals import crash_report_start

DOUBLE_FREE = FIXTURES / "startup-stub-exits-then-double-free.log"


def test_the_abort_after_the_failed_start_up_is_a_warning_after_the_models_finding() -> None:
    """main gave only init_exit's finding: the abort was read as more of the `error: creating server` line
    (whose model is init_exit) and vanished; docs/triage.md promises a warning for a crash after the stop."""
    report = diagnose_file(DOUBLE_FREE)
    assert [(f.model, f.runbook, f.severity) for f in report.findings] == [
        ("init_exit", c.RUNBOOK_PYTHON_MODEL_ERROR, c.IMPACT_CRITICAL),
        (None, c.RUNBOOK_SERVER_CRASHED, c.IMPACT_WARNING),
    ]
    crash = report.findings[1]
    assert crash.evidence[0].text.strip() == "double free or corruption (out)"
    lines = DOUBLE_FREE.read_text().splitlines()
    assert lines[crash.evidence[0].line - 1].strip() == "double free or corruption (out)"
    assert crash.remediation.startswith("It crashed after the server began to stop (line ")
    assert not report.unmatched
    assert diagnose_events(parse_text(DOUBLE_FREE.read_text())).findings == report.findings


def test_glibcs_aborts_are_a_report_of_their_own_under_an_error_line() -> None:
    for abort in (
        "double free or corruption (out)",
        "free(): invalid pointer",
        "corrupted size vs. prev_size",
        "*** stack smashing detected ***: terminated",
    ):
        failed = f"error: creating server: Internal - failed to load all models\n\n{abort}"
        assert crash_report_start(failed) == 2
    # ... but not a message that only mentions the words
    mention = "failed to load 'm'\nthe buffer was freed: double free or corruption (out)"
    assert crash_report_start(mention) is None


def test_the_same_abort_before_any_stop_is_the_failure_it_is() -> None:
    text = (
        'I1206 12:00:00.000001 1 model_lifecycle.cc:472] "loading: a:1"\n'
        "E1206 12:00:01.000000 1 model_lifecycle.cc:642] \"failed to load 'a' version 1: Internal: boom\"\n"
        "double free or corruption (out)\n"
    )
    found = [(f.runbook, f.severity) for f in diagnose_events(parse_text(text)).findings]
    assert (c.RUNBOOK_SERVER_CRASHED, c.IMPACT_CRITICAL) in found
