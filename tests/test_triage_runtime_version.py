"""`triage` names the version whose code fails at run time (journey27).

Every version of a Python model runs as an instance called `<model>_0_0`, so the stub's line names the
model, not the version; its traceback's folder does. On a release day, ranker versions 1, 2 and 3 were
served side by side by a real Triton 2.51 and version 2 raised on some requests: triage said
`CRITICAL ranker: python-model-error` with no version, which left the operator to read the path in the
evidence to know which version to roll back. The lines below are that log's (only the date shortened).
"""

# ruff: noqa: E501 - quoted log lines are test data

from __future__ import annotations

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text

LOADS = [
    'I1206 04:21:05.619071 3448 model_lifecycle.cc:472] "loading: ranker:1"',
    'I1206 04:21:05.619159 3448 model_lifecycle.cc:472] "loading: ranker:2"',
    'I1206 04:21:05.619471 3448 model_lifecycle.cc:472] "loading: ranker:3"',
    *['I1206 04:21:07.376624 3448 python_be.cc:2249] "TRITONBACKEND_ModelInstanceInitialize: ranker_0_0 (CPU device 0)"'] * 3,
    "I1206 04:21:08.229221 3448 model_lifecycle.cc:839] \"successfully loaded 'ranker'\"",
]


def failed(version: str) -> str:
    at = f"\\n\\nAt:\\n  /tmp/j27/repo/ranker/{version}/model.py(23): execute\\n"
    return (
        "E1206 04:21:20.876890 3448 pb_stub.cc:714] \"Failed to process the request(s) for model 'ranker_0_0', "
        f'message: ValueError: ranker v{version}: negative score{at}"'
    )


@pytest.mark.parametrize("version", ["2", "3"])
def test_a_run_time_failure_names_the_version_its_traceback_runs_in(version: str) -> None:
    text = "\n".join([*LOADS, *[failed(version)] * 3]) + "\n"
    findings = diagnose_events(parse_text(text)).findings
    assert [(f.model, f.version, f.runbook) for f in findings] == [
        ("ranker", version, c.RUNBOOK_PYTHON_MODEL_ERROR)
    ]


def test_a_frame_of_another_models_folder_names_no_version() -> None:
    line = failed("2").replace("/repo/ranker/2/", "/repo/shared/2/")
    findings = diagnose_events(parse_text("\n".join([*LOADS, line]) + "\n")).findings
    assert [(f.model, f.version, f.runbook) for f in findings] == [
        ("ranker", None, c.RUNBOOK_PYTHON_MODEL_ERROR)
    ]
