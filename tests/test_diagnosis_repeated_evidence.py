"""A request failing again and again is quoted once, by the line that says what failed.

From a real Triton 2.51 log (the game day's error burst, journey23): the Python backend's stub writes
each failed request as one escaped E line, the exception first and its frame under ``At:``. The
finding quoted the frame of every line (twelve times ``model.py(25): execute``), never the
``ValueError`` that says what failed.
"""

from __future__ import annotations

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text

FAILED = (
    'E1205 17:16:{s:09.6f} 22294 pb_stub.cc:714] "Failed to process the request(s) for model '
    "'vector_scale_0_0', message: ValueError: vector_scale: negative input values are not allowed"
    '\\n\\nAt:\\n  /tmp/j23/gd/models/vector_scale/1/model.py(25): execute\\n"'
)
LOG = "\n".join(
    [
        'I1205 17:16:30.702506 22294 model_lifecycle.cc:472] "loading: vector_scale:1"',
        "I1205 17:16:32.352420 22294 model_lifecycle.cc:839] \"successfully loaded 'vector_scale'\"",
        *(FAILED.format(s=38.9 + i / 10) for i in range(12)),
    ]
)


def test_a_request_failing_repeatedly_is_quoted_once_by_its_exception() -> None:
    (finding,) = diagnose_events(parse_text(LOG)).findings
    assert finding.runbook == c.RUNBOOK_PYTHON_MODEL_ERROR
    assert len(finding.evidence) == 1
    assert finding.evidence[0].line == 3
    assert "ValueError: vector_scale: negative input values are not allowed" in finding.evidence[0].text


def test_a_cpython_traceback_folded_under_a_line_quotes_its_exception_below_the_frames() -> None:
    log = (
        'E1205 17:16:38.932007 22294 pb_stub.cc:714] "Failed to process the request(s) for model '
        "'m_0_0', message: \\nTraceback (most recent call last):\\n"
        '  File \\"/models/m/1/model.py\\", line 25, in execute\\n    raise KeyError(k)\\n'
        "KeyError: 'scale'\\n\""
    )
    (finding,) = diagnose_events(parse_text(log)).findings
    assert finding.runbook == c.RUNBOOK_PYTHON_MODEL_ERROR
    assert [e.text for e in finding.evidence] == ["KeyError: 'scale'"]


def test_the_same_message_of_two_models_is_quoted_for_each() -> None:
    other = FAILED.replace("vector_scale", "ranker")
    log = "\n".join([FAILED.format(s=38.9), other.format(s=39.0), FAILED.format(s=39.1)])
    findings = diagnose_events(parse_text(log)).findings
    assert sorted(len(f.evidence) for f in findings) == [1, 1]
