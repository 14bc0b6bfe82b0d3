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


def _only_finding(text: str, model: str, runbook: str, quoted: str) -> None:
    """The log's one finding is `model`'s, with `runbook`, its first evidence quoting `quoted`; no line left."""
    report = _report(text)
    assert [(f.model, f.runbook) for f in report.findings] == [(model, runbook)]
    assert quoted in report.findings[0].evidence[0].text
    assert not report.unmatched


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


# A Python model whose execute raises while its model_warmup sample runs: python_be names its only default
# instance `<model>_0` (no instance_group in the config), not `<model>_0_0`.
WARMUP_RAISES = """I1206 04:21:42.901710 10863 model_lifecycle.cc:472] "loading: py_execute_raises:1"
I1206 04:21:45.515413 10863 python_be.cc:2249] "TRITONBACKEND_ModelInstanceInitialize: py_execute_raises_0 (CPU device 0)"
E1206 04:21:45.722256 10863 pb_stub.cc:714] "Failed to process the request(s) for model 'py_execute_raises_0', message: RuntimeError: boom in execute\\n\\nAt:\\n  /repo/py_execute_raises/1/model.py(6): execute\\n"
E1206 04:21:46.962940 10863 backend_model.cc:692] "ERROR: Failed to create instance: failed to run warmup sample 'w': Failed to process the request(s) for model 'py_execute_raises_0', message: RuntimeError: boom in execute\\n\\nAt:\\n  /repo/py_execute_raises/1/model.py(6): execute\\n; "
E1206 04:21:46.963043 10863 model_lifecycle.cc:642] "failed to load 'py_execute_raises' version 1: Invalid argument: failed to run warmup sample 'w': Failed to process the request(s) for model 'py_execute_raises_0', message: RuntimeError: boom in execute\\n\\nAt:\\n  /repo/py_execute_raises/1/model.py(6): execute\\n; "
I1206 04:21:46.963058 10863 model_lifecycle.cc:777] "failed to load 'py_execute_raises'"
"""


def test_a_models_only_default_instance_is_the_model() -> None:
    """`py_execute_raises_0` got a finding of its own beside the model's: a name no index or alert uses."""
    found = [(f.model, f.runbook) for f in _report(WARMUP_RAISES).findings]
    assert found == [("py_execute_raises", c.RUNBOOK_PYTHON_MODEL_ERROR)]
    assert "boom in execute" in _report(WARMUP_RAISES).findings[0].evidence[0].text


def test_an_index_suffix_of_a_model_not_loading_stays_a_name() -> None:
    """A model really named `<other>_2` stays itself when no `<other>` loads."""
    text = WARMUP_RAISES.replace("py_execute_raises_0", "resnet_2").replace("py_execute_raises", "resnet_2")
    assert [f.model for f in _report(text).findings] == ["resnet_2"]


# A model_warmup sample keyed by an input name the config does not have: core sends the sample as a request
# and refuses it for the configured input it lacks (infer_request.cc, r24.03+ wording).
WARMUP_INPUT = """I1206 04:21:40.515916 10863 model_lifecycle.cc:472] "loading: warmup_input_name:1"
E1206 04:21:46.958574 10863 backend_model.cc:692] "ERROR: Failed to create instance: [request id: <id_unknown>] expected 1 inputs but got 0 inputs for model 'warmup_input_name'. Got input(s) [], but missing required input(s) ['INPUT']. Please provide all required input(s)."
E1206 04:21:46.958759 10863 model_lifecycle.cc:642] "failed to load 'warmup_input_name' version 1: Invalid argument: [request id: <id_unknown>] expected 1 inputs but got 0 inputs for model 'warmup_input_name'. Got input(s) [], but missing required input(s) ['INPUT']. Please provide all required input(s)."
I1206 04:21:46.958777 10863 model_lifecycle.cc:777] "failed to load 'warmup_input_name'"
"""


def test_a_warmup_sample_without_the_configured_input_is_a_tensor_name_mismatch() -> None:
    """Was unknown-load-failure, with the backend_model.cc line left unmatched."""
    _only_finding(WARMUP_INPUT, "warmup_input_name", c.RUNBOOK_TENSOR_NAME_MISMATCH, "missing required input(s) ['INPUT']")


