"""Issue 20: the model-format libraries' load errors in the frames users paste them in (diag41).

Each text of library_errors.yaml's ``onnxruntime``, ``pytorch``, ``tensorflow``, ``tensorrt`` and ``openvino``
groups is quoted the way Triton's backend hands it to core, read from the backends' sources:

- onnxruntime_backend's RETURN_IF_ORT_ERROR (src/onnxruntime_utils.h): ``onnx runtime error <code>:
  <message>``, the C API's message without the Python binding's ``[ONNXRuntimeError] : <code> : <NAME> :``
  head;
- pytorch_backend's LoadModel (src/pt/model_state.cc): ``failed to load model '<m>': <c10::Error what()>``,
  whose what() goes on with ``Exception raised from ...`` and the native frames;
- tensorflow_backend's RETURN_IF_TF_ERROR (mirror/tensorflow_backend_tf.cc): the status's message alone;
- tensorrt_backend's loader (src/loader.cc): ``unable to create TensorRT engine: <the logger's last error>``,
  after the logger's own E line (src/logging.cc), or autocomplete's ``unable to load plan file to auto
  complete config: <path>`` after it;
- openvino_backend's RETURN_IF_OPENVINO_ASSIGN_ERROR (src/openvino_utils.h): ``openvino error in reading model
  : <what()>``.

Core's closing line quotes it (JSON-escaped, the default since 24.06, and plain before), the model table's
status cell shows its first line, TensorFlow's loader states it on its INFO line, and a user who reproduced
outside Triton pastes the framework's Python exception. The first finding must be the table's page in each.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_diagnosis_cuda_errors import first_runbook

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.library_errors import LibraryError, library_errors
from triton_sre.diagnosis.logparse import parse_text

DOC = Path(__file__).resolve().parent.parent / "docs" / "framework-errors.md"
GROUPS = ("onnxruntime", "pytorch", "tensorflow", "tensorrt", "openvino")
TABLE = tuple(e for e in library_errors() if e.group in GROUPS)

CORE = "E1207 10:01:02.123456 1 model_lifecycle.cc:642] "
_ORT_HEAD = re.compile(r"^\[ONNXRuntimeError\] : (?P<code>\d+) : (?P<name>\w+) : ")
# onnxruntime/python/onnxruntime_pybind_exceptions.h: one exception class per OrtErrorCode.
_ORT_EXCEPTION = {
    "FAIL": "Fail",
    "INVALID_ARGUMENT": "InvalidArgument",
    "NO_SUCHFILE": "NoSuchFile",
    "RUNTIME_EXCEPTION": "RuntimeException",
    "INVALID_PROTOBUF": "InvalidProtobuf",
    "NOT_IMPLEMENTED": "NotImplemented",
    "INVALID_GRAPH": "InvalidGraph",
}
# A Python exception's own line (the onnx checker's): only ever pasted bare.
_PYTHON_ONLY = re.compile(r"^(?:[a-z_]\w*\.)+\w*(?:Error|Exception): ")
# Texts of a request, not of a load: the client reads them (and TensorRT's logger logs its own).
_AT_RUN = ("setInputShape", "Unexpected input data type", "PyTorch execute failure")
# TensorRT texts of the builder or of an execution context: never in the deserializer's frames.
_TRT_NOT_AT_LOAD = ("network.cpp::validate", *_AT_RUN)
# TensorFlow texts that are not a TensorFlow status (the backend's own, TensorRT Inference Server's config).
_TF_NOT_A_STATUS = re.compile(r"^unable to |config\.pbtxt")
NL = "\n"
NO_ENGINE = "'NoneType' object has no attribute 'create_execution_context'"
INVALID_NODE = (
    "onnx runtime error 10: Load model from /models/m/1/model.onnx failed:This is an invalid model. In Node, "
)


def backend_message(entry: LibraryError) -> str:
    """What the backend hands core as the load's status message."""
    text = entry.text
    if entry.group == "onnxruntime" and (head := _ORT_HEAD.match(text)):
        return f"onnx runtime error {head['code']}: {text[head.end() :]}"
    if entry.group == "pytorch":
        return (
            f"failed to load model 'm': {text}\nException raised from init at"
            " ../caffe2/serialize/inline_container.cc:187 (most recent call first):\nframe #0:"
            " c10::Error::Error(c10::SourceLocation, std::string) + 0x6c (0x7f3a5c1e2d0c in"
            " /opt/tritonserver/backends/pytorch/libc10.so)"
        )
    if entry.group == "tensorrt":
        return f"unable to create TensorRT engine: {text}"
    if entry.group == "openvino":
        return f"openvino error in reading model : {text}"
    return text


