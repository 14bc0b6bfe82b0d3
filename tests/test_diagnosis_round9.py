"""Round 9 of issue 20: the classes behind heldout12's scored misses, from the sources that emit them.

heldout12 was scored once (tests/data/logs/SPLIT.md); its misses are development cases now. Each test
quotes the wording from a source other than the heldout12 paste (named in a comment), and the
heldout12 case that flipped is checked beside it.
"""

# ruff: noqa: E501 - quoted log lines are test data

from __future__ import annotations

import pytest
from test_diagnosis_round8 import _DRIVER_LINES, LOGS, diagnose, top

from triton_sre import conventions as c
from triton_sre.diagnosis.events import SOURCE_TABLE
from triton_sre.diagnosis.logparse import parse_text

# -- a model status table row cut before its leading border, a `|` inside its status cell -------------

# triton-inference-server/server#5197: core's status table (server.cc, TablePrinter: every row opens
# with "|"), here pasted from the model column on, as a paste sliced at the row's start shows it.
_CUT_ROWS = (
    "densenet_onnx      | 1       | UNAVAILABLE: Internal: unable to create stream: the provided PTX was compiled with an unsupported toolchain. |\n"
    "inception_graphdef | 1       | UNAVAILABLE: Not found: model configuration is not provided for model 'inception_graphdef'                   |\n"
    "+--------------------+---------+--------------------------------------------------------------------------------------------------------------+\n"
)


def test_a_row_without_its_leading_border_is_still_the_models_failure() -> None:
    rows = [e for e in parse_text(_CUT_ROWS) if e.source == SOURCE_TABLE]
    assert [(e.model, e.version) for e in rows] == [("densenet_onnx", "1"), ("inception_graphdef", "1")]
    assert rows[0].message.startswith("UNAVAILABLE: Internal: unable to create stream")
    report = diagnose(_CUT_ROWS)
    assert report.has_failure
    assert {f.model for f in report.findings} >= {"densenet_onnx", "inception_graphdef"}


# CPython's binary-operator error (Objects/abstract.c, binop_type_error: "unsupported operand type(s)
# for %.100s: '%.100s' and '%.100s'"), raised in a Python-backend model.py at import and shown by the
# stub's pybind11 "At:" frames; the table row's own "|" border and the "|" in the message both stay.
_PIPE_ROW = (
    "| add_sub | 1       | UNAVAILABLE: Internal: TypeError: unsupported operand type(s) for |: 'type' and 'NoneType' |\n"
    "|         |         |                                                                                         |\n"
    "|         |         | At:                                                                                     |\n"
    "|         |         |   /models/add_sub/1/model.py(12): <module>                                              |\n"
)


def test_a_pipe_inside_the_status_cell_keeps_the_whole_message() -> None:
    row = next(e for e in parse_text(_PIPE_ROW) if e.source == SOURCE_TABLE)
    assert row.model == "add_sub" and "for |: 'type' and 'NoneType'" in row.message
    assert top(_PIPE_ROW)[0] == c.RUNBOOK_PYTHON_MODEL_ERROR


def test_the_models_own_model_py_path_is_context_not_a_cause() -> None:
    # The frame's path names where the model lives (TensorRT-LLM's inflight_batcher_llm layout); the
    # exception line decides: the model's Python code raised.
    text = (
        "E0101 00:00:00.000000 1 model_lifecycle.cc:626] failed to load 'preprocessing' version 1: Internal: "
        "TypeError: unsupported operand type(s) for |: 'type' and 'type'\n\nAt:\n"
        "  /models/inflight_batcher_llm/preprocessing/1/model.py(35): <module>\n"
    )
    assert top(text)[0] == c.RUNBOOK_PYTHON_MODEL_ERROR


def test_heldout12_cut_table_row_flips() -> None:
    text = (LOGS / "heldout12" / "tensorrt-llm-571.log").read_text()
    runbook, _severity, quoted = top(text)
    assert runbook == c.RUNBOOK_PYTHON_MODEL_ERROR and "unsupported operand" in quoted


# -- KServe's controller choosing a serving runtime (pkg/controller/.../components/predictor.go) -------


@pytest.mark.parametrize(
    "line",
    [
        # kserve/kserve#4298: the InferenceService's event when no runtime serves the model format.
        "No runtime found to support predictor with model type: statsmodels",
        # kserve/kserve#2372 (the title, as the controller formats it): "no runtime found to support
        # predictor with model type: %v".
        "no runtime found to support predictor with model type: {sklearn <nil>}",
        # predictor.go's errors for a runtime named in the spec: fmt.Errorf("specified runtime %s is
        # disabled") and ("specified runtime %s does not support specified framework/version").
        "specified runtime kserve-tritonserver is disabled",
        "specified runtime kserve-tritonserver does not support specified framework/version",
    ],
)
def test_kserve_runtime_selection_errors_are_failures(line: str) -> None:
    runbook, severity, quoted = top(line + "\n")
    assert (runbook, severity) == (c.RUNBOOK_UNKNOWN_LOAD_FAILURE, c.IMPACT_CRITICAL)
    assert quoted == line