# A version policy naming a version below 0 (model_config.proto: versions are int64; model_lifecycle.cc
# logs each specific version it cannot find, whatever its sign).
NEGATIVE_VERSION = """E1206 04:21:37.803163 10863 model_lifecycle.cc:123] "version -1 is specified for model 'vp_specific_negative', but the version directory is not present"
E1206 04:21:37.803177 10863 model_repository_manager.cc:724] "failed to load model 'vp_specific_negative': at least one version must be available under the version policy of model 'vp_specific_negative'"
"""


def test_a_negative_specific_version_is_read_as_the_policys_line() -> None:
    """The version -1 line was left unmatched (the rule read digits only)."""
    _only_finding(NEGATIVE_VERSION, "vp_specific_negative", c.RUNBOOK_VERSION_DIR_INVALID, "version -1 is specified")


# `1/model.py` is a directory (what a bind mount of a host file that does not exist leaves): the stub finds
# the path, then cannot import it as the module `1.model`.
MODEL_PY_DIR = """I1206 04:21:37.793600 10863 model_lifecycle.cc:472] "loading: model_py_dir:1"
E1206 04:21:38.068499 10863 model_lifecycle.cc:642] "failed to load 'model_py_dir' version 1: Internal: ModuleNotFoundError: No module named '1.model'"
I1206 04:21:38.068564 10863 model_lifecycle.cc:777] "failed to load 'model_py_dir'"
"""


def test_the_model_file_not_importable_as_its_version_module_is_the_model_file() -> None:
    """Was python-module-missing: `pip install` of a module named `1.model` is no fix."""
    assert first_runbook_by_model(MODEL_PY_DIR) == {"model_py_dir": c.RUNBOOK_MODEL_FILE_INVALID}
    # a model's own import of a dotted module stays the module's (or its release's) finding
    other = MODEL_PY_DIR.replace("'1.model'", "'transformers.models'")
    assert first_runbook_by_model(other)["model_py_dir"] != c.RUNBOOK_MODEL_FILE_INVALID


# The Python stub's own line for an exception in initialize names no model; core's line for the model quotes
# the exception after the other loads of a parallel start wrote their lines in between (21 events in the run).
STUB_LINE = """I1206 04:56:59.857143 6625 model_lifecycle.cc:472] "loading: py_init_signature:1"
I1206 04:57:09.200599 6625 pb_stub.cc:366] "Failed to initialize Python stub: TypeError: TritonPythonModel.initialize() takes 1 positional argument but 2 were given"
"""
OTHER_LOAD = """I1206 04:57:10.213569 6625 model_lifecycle.cc:472] "loading: dims_missing_{k}:1"
E1206 04:57:10.826787 6625 model_lifecycle.cc:642] "failed to load 'dims_missing_{k}' version 1: Invalid argument: model input 'INPUT' must specify 'dims' for dims_missing_{k}"
I1206 04:57:10.826839 6625 model_lifecycle.cc:777] "failed to load 'dims_missing_{k}'"
"""
MODEL_LINE = """E1206 04:57:11.279426 6625 backend_model.cc:692] "ERROR: Failed to create instance: TypeError: TritonPythonModel.initialize() takes 1 positional argument but 2 were given"
E1206 04:57:11.279564 6625 model_lifecycle.cc:642] "failed to load 'py_init_signature' version 1: Internal: TypeError: TritonPythonModel.initialize() takes 1 positional argument but 2 were given"
I1206 04:57:11.279580 6625 model_lifecycle.cc:777] "failed to load 'py_init_signature'"
"""


def test_a_stub_line_far_before_the_failure_that_quotes_it_is_that_models() -> None:
    """Was a model-less warning finding of its own (the line waited 12 events at most)."""
    text = STUB_LINE + "".join(OTHER_LOAD.format(k=k) for k in range(7)) + MODEL_LINE
    report = _report(text)
    assert all(f.model is not None for f in report.findings), [f.evidence[0].text for f in report.findings]
    own = next(f for f in report.findings if f.model == "py_init_signature")
    assert own.runbook == c.RUNBOOK_PYTHON_MODEL_ERROR
    assert any("pb_stub.cc:366" in e.text for e in own.evidence)
    assert {f.model: f.runbook for f in report.findings if f.model != "py_init_signature"} == {
        f"dims_missing_{k}": c.RUNBOOK_SHAPE_OR_DIMS_MISMATCH for k in range(7)
    }