def python_paste(entry: LibraryError) -> str:
    """The framework's own failure as a user reproducing outside Triton pastes it."""
    traceback = (
        'Traceback (most recent call last):\n  File "/workspace/check.py", line 3, in <module>\n'
        "    model = load('/models/m/1')\n"
    )
    text = entry.text
    if entry.group == "tensorrt":
        # The Python API logs the error and returns None; deserialize_cuda_engine's caller then fails on
        # the engine it did not get (a builder's or a context's caller in ways of its own: the line alone).
        logged = f"[12/07/2026-10:01:02] [TRT] [E] {text}\n"
        if any(mark in text for mark in _TRT_NOT_AT_LOAD):
            return logged
        return f"{logged}{traceback}AttributeError: {NO_ENGINE}\n"
    if _PYTHON_ONLY.match(text):
        return f"{traceback}{text}\n"
    if entry.group == "onnxruntime" and (head := _ORT_HEAD.match(text)):
        name = _ORT_EXCEPTION[head["name"]]
        return f"{traceback}onnxruntime.capi.onnxruntime_pybind11_state.{name}: {text}\n"
    if entry.group == "tensorflow":
        return f"{traceback}tensorflow.python.framework.errors_impl.NotFoundError: {text}\n"
    return f"{traceback}RuntimeError: {text}\n"


def frames(entry: LibraryError) -> dict[str, str]:
    text = entry.text
    if any(mark in text for mark in _AT_RUN):
        message = backend_message(entry) if entry.group == "onnxruntime" else text
        shown = {"client": f"tritonclient.utils.InferenceServerException: [StatusCode.INTERNAL] {message}\n"}
        if entry.group == "tensorrt":
            shown["backend-line"] = f"E1207 10:01:02.100000 1 logging.cc:46] {text}\n"
        return shown
    shown = {"python": python_paste(entry)}
    if _PYTHON_ONLY.match(text):
        return shown
    if entry.group == "tensorrt":
        shown["backend-line"] = f"E1207 10:01:02.100000 1 logging.cc:46] {text}\n"
        if any(mark in text for mark in _TRT_NOT_AT_LOAD):
            return shown
        shown["autocomplete"] = (
            f"E1207 10:01:02.100000 1 logging.cc:46] {text}\n{CORE}failed to load 'm' version 1: Invalid"
            " argument: unable to load plan file to auto complete config: /models/m/1/model.plan\n"
        )
    if entry.group == "tensorflow" and not _TF_NOT_A_STATUS.search(text):
        shown["tf-loader"] = (
            "2026-12-07 10:01:02.000000: I tensorflow/cc/saved_model/loader.cc:318] SavedModel load for tags"
            f" {{ serve }}; Status: fail: {text}. Took 18236 microseconds.\n"
        )
    message = backend_message(entry)
    escaped = message.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    shown["core-escaped"] = f"{CORE}\"failed to load 'm' version 1: Internal: {escaped}\"\n"
    shown["core-plain"] = f"{CORE}failed to load 'm' version 1: Internal: {message}\n"
    shown["table"] = (
        "I1207 10:01:03.000000 1 server.cc:674]\n+-------+---------+--------+\n| Model | Version | Status |\n"
        f"+-------+---------+--------+\n| m     | 1       | UNAVAILABLE: Internal: {message.split(NL)[0]} |\n"
        "+-------+---------+--------+\n"
    )
    return shown


