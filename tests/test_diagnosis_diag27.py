"""diag27: load failures of the real Triton 2.51 swept from the model-config schema (tests/schema_faults.py),
each miss fixed by the source of its message. The lines are the real server's, from the sweep's captures
(explicit model control, loads requested in parallel), with the repository path shortened.
"""

# ruff: noqa: E501 - real log lines are test data

from __future__ import annotations

from corpus import first_runbook_by_model

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text


def _report(text: str):
    return diagnose_events(parse_text(text))


# core's CircularDependencyCheck, once for each ensemble of the cycle, while a Python model loads beside them.
CYCLE = """I1206 04:21:43.181891 10863 model_lifecycle.cc:472] "loading: py_init_signature:1"
E1206 04:21:46.629433 10863 model_repository_manager.cc:703] "Invalid argument: circular dependency between ensembles: ens_cycle_a -> ... -> ens_cycle_b -> ens_cycle_a"
E1206 04:21:46.629485 10863 model_repository_manager.cc:703] "Invalid argument: circular dependency between ensembles: ens_cycle_b -> ... -> ens_cycle_a -> ens_cycle_b"
E1206 04:21:46.843080 10863 model_lifecycle.cc:642] "failed to load 'py_init_signature' version 1: Internal: TypeError: TritonPythonModel.initialize() takes 1 positional argument but 2 were given"
I1206 04:21:46.843101 10863 model_lifecycle.cc:777] "failed to load 'py_init_signature'"
"""


def test_a_cycle_of_ensembles_is_each_ensembles_finding() -> None:
    """Both ensembles of the cycle got no finding; their lines went to the Python model loading beside
    them, whose own first finding became ensemble-dependency."""
    assert first_runbook_by_model(CYCLE) == {
        "ens_cycle_a": c.RUNBOOK_ENSEMBLE_DEPENDENCY,
        "ens_cycle_b": c.RUNBOOK_ENSEMBLE_DEPENDENCY,
        "py_init_signature": c.RUNBOOK_PYTHON_MODEL_ERROR,
    }
    found = {f.model: f for f in _report(CYCLE).findings}
    assert "ens_cycle_a -> ... -> ens_cycle_b -> ens_cycle_a" in found["ens_cycle_a"].evidence[0].text
    assert "ens_cycle_b -> ... -> ens_cycle_a -> ens_cycle_b" in found["ens_cycle_b"].evidence[0].text
