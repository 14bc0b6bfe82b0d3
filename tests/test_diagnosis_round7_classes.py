"""The classes behind heldout10's misses (round 7), each tested with wording from another source than
the held-out log: never empty (a status cell alone, the server summary inside prose, dmlc-core's
``Check failed:``, a gRPC client's ``StatusCode``, Triton's refusal of an explicit load in poll mode),
no CUDA device inside a container that needs a GPU, and the libraries below the backends (Treelite,
ONNX Runtime's external data, CUDA's ``invalid device function``, glibc's static TLS). heldout10's own
logs are scored in tests/test_diagnosis_accuracy.py.
"""

# ruff: noqa: E501 - quoted log lines are test data

from __future__ import annotations

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text
from triton_sre.diagnosis.severity import is_failure_line


def findings(text: str):
    report = diagnose_events(parse_text(text))
    assert report.findings and report.has_failure, text
    return report.findings


def first(text: str) -> tuple[str, str]:
    """(runbook, quoted line) of the first finding."""
    found = findings(text)[0]
    return found.runbook, found.evidence[0].text


# ----------------------------------------------------------------------------- 1. never empty
CASES = [
    # A status cell pasted alone (no table, no E line). server#5206 (a comment, 23.xx): the library
    # core looks for is named after the platform, the existing backend-platform-mismatch page.
    (
        "UNAVAILABLE: Invalid argument: unable to find 'libtriton_tensorrt_plan.so' for model 'object_detection', searched: /models/object_detection/1, /models/object_detection, /opt/tritonserver/backends/tensorrt_plan\n",
        c.RUNBOOK_BACKEND_PLATFORM_MISMATCH,
        "UNAVAILABLE: Invalid argument: unable to find",
    ),
    # ... and one whose reason no page covered until round 11: vllm-project/vllm#29178 (Triton's vLLM
    # backend, a Python-backend model), the cell without its table; an exception type no rule claims in
    # the Python backend's "Internal: <Type>: ..." status is the model's code (python-model-error).
    (
        "UNAVAILABLE: Internal: AttributeError: module 'triton.language' has no attribute 'constexpr_function'\n",
        c.RUNBOOK_PYTHON_MODEL_ERROR,
        "constexpr_function",
    ),
    # The server's summary (server src/main.cc "error: creating server: <status>") quoted inside the
    # reporter's prose after the backends' start lines (the I lines of server#7410's 24.xx log).
    (
        "I0704 00:33:26.738428 168 server.cc:676] \n"
        "The server then stops with 'error: creating server: Internal - failed to load all models'\n",
        c.RUNBOOK_UNKNOWN_LOAD_FAILURE,
        "error: creating server: Internal - failed to load all models",
    ),
    # dmlc-core's CHECK format (dmlc/logging.h: "file:line: Check failed: <cond> : <msg>") with
    # Treelite's LightGBM frontend message (src/frontend/lightgbm.cc, 1.x to 4.x).
    (
        "/opt/treelite/src/frontend/lightgbm.cc:424: Check failed: it != global_dict.end() : Ill-formed LightGBM model file: need max_feature_idx\n",
        c.RUNBOOK_MODEL_FILE_INVALID,
        "Ill-formed LightGBM model file",
    ),
    # A CHECK whose message no page knows is still a failure (the fallback, quoting it).
    (
        "[22:10:17] /rapids_triton/build/_deps/treelite-src/src/gtil/predict.cc:210: Check failed: num_feature == model.num_feature (3 vs. 4) : Incorrect number of features\n",
        c.RUNBOOK_UNKNOWN_LOAD_FAILURE,
        "Check failed:",
    ),
    # A gRPC client's error alone: the server's qa/python_models async test quotes tritonclient's
    # InferenceServerException for a load refused in poll mode; without evidence that the log's own
    # server runs in EXPLICIT mode it is the server's mode (model-control-refused).
    (
        "tritonclient.utils.InferenceServerException: [StatusCode.UNAVAILABLE] explicit model load / unload is not allowed if polling is enabled\n",
        c.RUNBOOK_MODEL_CONTROL_REFUSED,
        "explicit model load / unload is not allowed",
    ),
    # ... and server#2911's client message as grpcio's _InactiveRpcError prints it.
    (
        "grpc._channel._InactiveRpcError: <_InactiveRpcError of RPC that terminated with:\n"
        "\tstatus = StatusCode.UNAVAILABLE\n"
        "\tdetails = \"Request for unknown model: 'inception_graphdef' is not found\"\n",
        c.RUNBOOK_UNKNOWN_LOAD_FAILURE,
        "Request for unknown model: 'inception_graphdef'",  # the line that says the model is not served
    ),
]


