"""Never an empty answer for a failed load: every failed model, and a server that failed, gets a finding.

Each log line below is real wording: taken from the Triton source (file named) or from a log a user
posted (issue URL named). Where a log would need a model name, the user's names are kept.
"""

# ruff: noqa: E501 - log lines are test data and keep their real length

from __future__ import annotations

from pathlib import Path

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text
from triton_sre.diagnosis.signals import is_harmless

LOGS = Path(__file__).parent / "data" / "logs"


def diagnose(text: str):
    return diagnose_events(parse_text(text))


def only(text: str):
    report = diagnose(text)
    assert report.findings, "a failed log must never yield an empty findings list"
    assert report.has_failure
    return report.findings


# ----------------------------------------------------------------------------- status table only
def test_status_table_row_alone_with_an_unexplained_reason() -> None:
    # Reason text: https://github.com/vllm-project/vllm/issues/29178 (Triton's vLLM backend model 'yiyao').
    log = (
        "+--------+---------+------------------------------------------------------------------+\n"
        "| Model  | Version | Status                                                           |\n"
        "+--------+---------+------------------------------------------------------------------+\n"
        "| yiyao  | 1       | UNAVAILABLE: Internal: AttributeError: module 'triton.language' has no attribute 'constexpr_function' |\n"
        "+--------+---------+------------------------------------------------------------------+\n"
    )
    (finding,) = only(log)
    assert (finding.model, finding.version) == ("yiyao", "1")
    assert finding.severity == c.IMPACT_CRITICAL
    # Unexplained until round 11; the vLLM backend's model.py runs in the Python backend, whose status
    # "Internal: <ExceptionType>: ..." is pybind11's report of an exception the model's code raised.
    assert finding.runbook == c.RUNBOOK_PYTHON_MODEL_ERROR
    assert finding.evidence and finding.evidence[0].line == 4
    assert finding.message and "constexpr_function" in finding.message


def test_status_table_row_without_header() -> None:
    # Morpheus' model repository log (a TensorRT model beside READY ONNX ones), pasted without its header.
    log = (
        "| phishing-bert-onnx     | 1       | READY |\n"
        "| phishing-bert-trt      | 1       | UNAVAILABLE: Internal: unable to load plan file to auto complete config: /repo/Morpheus/models/triton-model-repo/phishing-bert-trt/1/model.plan |\n"
    )
    findings = only(log)
    assert [f.model for f in findings] == ["phishing-bert-trt"]
    assert findings[0].message and "unable to load plan file" in findings[0].message


# ----------------------------------------------------------------------------- a traceback only
TRACEBACK = """Traceback (most recent call last):
  File "/models/preprocess/1/model.py", line 3, in <module>
    import cv2
  File "/usr/local/lib/python3.10/dist-packages/cv2/__init__.py", line 181, in <module>
    bootstrap()
  File "/usr/local/lib/python3.10/dist-packages/cv2/__init__.py", line 153, in bootstrap
    native_module = importlib.import_module("cv2")
ImportError: libGL.so.1: cannot open shared object file: No such file or directory
"""
# Frames and the ImportError as OpenCV prints them (https://github.com/cleardusk/3DDFA_V2/issues/138);
# the model.py import in a Python-backend model as in https://github.com/triton-inference-server/server/issues/3244.


def test_traceback_alone_names_its_model() -> None:
    (finding,) = only(TRACEBACK)
    assert finding.model == "preprocess" and finding.version == "1"
    assert finding.severity == c.IMPACT_CRITICAL
    assert finding.runbook != c.RUNBOOK_UNKNOWN_LOAD_FAILURE


def test_traceback_alone_without_a_model_path_is_a_server_finding() -> None:
    (finding,) = only(TRACEBACK.replace("/models/preprocess/1/model.py", "/opt/app/worker.py"))
    assert finding.model is None and finding.severity == c.IMPACT_CRITICAL


