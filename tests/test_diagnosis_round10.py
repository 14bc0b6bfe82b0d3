"""Round 10 of issue 20: the classes behind heldout13's scored misses, from the sources that emit them.

heldout13 was scored once (tests/data/logs/SPLIT.md); its misses are development cases now. Each test
quotes the wording from a source other than the heldout13 paste (named in a comment), and the
heldout13 case that flipped is checked beside it.
"""

# ruff: noqa: E501 - quoted log lines are test data

from __future__ import annotations

import pytest
from test_diagnosis_round8 import LOGS, diagnose, top

from triton_sre import conventions as c
from triton_sre.diagnosis.classes import cause_class
from triton_sre.diagnosis.config_dump import is_config_line
from triton_sre.diagnosis.severity import is_failure_line


def _heldout13(name: str) -> str:
    return (LOGS / "heldout13" / f"{name}.log").read_text()


# -- 1. a configuration echoed in a config dump is not an event ------------------------------------------

# The python_backend README ("Creating Custom Execution Environments"): the EXECUTION_ENV_PATH parameter
# as users write it in config.pbtxt, here echoed after core's verbose "Server side auto-completed config:"
# line (model_config_utils.cc) the way the server prints a config it accepted, in its DebugString form
# (no commas) and in the README's own form.
_DUMP_DEBUGSTRING = """I0101 00:00:00.000000 1 model_config_utils.cc:645] Server side auto-completed config: name: "model_a"
max_batch_size: 0
backend: "python"
parameters {
  key: "EXECUTION_ENV_PATH"
  value {
    string_value: "/home/iman/miniconda3/envs/python-3-6/python3.6.tar.gz"
  }
}
instance_group {
  kind: KIND_CPU
}
I0101 00:00:00.000100 1 model_lifecycle.cc:428] AsyncLoad() 'model_a'
I0101 00:00:00.000200 1 python_be.cc:1523] 'python' TRITONBACKEND API version: 1.10
"""
_DUMP_README = """I0101 00:00:00.000000 1 model_config_utils.cc:645] Server side auto-completed config: name: "model_a"
backend: "python"
parameters: {
  key: "EXECUTION_ENV_PATH",
  value: {string_value: "/home/iman/miniconda3/envs/python-3-6/python3.6.tar.gz"}
}
I0101 00:00:00.000100 1 model_lifecycle.cc:428] AsyncLoad() 'model_a'
"""


@pytest.mark.parametrize("text", [_DUMP_DEBUGSTRING, _DUMP_README])
def test_a_config_key_echoed_in_a_dump_is_no_failure(text: str) -> None:
    report = diagnose(text)
    assert not report.has_failure
    assert report.findings == ()


def test_a_failure_after_the_dump_still_decides() -> None:
    # The same dump, then the model's load failing on an import: the E line decides, the dump does not hide it.
    text = _DUMP_DEBUGSTRING + (
        "E0101 00:00:00.000300 1 model_lifecycle.cc:626] failed to load 'model_a' version 1: Internal: "
        "ModuleNotFoundError: No module named 'numpy'\n"
    )
    assert top(text)[0] == c.RUNBOOK_PYTHON_MODULE_MISSING


@pytest.mark.parametrize(
    ("line", "config"),
    [
        ('  key: "EXECUTION_ENV_PATH"', True),
        ('  key: "EXECUTION_ENV_PATH",', True),
        ('  value: {string_value: "$$TRITON_MODEL_DIRECTORY/env.tar.gz"}', True),
        ("  kind: KIND_GPU", True),
        ("  dims: -1", True),
        ('  "default-max-batch-size": "4",', True),
        ("}", True),
        # A sentence after a colon is not one scalar; a report key is not a setting; a line its own
        # format marks as a failure stays an event (a YAML pod status).
        ("ImportError: No module named 'numpy'", False),
        ('  message: "failed to load model"', False),
        ("      reason: CrashLoopBackOff", False),
    ],
)
def test_config_line_shape(line: str, config: bool) -> None:
    assert is_config_line(line) is config


def test_heldout13_modelmesh_config_listing_is_not_flagged() -> None:
    assert not diagnose(_heldout13("healthy-modelmesh-serving-78")).has_failure