def test_heldout12_kserve_missing_runtime_flips() -> None:
    text = (LOGS / "heldout12" / "kserve-2143.log").read_text()
    runbook, _severity, quoted = top(text)
    assert runbook == c.RUNBOOK_UNKNOWN_LOAD_FAILURE
    assert quoted.startswith("No ServingRuntimes or ClusterServingRuntimes with the name: ")


# -- an in-process Triton that cannot stat its repository: server creation, not a model's file -------

# DeepStream's gst-nvinferserver (infer_trtis_server.cpp) wraps TRITONSERVER_ServerNew as
# RETURN_TRTIS_ERROR(..., "failed to create repo server"), printed by InferError as "ERROR: <file>:<line>
# Triton: <msg>, triton_err_str:<code>, err_msg:<core's message>"; core's message for a repository that
# does not exist is "failed to stat file <path>" (server#1931, server#4376 show it after "error: creating
# server"). ROS 2 launch prefixes each process's lines with "[<executable>-<n>] ".
_DEEPSTREAM = (
    "I0101 10:00:00.000000 4242 server.cc:261] No server context available. Exiting immediately.\n"
    "ERROR: infer_trtis_server.cpp:994 Triton: failed to create repo server, triton_err_str:Internal, "
    "err_msg:failed to stat file /opt/nvidia/deepstream/samples/triton_model_repo\n"
    "ERROR: infer_trtis_server.cpp:1224 NvDsTritonServerInit failed to get global triton instance\n"
)


@pytest.mark.parametrize("prefix", ["", "[component_container_mt-2] "])
def test_server_creation_failing_to_stat_is_the_repository_path(prefix: str) -> None:
    text = "".join(prefix + line + "\n" for line in _DEEPSTREAM.splitlines())
    runbook, severity, quoted = top(text)
    assert (runbook, severity) == (c.RUNBOOK_REPOSITORY_PATH_INVALID, c.IMPACT_CRITICAL)
    assert "failed to stat file /opt/nvidia" in quoted


def test_a_models_file_failing_to_stat_stays_model_file_missing() -> None:
    # core's inventory entry core-failed-to-stat: the same message about a model's file.
    text = "E0101 10:00:00.000000 1 model_lifecycle.cc:626] failed to load 'ranker' version 2: Internal: failed to stat file /models/ranker/2/model.pt\n"
    assert top(text)[0] == c.RUNBOOK_MODEL_FILE_MISSING


def test_ros_launch_prefix_is_peeled_from_a_glog_line() -> None:
    events = parse_text(
        "[component_container_mt-2] E0101 10:00:00.000000 1 model_lifecycle.cc:626] failed to load 'm'\n"
    )
    assert events[0].level == "E" and events[0].message == "failed to load 'm'"


def test_heldout12_isaac_ros_repository_flips() -> None:
    text = (LOGS / "heldout12" / "isaac-ros-dnn-inference-35.log").read_text()
    runbook, _severity, quoted = top(text)
    assert runbook == c.RUNBOOK_REPOSITORY_PATH_INVALID and "failed to stat file /tmp/models" in quoted


# -- BuildKit cannot resolve a Dockerfile's base image in its registry (image-pull-failed) -------------


@pytest.mark.parametrize(
    "text",
    [
        # smithmicro/n7m#24: `docker compose build`, the service's name inside the vertex's brackets.
        " => ERROR [ui internal] load metadata for docker.io/library/nginx:1.27-a  10.0s\n"
        " => ERROR [gis internal] load metadata for docker.io/postgis/postgis:15-  10.0s\n",
        # zhaarey/wrapper#33: `docker build`, the final line BuildKit prints.
        "ERROR: failed to solve: builder: failed to resolve source metadata for docker.io/library/builder:latest: "
        "pull access denied, repository does not exist or may require authorization: server message: "
        "insufficient_scope: authorization failed\n",
    ],
)
def test_buildkit_base_image_resolution_is_image_pull_failed(text: str) -> None:
    runbook, severity, quoted = top(text)
    assert (runbook, severity) == (c.RUNBOOK_IMAGE_PULL_FAILED, c.IMPACT_CRITICAL)
    assert "metadata for docker.io/" in quoted


def test_a_shell_prompt_is_what_was_run_not_an_unfilled_template() -> None:
    # bash's default prompt and Debian's, a shell variable in the command: the user's own expansion.
    for prompt in ("[user@gpu-host repo]$ ", "user@gpu-host:~/repo$ ", "$ "):
        text = prompt + "docker run --rm -v ${MODEL_DIR}:/models nvcr.io/nvidia/tritonserver:24.08-py3\n"
        assert diagnose(text).findings == (), prompt
    # ... while a placeholder in a config line is still an unfinished config.
    assert top("E0101 10:00:00.000000 1 model_config_utils.cc:680] backend: ${triton_backend}\n")[0] == (
        c.RUNBOOK_CONFIG_PARSE_ERROR
    )