# ----------------------------------------------------------------------------- before any model is named
@pytest.mark.parametrize(
    ("log", "source"),
    [
        (
            "ERROR: The NVIDIA Driver is present, but CUDA failed to initialize.  GPU functionality will not be available.\n"
            "   [[ No CUDA-capable device is detected (error 100) ]]\n",
            "https://github.com/triton-inference-server/server/issues/5931",
        ),
        (
            "ERROR: The NVIDIA Driver is present, but CUDA failed to initialize.  GPU functionality will not be available.\n"
            "   [[ Initialization error (error 3) ]]\n",
            "https://github.com/triton-inference-server/server/issues/7262",
        ),
        (
            "W0709 06:47:47.761504 149065 pinned_memory_manager.cc:202] Unable to allocate pinned system memory, pinned memory pool will not be available: initialization error\n"
            "E0709 06:47:47.761553 149065 server.cc:182] Failed to initialize CUDA memory manager: unable to get number of CUDA devices: initialization error\n",
            "https://github.com/triton-inference-server/server/issues/3098",
        ),
        (
            "Failed to initialize NVML: Driver/library version mismatch\n"
            "error: creating server: Internal - failed to load all models\n",
            "NVML's own message (nvidia-smi prints the same) after a host driver upgrade",
        ),
        (
            "E0101 00:00:00.000000 1 model_repository_manager.cc:1234] failed to initialize CUDA: CUDA driver version is insufficient for CUDA runtime version\n",
            "CUDA runtime's cudaErrorInsufficientDriver text (cudaGetErrorString)",
        ),
    ],
)
def test_driver_or_cuda_failure_before_any_model(log: str, source: str) -> None:
    findings = only(log)
    assert findings[0].model is None, source
    assert findings[0].runbook == c.RUNBOOK_CUDA_DRIVER_MISMATCH, source
    assert findings[0].severity == c.IMPACT_CRITICAL


def test_a_cuda_warning_becomes_the_cause_when_the_server_then_fails() -> None:
    # 2.51's pinned-memory warning is harmless on a CPU host; a different warning carrying the CUDA text
    # plus the server's summary line means the server died of it.
    log = (
        "W1109 05:31:06.568839 124 metrics.cc:188] failed to get device count, GPU metrics: CUDA driver version is insufficient for CUDA runtime version\n"
        "W1109 05:31:07.000000 124 server.cc:250] no CUDA-capable device is detected\n"
        "error: creating server: Internal - failed to load all models\n"
    )
    (finding,) = only(log)
    assert finding.runbook == c.RUNBOOK_CUDA_DRIVER_MISMATCH
    assert any("creating server" in e.text for e in finding.evidence)


def test_server_error_nothing_explains_is_unknown_with_its_message() -> None:
    # core src/server.cc (r22.06-r26.06): a server-wide error no runbook covers.
    (finding,) = only("error: creating server: Invalid argument - --repoagent-directory can not be empty\n")
    assert finding.model is None and finding.runbook == c.RUNBOOK_UNKNOWN_LOAD_FAILURE
    assert finding.message and "--repoagent-directory can not be empty" in finding.message
    assert "not in this excerpt" not in finding.remediation


def test_server_error_a_runbook_explains() -> None:
    # core src/server.cc: a wrapper script that drops the flag (reported for RIVA 2.15-2.19).
    (finding,) = only("error: creating server: Invalid argument - --model-repository must be specified\n")
    assert finding.model is None and finding.runbook == c.RUNBOOK_REPOSITORY_PATH_INVALID


def test_creating_server_line_naming_a_model() -> None:
    # https://github.com/vllm-project/vllm/issues/29178 (Triton + vLLM, the model 'yiyao').
    log = (
        "error: creating server: Invalid argument - load failed for model 'yiyao': version 1 is at UNAVAILABLE "
        "state: Internal: AttributeError: module 'triton.language' has no attribute 'constexpr_function'\n"
    )
    (finding,) = only(log)
    assert (finding.model, finding.version) == ("yiyao", "1")
    assert finding.message and "constexpr_function" in finding.message


def test_a_model_instance_name_is_its_model() -> None:
    # python_backend src/stub_launcher.cc: "Stub process '" + model_instance_name_ + "' is not healthy."
    log = (
        "E0301 10:00:00.000000 1 python_be.cc:2684] Stub process 'bert_preprocess_0_0' is not healthy.\n"
        "E0301 10:00:00.100000 1 model_lifecycle.cc:642] failed to load 'other' version 1: Internal: boom\n"
    )
    models = {f.model for f in only(log)}
    assert "bert_preprocess" in models and "other" in models


def test_plain_nvml_line_alone_stays_harmless() -> None:
    report = diagnose("Error: Failed to initialize NVML\n")
    assert report.findings == () and report.harmless_lines == 1


# ----------------------------------------------------------------------------- over every fixture
FAILED_SIGNS = (
    "UNAVAILABLE",
    "failed to load",
    "error: creating server",
    "Traceback",
    "failed to initialize",
    "Check failed: ",  # dmlc-core / glog CHECK (Treelite, the FIL backend)
    "StatusCode.UNAVAILABLE",  # a gRPC client's error
    # Crashes (round 13): libstdc++'s terminate handler, Open MPI's signal handler, the shell's report.
    "terminate called",
    "what():  ",
    "*** Process received signal ***",
    "Segmentation fault (core dumped)",
    "Aborted (core dumped)",
    # Levelless failure prose (round 15): a step's or a process's own failure report.
    "failed with exit status",
    "exited with failure",
    "failed to start",
    "failed to poll",
    "Failed to set config",
    "has crashed",
)