CASES = [
    pytest.param(entry, frame, log, id=f"{entry.group}-{i}-{frame}")
    for i, entry in enumerate(TABLE)
    for frame, log in frames(entry).items()
]


@pytest.mark.parametrize(("entry", "frame", "log"), CASES)
def test_framework_text_lands_on_its_page_in_every_frame(entry: LibraryError, frame: str, log: str) -> None:
    assert first_runbook(log) == entry.runbook, (frame, log)


def test_every_group_is_read_in_several_frames() -> None:
    assert {e.group for e in TABLE} == set(GROUPS)
    assert len(CASES) >= 4 * len(TABLE) - 10


@pytest.mark.parametrize(
    ("line", "page"),
    [
        # onnxruntime's graph check: a custom domain's op is an op library not loaded (the file needs it),
        # an ai.onnx op ("" domain) newer than the release is the release's.
        (
            INVALID_NODE
            + '("n", Resampler, "custom", -1) : ("x": tensor(float),) -> ("y",) , Error No Op registered'
            " for Resampler with domain_version of 1",
            c.RUNBOOK_MODEL_FILE_INVALID,
        ),
        (
            INVALID_NODE
            + '("n", GridSample, "", -1) : ("x": tensor(float),) -> ("y",) , Error No Op registered for'
            " GridSample with domain_version of 16",
            c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
        ),
        (
            INVALID_NODE + '("n", Gelu, "com.microsoft", -1) : ("x": tensor(float),) -> ("y",) , Error No Op'
            " registered for Gelu with domain_version of 1",
            c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
        ),
        # OpenVINO: an opset of a newer release is the release's; the extension opset, a library not loaded.
        (
            "openvino error in reading model : Cannot create Gelu layer /g id:7 from unsupported opset:"
            " opset7",
            c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
        ),
        # TensorRT 8.x's plugin wording inside core's closing line: no page, not another TensorRT.
        (
            "unable to create TensorRT engine: 3: getPluginCreator could not find plugin: EfficientNMS_TRT"
            " version: 1",
            c.RUNBOOK_UNKNOWN_LOAD_FAILURE,
        ),
    ],
)
def test_a_wording_reads_by_what_it_names(line: str, page: str) -> None:
    assert first_runbook(f"{CORE}failed to load 'm' version 1: Internal: {line}\n") == page


READY = (
    "I1207 10:01:03.000000 1 server.cc:674]\n+-------+---------+--------+\n| Model | Version | Status |\n"
    "+-------+---------+--------+\n| m     | 1       | READY  |\n+-------+---------+--------+\n"
)


@pytest.mark.parametrize(
    "line",
    [
        "2026-12-07 10:01:02.000000: I tensorflow/cc/saved_model/loader.cc:318] SavedModel load for tags"
        " { serve }; Status: success: OK. Took 95318 microseconds.",
        # ONNX Runtime's own log sink (ostream_sink.cc: "[<V|I|W|E|F>:onnxruntime:<logger id>,
        # <file>:<line> <function>]") at W: an old opset it still runs, an initializer among the inputs.
        "2026-12-07 10:01:02.000000000 [W:onnxruntime:, model_load_utils.h:46 ValidateOpsetForDomain] ONNX"
        " Runtime only *guarantees* support for models stamped with opset version 7 or above for opset domain"
        " 'ai.onnx'. Please upgrade your model to opset 7 or higher. For now, this opset 6 model may run"
        " depending upon legacy support of some older opset version operators.",
        "2026-12-07 10:01:02.000000000 [W:onnxruntime:, graph.cc:1283 Graph] Initializer onnx::Conv_123"
        " appears in graph inputs and will not be treated as constant value/weight.",
        "W1207 10:01:02.000000 1 logging.cc:46] Using an engine plan file across different models of devices"
        " is not recommended and is likely to affect performance or even cause errors.",
    ],
)
def test_a_framework_s_info_or_warning_on_a_healthy_start_raises_no_error(line: str) -> None:
    report = diagnose_events(parse_text(f"{line}\n{READY}"))
    assert [f.runbook for f in report.findings if f.severity in ("error", "critical")] == []