def test_heldout12_isaac_ros_base_image_flips() -> None:
    text = (LOGS / "heldout12" / "isaac-ros-pose-estimation-63.log").read_text()
    runbook, _severity, quoted = top(text)
    assert runbook == c.RUNBOOK_IMAGE_PULL_FAILED and "nvcr.io/nvidia/tritonserver:24.08-py3" in quoted


# -- core refusing every GPU id after CUDA found the driver insufficient (cuda-driver-mismatch) --------


# core's instance-group check (src/model_config_utils.cc, ValidateInstanceGroup): "instance group <g> of
# model <m> specifies invalid or unsupported gpu id <n>. GPUs with at least the minimum required CUDA
# compute compatibility of <cc> are: <ids>" (TRTIS-era: "... gpu id of <n>. The minimum required CUDA
# compute compatibility is <cc>"); the driver lines are the project's own real Triton capture
# (tests/data/logs/real/, as in round 8). The empty GPU list says CUDA saw no usable GPU at all.
def _refused(model: str, wording: str) -> str:
    return f"E1129 17:08:03.000000 14707 model_repository_manager.cc:1890] Poll failed for model directory '{model}': {wording}"


@pytest.mark.parametrize(
    "wording",
    [
        "instance group densenet_0 of model densenet specifies invalid or unsupported gpu id 0. GPUs with at "
        "least the minimum required CUDA compute compatibility of 6.000000 are: ",
        "instance group densenet_0 of model densenet specifies invalid or unsupported gpu id of 0. The minimum "
        "required CUDA compute compatibility is 6.000000",
    ],
)
def test_every_gpu_id_refused_after_the_driver_warning_is_the_driver(wording: str) -> None:
    text = "\n".join([*_DRIVER_LINES, _refused("densenet", wording)])
    runbook, severity, quoted = top(text)
    assert (runbook, severity) == (c.RUNBOOK_CUDA_DRIVER_MISMATCH, c.IMPACT_CRITICAL)
    assert "insufficient" in quoted


def test_a_cpu_model_failing_for_its_own_reason_is_not_the_driver() -> None:
    # A CPU server (the driver warning on every CPU host) whose model fails for a reason of its own.
    text = "\n".join(
        [
            *_DRIVER_LINES,
            "E1129 17:08:03.000000 14707 model_lifecycle.cc:626] failed to load 'ranker' version 2: Internal: "
            "failed to stat file /models/ranker/2/model.pt",
        ]
    )
    assert top(text)[0] == c.RUNBOOK_MODEL_FILE_MISSING


def test_heldout12_fastdeploy_driver_flips() -> None:
    text = (LOGS / "heldout12" / "fastdeploy-1774.log").read_text()
    runbook, _severity, quoted = top(text)
    assert runbook == c.RUNBOOK_CUDA_DRIVER_MISMATCH and "insufficient" in quoted


# -- ONNX Runtime cannot load a model's custom-op library (library-version-mismatch) -------------------


@pytest.mark.parametrize(
    "text",
    [
        # ONNX Runtime's C API (onnxruntime_c_api.cc, RegisterCustomOpsLibrary): the library has no
        # RegisterCustomOps entry point, as Triton's ONNX Runtime backend quotes an OrtStatus
        # ("onnx runtime error <code>: <msg>", onnxruntime_backend src/onnxruntime_utils.h).
        "E1102 10:00:00.000000 1 model_lifecycle.cc:626] failed to load 'detector' version 1: Internal: "
        "onnx runtime error 1: RegisterCustomOpsLibrary: Entry point RegisterCustomOps not found in library\n",
        # open-mmlab/mmcv#2509 (microsoft/onnxruntime#14065): a newer ONNX Runtime names dlopen's reason,
        # an mmcv op library built for ONNX Runtime 1.12.1.
        "Fail: [ONNXRuntimeError] : 1 : FAIL : Failed to load library /fullpath_to_project/mmcv/mmcv/"
        "_ext_ort.cpython-39-x86_64-linux-gnu.so with error: libonnxruntime.so.1.12.1: cannot open shared "
        "object file: No such file or directory\n",
    ],
)
def test_an_onnx_runtime_custom_op_library_that_cannot_load(text: str) -> None:
    runbook, severity, _quoted = top(text)
    assert (runbook, severity) == (c.RUNBOOK_LIBRARY_VERSION_MISMATCH, c.IMPACT_CRITICAL)


def test_heldout12_onnxruntime_custom_ops_flips() -> None:
    text = (LOGS / "heldout12" / "onnxruntime-18243.log").read_text()
    runbook, _severity, quoted = top(text)
    assert runbook == c.RUNBOOK_LIBRARY_VERSION_MISMATCH and "RegisterCustomOpsLibrary" in quoted