def _corpus_logs() -> list[object]:
    # The blind sets' empty answers, scored once, were each fixed in the next round from the emitting
    # sources (tests/test_diagnosis_round*.py and the modules their notes name); none is exempt.
    return [
        pytest.param(path, id=f"{path.parent.name}/{path.name}") for path in sorted(LOGS.glob("**/*.log"))
    ]


# Failure-labelled logs whose only failure sign is a library's warning, after which the program went on and
# served: the answer is the label's page at warning level (heldout107's InvokeAI: PyTorch's UserWarning quoting
# CUDA's error 803, then "Using torch device: CPU"; its collector's note: a reader could call it healthy).
_WARNING_ONLY = frozenset({"invokeai-7011-5.0.2-rtx4080-error-803-unsupported-display-driver-falls-back-to-cpu.log"})


@pytest.mark.parametrize("path", _corpus_logs())
def test_no_failed_log_has_an_empty_answer(path: Path) -> None:
    text = path.read_text(errors="replace")
    # (a line harmless on a CPU host is no sign: "Error: Failed to initialize NVML" starts every real capture)
    signs = "\n".join(line for line in text.lower().splitlines() if not is_harmless(line))
    if not any(sign.lower() in signs for sign in FAILED_SIGNS):
        return
    if "\n# expect: healthy\n" in text[:600]:
        return  # labelled healthy from its thread (a client's error in another service): no failure to name
    report = diagnose(text)
    if path.name in _WARNING_ONLY:
        assert report.findings and report.findings[0].severity == c.IMPACT_WARNING, path.name
        return
    assert report.findings and report.has_failure, path.name


# ----------------------------------------------------------------------------- disproved by the status table
# An error line no rule explains and that names no model (a made-up component's; the real case, gRPC core's
# client channel poller in a notebook's `docker logs` cell, is a client's line and no finding at all now:
# tests/test_diagnosis_diag25.py); the table is 21.12's.
_UNEXPLAINED = "E1201 20:53:05.006869 17 sweeper.cc:88] background sweep aborted after 3 attempts\n"
_TABLE = (
    "I1201 20:53:06.143110 1 server.cc:592] \n"
    "+-----------------+---------+--------+\n"
    "| Model           | Version | Status |\n"
    "+-----------------+---------+--------+\n"
    "| large_model     | 1       | {large} |\n"
    "| small_model     | 1       | READY  |\n"
    "+-----------------+---------+--------+\n"
)


def test_an_unexplained_error_line_before_an_all_ready_table_is_a_warning() -> None:
    report = diagnose(_UNEXPLAINED + _TABLE.format(large="READY"))
    assert not report.has_failure
    (finding,) = report.findings
    assert (finding.runbook, finding.severity, finding.model) == (
        c.RUNBOOK_UNKNOWN_LOAD_FAILURE,
        c.IMPACT_WARNING,
        None,
    )
    assert finding.evidence[0].line == 1


def test_an_unexplained_error_line_after_the_table_or_beside_a_failed_model_stays_a_failure() -> None:
    after = diagnose(_TABLE.format(large="READY") + _UNEXPLAINED)
    assert after.has_failure and after.findings[0].runbook == c.RUNBOOK_UNKNOWN_LOAD_FAILURE
    beside = diagnose(_UNEXPLAINED + _TABLE.format(large="UNAVAILABLE: Internal: failed to read it"))
    assert beside.has_failure and beside.findings[0].model == "large_model"


def test_an_error_line_before_a_table_that_omits_a_model_still_loading_stays_a_failure() -> None:
    # other_model began loading, has no outcome and no row: the table vouches only for the models it lists
    loading = "I1201 20:53:04.000000 1 model_lifecycle.cc:469] loading: other_model:1\n"
    report = diagnose(loading + _UNEXPLAINED + _TABLE.format(large="READY"))
    assert report.has_failure and report.findings[0].runbook == c.RUNBOOK_UNKNOWN_LOAD_FAILURE
    assert report.still_loading == ("other_model:1",)
    # its own load finished (the table lists it READY): the rule holds again
    listed = "I1201 20:53:04.000000 1 model_lifecycle.cc:469] loading: large_model:1\n"
    assert not diagnose(listed + _UNEXPLAINED + _TABLE.format(large="READY")).has_failure