def test_onnxruntime_s_own_error_level_still_reads_as_a_failure() -> None:
    line = (
        "2026-12-07 10:01:02.000000000 [E:onnxruntime:, sequential_executor.cc:494 ExecuteKernel] Non-zero"
        " status code returned while running Conv node. Name:'/conv' Status Message: CUDA error"
        " cudaErrorNoKernelImageForDevice:no kernel image is available for execution on the device"
    )
    assert first_runbook(line + "\n") == c.RUNBOOK_PLATFORM_UNSUPPORTED


def code_cell(text: str) -> str:
    """A text as a Markdown table's code span (a backtick inside: the double-backtick form)."""
    text = text.replace("|", "\\|")
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def test_the_docs_table_lists_every_entry() -> None:
    rows = [line for line in DOC.read_text(encoding="utf-8").splitlines() if line.startswith("| `")]
    for entry in TABLE:
        row = next((r for r in rows if r.startswith(f"| {code_cell(entry.text)} |")), None)
        assert row is not None, entry.text
        assert f"[{entry.runbook}](" in row, row
    assert len(rows) == len(TABLE)


TRT7_PLUGIN_LOG = """\
I1207 10:01:01.000000 1 tensorrt.cc:231] TRITONBACKEND_ModelInitialize: m (version 1)
E1207 10:01:02.100000 1 logging.cc:43] INVALID_ARGUMENT: getPluginCreator could not find plugin \
InstanceNormalization_TRT version 1
E1207 10:01:02.100000 1 logging.cc:43] safeDeserializationUtils.cpp (322) - Serialization Error in load: 0 \
(Cannot deserialize plugin since corresponding IPluginCreator not found in Plugin Registry)
E1207 10:01:02.100000 1 logging.cc:43] INVALID_STATE: std::exception
E1207 10:01:02.100000 1 logging.cc:43] INVALID_CONFIG: Deserialize the cuda engine failed.
E1207 10:01:02.200000 1 model_repository_manager.cc:1186] failed to load 'm' version 1: Internal: unable to \
create TensorRT engine
"""

TRT10_AUTOCOMPLETE_LOG = """\
E1207 10:01:02.100000 1 logging.cc:46] IRuntime::deserializeCudaEngine: Error Code 1: Serialization \
(Serialization assertion stdVersionRead == kSERIALIZATION_VERSION failed.Version tag does not match. Note: \
Current Version: 240, Serialized Engine Version: 239)
E1207 10:01:02.200000 1 model_lifecycle.cc:654] "failed to load 'm' version 1: Invalid argument: unable to \
load plan file to auto complete config: /models/m/1/model.plan"
"""

TF_LOADER_LOG = """\
2026-12-07 10:01:02.000000: I tensorflow/cc/saved_model/reader.cc:45] Reading SavedModel from: \
/models/m/1/model.savedmodel
2026-12-07 10:01:02.100000: I tensorflow/cc/saved_model/loader.cc:318] SavedModel load for tags { serve }; \
Status: fail: NOT_FOUND: Unsuccessful TensorSliceReader constructor: Failed to find any matching files for \
/models/m/1/model.savedmodel/variables/variables. Took 18236 microseconds.
"""


@pytest.mark.parametrize(
    ("log", "page"),
    [
        # TensorRT 7's whole sequence for a plugin never loaded, closing with its deserializer's failure and
        # the 2.x backend's message without the logger's text: the plugin line decides (it read as a Triton
        # backend missing before, its words "plugin ... not found").
        (TRT7_PLUGIN_LOG, c.RUNBOOK_UNKNOWN_LOAD_FAILURE),
        # TensorRT 10's version tag before the backend's autocomplete gave up on the plan.
        (TRT10_AUTOCOMPLETE_LOG, c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE),
        # TensorFlow states the failed load on its INFO line only (a log cut before core's closing line).
        (TF_LOADER_LOG, c.RUNBOOK_MODEL_FILE_MISSING),
    ],
)
def test_a_whole_load_sequence_reads_its_cause_first(log: str, page: str) -> None:
    assert first_runbook(log) == page