# -- 2a. a command the shell or the container runtime cannot find -----------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        # triton-inference-server/server#3161: the 20.03 image's entrypoint exec'ing a binary it does not
        # have (bash's exec builtin in a script).
        "/opt/tensorrtserver/nvidia_entrypoint.sh: line 92: exec: tritonserver: not found",
        # fbsobreira/gotron-sdk#5: bash's interactive wording.
        "bash: tronclt: command not found",
        # dash's and busybox ash's wording (dash src/exec.c "%s: not found" after "sh: <lineno>: ";
        # busybox shell/ash.c "%s: not found"), zsh's (Src/exec.c "command not found: %s").
        "sh: 1: tritonserver: not found",
        "sh: tritonserver: not found",
        "zsh: command not found: tritonserver",
        # Go os/exec ErrNotFound as runc and Docker quote it when the image has no such command.
        'docker: Error response from daemon: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "tritonserver": executable file not found in $PATH: unknown.',
    ],
)
def test_command_not_found_is_a_failure_no_page_covers(line: str) -> None:
    assert is_failure_line(line)
    # Not a model file missing: the image lacks the command (no page covers that, the fallback says so).
    assert cause_class(line) == c.RUNBOOK_UNKNOWN_LOAD_FAILURE
    runbook, _severity, quote = top(f"root@c0ffee:/# tritonserver --model-repository=/models\n{line}\n")
    assert (runbook, quote) == (c.RUNBOOK_UNKNOWN_LOAD_FAILURE, line[: len(quote)])


def test_a_file_not_found_is_still_a_missing_file() -> None:
    assert cause_class("E: model file not found") == c.RUNBOOK_MODEL_FILE_MISSING
    assert not is_failure_line("Error: /m/config.pbtxt: not found")


def test_heldout13_merlin_command_not_found_flips() -> None:
    runbook, _severity, quote = top(_heldout13("merlin-142"))
    assert (runbook, quote) == (c.RUNBOOK_UNKNOWN_LOAD_FAILURE, "bash: tritonserver: command not found")


# -- 2b. TensorRT's deserialization step, whatever the suffix -----------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        # HKUST-Aerial-Robotics/D2SLAM#52 (title): the British spelling.
        "Unable to deserialise TRT engine",
        # NVIDIA/TensorRT#2874: polygraphy's exception.
        "polygraphy.exception.exception.PolygraphyException: Could not deserialize engine.",
        # laugh12321/TensorRT-YOLO#2: TensorRT's runtime.cpp wording.
        "[01/30/2024-10:28:15] [TRT] [E] 4: [runtime.cpp::nvinfer1::Runtime::deserializeCudaEngine::50] Error Code 4: Internal Error (Engine deserialization failed.)",
        "Deserialisation of the engine failed",
    ],
)
def test_engine_deserialization_stem(text: str) -> None:
    assert top(text)[0] == c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE


def test_a_deserialized_engine_is_no_failure() -> None:
    # NVIDIA/TensorRT#4372: trtexec loading the same engine fine.
    text = "[02/28/2025-19:02:12] [I] Engine deserialized in 0.171571 sec.\n"
    assert not diagnose(text).has_failure


def test_heldout13_ultralytics_misspelled_deserialization_flips() -> None:
    assert top(_heldout13("ultralytics-3088"))[0] == c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE


# -- 2c. a Pending pod: a failure signal; KServe's storage initializer waiting on a cloud fetch -------------

# kserve/kserve#817 ("Issue with model downloading from Google Storage when model is in subdirectory"):
# `kubectl describe pod` of a predictor whose storage-initializer fetches from gs:// (the pre-0.7
# serving.kubeflow.org annotation), the pod Pending.
_KSERVE_817 = """Annotations:    autoscaling.knative.dev/class: kpa.autoscaling.knative.dev
                autoscaling.knative.dev/target: 1
                internal.serving.kubeflow.org/storage-initializer-sourceuri: gs://ai-inferencing/models/resnet50-tf-fp32
                queue.sidecar.serving.knative.dev/resourcePercentage: 0.2
                serving.knative.dev/creator: system:serviceaccount:kubeflow:default
                traffic.sidecar.istio.io/includeOutboundIPRanges: *
Status:         Pending
IP:             10.8.1.91
IPs:            <none>
Controlled By:  ReplicaSet/resnet50-tf-fp32-predictor-default-5x7qv-deployment-66cd8b97cc
Init Containers:
  storage-initializer:
    Container ID:  docker://5e9e492a9e899b4d29ac128c2b5815353372f8892f710ddef18bed20b2ff9107
    Image:         gcr.io/kfserving/storage-initializer:0.2.2
"""


