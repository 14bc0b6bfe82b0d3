"""Run-time failures of a model loaded through model control, in tritonserver's own log (journey25).

``explicit-control-runtime-error.log`` is the real 2.51 server of `triton-sre stack up` (explicit model
control: the startup status table is empty) after ``ranker`` version 2 was loaded and every request
failed in its ``execute``. python_be names the instance (``for model 'ranker_0_0'``); the log shows the
model's loads (``loading: ranker:2``, ``successfully loaded 'ranker'``) and no status-table row.
"""

from __future__ import annotations

from corpus import FIXTURES, diagnose_file

from triton_sre import conventions as c

CAPTURE = FIXTURES / "explicit-control-runtime-error.log"


def test_the_instance_is_named_by_its_model() -> None:
    """`triage` said `CRITICAL ranker_0_0: python-model-error`: the instance's name, which no alert, index
    or `/triton diagnose` uses; the log's `loading: ranker:2` names the model the instance belongs to."""
    report = diagnose_file(CAPTURE)
    found = [(f.model, f.runbook, f.severity) for f in report.findings]
    assert found == [("ranker", c.RUNBOOK_PYTHON_MODEL_ERROR, c.IMPACT_CRITICAL)]
    assert "KeyError: 'user_embedding'" in report.findings[0].evidence[0].text