@pytest.mark.parametrize(("text", "runbook", "quoted"), CASES)
def test_class_from_another_source(text: str, runbook: str, quoted: str) -> None:
    got, line = first(text)
    assert got == runbook
    assert quoted in line


@pytest.mark.parametrize(
    "line",
    [
        "UNAVAILABLE: Not found: unable to load shared library: libcudart.so.12",
        "TRITONSERVER_ERROR_INVALID_ARG",
        "    status = StatusCode.INTERNAL",
        "src/learner.cc:1021: Check failed: mparam_.num_feature != 0 (0 vs. 0) : 0 feature is supplied.",
    ],
)
def test_triton_grpc_and_dmlc_formats_are_failure_signals(line: str) -> None:
    assert is_failure_line(line)


@pytest.mark.parametrize(
    "line",
    [
        "| densenet_onnx | 1       | READY  |",
        "status = StatusCode.OK",
        "I0101 00:00:00.000000 1 server.cc:1] UNAVAILABLE models are retried every 5 s",
    ],
)
def test_healthy_lines_are_not_failure_signals(line: str) -> None:
    assert not is_failure_line(line)


def test_a_poll_mode_refusal_from_a_server_started_in_explicit_mode_is_another_server() -> None:
    # Model Analyzer always launches its local server with --model-control-mode=explicit
    # (model_analyzer entrypoint.py); its docs' quick-start log (model_analyzer docs/quick_start.md)
    # then the refusal only another server on the same ports can give.
    log = (
        "2021-05-11 02:02:58.194 INFO[entrypoint.py:98] Starting a local Triton Server...\n"
        "2021-05-11 02:02:58.203 INFO[server_local.py:64] Triton Server started.\n"
        "2021-05-11 02:03:02.609 INFO[client.py:83] Model add_sub load failed: [StatusCode.UNAVAILABLE] explicit model load / unload is not allowed if polling is enabled\n"
    )
    runbook, line = first(log)
    assert runbook == c.RUNBOOK_SERVER_PORT_IN_USE
    assert "not allowed if polling is enabled" in line


# ----------------------------------------------------------------------------- 2. no CUDA device
# Core's pinned-memory warning (r22.xx wording, as in server#5931's container) and its metrics warning.
NO_DEVICE = (
    "W0518 09:12:01.512389 1 pinned_memory_manager.cc:236] Unable to allocate pinned system memory, pinned memory pool will not be available: no CUDA-capable device is detected\n"
    "I0518 09:12:01.512467 1 cuda_memory_manager.cc:115] CUDA memory pool disabled\n"
)
GPU_MODEL = "I0518 09:12:02.101010 1 tensorrt.cc:5444] TRITONBACKEND_ModelInstanceInitialize: yolov4_0 (GPU device 0)\n"
CLIENT = "tritonclient.utils.InferenceServerException: [StatusCode.UNAVAILABLE] Request for unknown model: 'yolov4' is not found\n"


def test_no_cuda_device_with_a_gpu_model_and_an_unexplained_failure_is_the_container_runtime() -> None:
    runbook, line = first(NO_DEVICE + GPU_MODEL + CLIENT)
    assert runbook == c.RUNBOOK_GPU_CONTAINER_RUNTIME
    assert "no CUDA-capable device is detected" in line