def test_a_pending_predictor_waiting_on_its_cloud_storage_initializer() -> None:
    runbook, _severity, quote = top(_KSERVE_817)
    assert runbook == c.RUNBOOK_CLOUD_REPOSITORY_ACCESS
    assert quote.startswith("Status:") and quote.endswith("Pending")


def test_a_scheduling_failure_outranks_the_storage_initializer() -> None:
    events = (
        "Events:\n  Type     Reason            Age   From               Message\n"
        "  ----     ------            ----  ----               -------\n"
        "  Warning  FailedScheduling  10s   default-scheduler  0/3 nodes are available: 3 Insufficient nvidia.com/gpu.\n"
    )
    assert top(_KSERVE_817 + events)[0] == c.RUNBOOK_POD_UNSCHEDULABLE


def test_a_running_predictor_is_no_failure() -> None:
    assert not diagnose(_KSERVE_817.replace("Pending", "Running")).has_failure


@pytest.mark.parametrize(
    "text",
    [
        # `kubectl describe pod` of a pod whose containers never started, no event pasted.
        "Name:         triton-0\nNamespace:    default\nStatus:       Pending\nIP:           \n",
        # `kubectl get pods` (kubectl's table printer: READY ready/total, STATUS the phase).
        "NAME        READY   STATUS    RESTARTS   AGE\ntriton-0    0/1     Pending   0          12m\n",
    ],
)
def test_a_pending_pod_alone_is_never_empty(text: str) -> None:
    runbook, _severity, quote = top(text)
    assert runbook == c.RUNBOOK_UNKNOWN_LOAD_FAILURE and "Pending" in quote


def test_heldout13_kserve_pending_predictor_flips() -> None:
    assert top(_heldout13("kserve-4192"))[0] == c.RUNBOOK_CLOUD_REPOSITORY_ACCESS


# -- 3. core's own wording, read from core's source ----------------------------------------------------------


def test_failed_to_stat_in_the_backend_directory_is_a_missing_backend() -> None:
    # core backend_model.cc GetBackendLibraryProperties: a backend library not found sends core to
    # <backend-dir>/python (the Python-based backend fallback); a build without it fails to stat that.
    row = (
        "| resnet50_pt | 1 | UNAVAILABLE: Internal: failed to stat file /opt/tritonserver/backends/python |\n"
    )
    assert top(row)[0] == c.RUNBOOK_BACKEND_NOT_FOUND
    # A model's own file is still the model's.
    text = "E0101 00:00:00.000000 1 model_lifecycle.cc:626] failed to load 'ranker' version 2: Internal: failed to stat file /models/ranker/2/model.pt\n"
    assert top(text)[0] == c.RUNBOOK_MODEL_FILE_MISSING


def test_backend_undetermined_is_the_model_file_not_where_triton_looks() -> None:
    # core model_config_utils.cc (r22.08 on): no backend/platform/default_model_filename in the config and
    # no default-named model file in the version directory; a repository folder that is not a model (a
    # tokenizer or weights folder beside the models) says the same.
    text = (
        "E0101 00:00:00.000000 1 model_repository_manager.cc:1245] Poll failed for model directory 'tokenizer': "
        "Invalid model name: Could not determine backend for model 'tokenizer' with no backend in model "
        "configuration. Expected model name of the form 'model.<backend_name>'.\n"
    )
    assert top(text)[0] == c.RUNBOOK_MODEL_FILE_MISSING


@pytest.mark.parametrize(
    ("name", "runbook"),
    [
        ("amdmigraphx-2411", c.RUNBOOK_BACKEND_NOT_FOUND),
        ("fastertransformer-506", c.RUNBOOK_MODEL_FILE_MISSING),
    ],
)
def test_heldout13_core_wording_flips(name: str, runbook: str) -> None:
    assert top(_heldout13(name))[0] == runbook