def test_no_cuda_device_on_a_cpu_host_is_not_the_container_runtime() -> None:
    runbook, _line = first(NO_DEVICE + CLIENT)
    assert runbook == c.RUNBOOK_UNKNOWN_LOAD_FAILURE


def test_no_cuda_device_before_a_failure_with_its_own_cause_keeps_that_cause() -> None:
    log = (
        NO_DEVICE
        + GPU_MODEL
        + "E0518 09:12:03.000000 1 model_lifecycle.cc:1] failed to load 'yolov4' version 1: Not found: unable to find PLAN model 'model.plan' for yolov4_0_0_gpu0\n"
    )
    assert first(log)[0] != c.RUNBOOK_GPU_CONTAINER_RUNTIME


def test_a_healthy_cpu_host_start_stays_healthy() -> None:
    log = NO_DEVICE + (
        "W0518 09:12:01.600000 1 metrics.cc:634] Cannot get CUDA device count, GPU metrics will not be available\n"
        "I0518 09:12:02.000000 1 model_lifecycle.cc:693] successfully loaded 'densenet_onnx' version 1\n"
    )
    report = diagnose_events(parse_text(log))
    assert not report.has_failure


# ----------------------------------------------------------------------------- 3. below the backends
BELOW = [
    # ONNX Runtime core/framework/tensorprotoutils.cc (GetExtDataFromTensorProto), a phi-4-mini
    # external data file cut short, as onnxruntime-genai users post it, inside the backend's status.
    (
        "E0101 00:00:00.000000 1 model_lifecycle.cc:1] failed to load 'phi4' version 1: Internal: onnx runtime error 6: Deserialize tensor lm_head.MatMul.weight_Q4 failed.tensorprotoutils.cc:1139 GetExtDataFromTensorProto External initializer: lm_head.MatMul.weight_Q4 offset: 4472451072 size to read: 307298304 given file_length: 4779151360 are out of bounds or can not be read in full.\n",
        c.RUNBOOK_MODEL_FILE_INVALID,
    ),
    # The CUDA runtime's cudaErrorInvalidDeviceFunction text as PyTorch raises it.
    (
        "RuntimeError: CUDA error: invalid device function\n",
        c.RUNBOOK_PLATFORM_UNSUPPORTED,
    ),
    # glibc's static TLS failure as a Python import raises it (keras-team/keras-tuner#317, Jetson TX2)
    # inside a Python model's load: a loader failure, not memory, not a missing module.
    (
        "E0101 00:00:00.000000 1 model_lifecycle.cc:1] failed to load 'preprocess' version 1: Internal: ImportError: /usr/lib/aarch64-linux-gnu/libgomp.so.1: cannot allocate memory in static TLS block\n",
        c.RUNBOOK_UNKNOWN_LOAD_FAILURE,
    ),
    # ... and as scikit-learn's traceback shows it (scikit-learn/scikit-learn#17231).
    (
        "Traceback (most recent call last):\n"
        '  File "/home/simon/.local/lib/python3.8/site-packages/sklearn/utils/_show_versions.py", line 12, in <module>\n'
        "    from ._openmp_helpers import _openmp_parallelism_enabled\n"
        "ImportError: /usr/lib/libgomp.so.1: cannot allocate memory in static TLS block\n",
        # (no model named: the class layer reads a library that cannot be loaded, the library page)
        c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
    ),
]


@pytest.mark.parametrize(("text", "runbook"), BELOW)
def test_below_the_backend(text: str, runbook: str) -> None:
    assert first(text)[0] == runbook


def test_static_tls_is_never_memory_exhaustion() -> None:
    for text, _runbook in BELOW[2:]:
        assert first(text)[0] != c.RUNBOOK_HOST_RESOURCE_EXHAUSTED
    # ... while ENOMEM itself still is.
    assert first("OSError: [Errno 12] Cannot allocate memory\n")[0] == c.RUNBOOK_HOST_RESOURCE_EXHAUSTED
