"""Issue 20 item 1: the libraries below Triton in their own words (`library_errors.library_errors()`).

Each real text is wrapped the three ways it reaches a log: quoted by core's load failure (the JSON-escaped
form, default since 24.06), on the backend's own glog E line (unescaped), and bare (the process printing the
library's text). The first finding must be the table's page.
"""

from __future__ import annotations

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.library_errors import LibraryError, library_errors, parse_table
from triton_sre.diagnosis.logparse import parse_text

# The backend source file that logs each library's errors on its own line.
BACKEND_FILE = {
    "cuda": "backend_model_instance.cc:72",
    "cublas": "libtorch.cc:1874",
    "cudnn": "libtorch.cc:1874",
    "nccl": "model.cc:418",
    "tensorrt": "logging.cc:49",
    "onnxruntime": "onnxruntime.cc:2843",
    "pytorch": "libtorch.cc:2407",
    "tensorflow": "tensorflow.cc:2392",
    "openvino": "openvino.cc:1339",
    "dali": "dali_model_instance.cc:94",
    "grpc": "grpc_server.cc:310",
    "python": "pb_stub.cc:330",
    # vllm_backend src/model.py logs the engine's exception through pb_utils.Logger (its own file and line).
    "vllm": "model.py:246",
    # tensorrtllm_backend inflight_batcher_llm/src/model_instance_state.cc builds the executor.
    "tensorrt_llm": "model_instance_state.cc:551",
    # A Python model (its model.py) loading with transformers: the stub logs the exception.
    "transformers": "pb_stub.cc:330",
    # pynvml raising in a Python model's import (tensorrt_llm and vllm call nvmlInit): the stub logs it.
    "nvml": "pb_stub.cc:330",
}
WRAPS = ("core", "backend", "bare")


def wrap(entry: LibraryError, how: str) -> str:
    if how == "core":
        quoted = entry.text.replace("\\", "\\\\").replace('"', '\\"')
        return (
            "E1202 05:01:02.123456 1 model_lifecycle.cc:642] \"failed to load 'm' version 1: Internal: "
            f'{quoted}"\n'
        )
    if how == "backend":
        return f"E1202 05:01:02.100000 1 {BACKEND_FILE[entry.group]}] {entry.text}\n"
    return f"{entry.text}\n"


def first_runbook(text: str) -> str:
    report = diagnose_events(parse_text(text))
    return report.findings[0].runbook if report.findings else "(no finding)"


CASES = [
    pytest.param(entry, how, id=f"{entry.group}-{i}-{how}")
    for i, entry in enumerate(library_errors())
    for how in WRAPS
]


@pytest.mark.parametrize(("entry", "how"), CASES)
def test_library_text_lands_on_its_page(entry: LibraryError, how: str) -> None:
    assert first_runbook(wrap(entry, how)) == entry.runbook


def test_every_group_has_a_backend_file() -> None:
    assert {e.group for e in library_errors()} == set(BACKEND_FILE)


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("- a list\n", "'entries' list"),
        (
            "entries:\n  - {group: cuda, text: x, runbook: cuda-driver-mismatch}\n",
            "entry 0 must have exactly",
        ),
        ("entries:\n  - {group: cuda, text: '', runbook: cuda-driver-mismatch, source: s}\n", "non-empty"),
        ("entries:\n  - {group: cuda, text: x, runbook: no-such-page, source: s}\n", "unknown runbook"),
        # CUDA's table fields come together or not at all.
        (
            "entries:\n  - {group: cuda, text: x, runbook: cuda-driver-mismatch, source: s, enum: e}\n",
            "entry 0 must have exactly",
        ),
    ],
)
def test_a_malformed_table_is_a_clear_error(text: str, complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        parse_table(text)


READY = """I1202 05:01:03.000000 1 server.cc:674]
+-------+---------+--------+
| Model | Version | Status |
+-------+---------+--------+
| m     | 1       | READY  |
+-------+---------+--------+
I1202 05:01:03.100000 1 grpc_server.cc:2463] Started GRPCInferenceService at 0.0.0.0:8001
"""


@pytest.mark.parametrize(
    "line",
    [
        # NCCL's INFO level on every healthy multi-GPU start (no network plugin: the internal one is used).
        "triton-0:1:1 [0] NCCL INFO NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file:"
        " No such file or directory No plugin found (libnccl-net.so), using internal implementation",
        "triton-0:1:1 [0] NCCL INFO cudaDriverVersion 12020",
        # A status name in a library's warning is not a failure.
        "[TensorRT-LLM][WARNING] Fail to get CUBLAS_STATUS_NOT_SUPPORTED workspace",
        # numpy's ABI warning logged at W by the stub: a warning, not a failure, while the model is READY.
        "W1202 05:01:02.000000 1 pb_stub.cc:300] A module that was compiled using NumPy 1.x cannot be run in"
        " NumPy 2.0.2 as it may crash.",
        "[12/02/2026-05:01:02] [TRT] [W] CUDA lazy loading is not enabled.",
        # TensorFlow's own logging format, W level: every CPU host's missing CUDA library.
        "2026-12-02 05:01:02.000000: W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could"
        " not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object"
        " file: No such file or directory",
    ],
)
def test_library_info_and_warnings_on_a_healthy_start_raise_no_error(line: str) -> None:
    report = diagnose_events(parse_text(f"{line}\n{READY}"))
    assert [f.runbook for f in report.findings if f.severity in ("error", "critical")] == []


def test_tensorflow_log_format_reads_its_level() -> None:
    """TensorFlow's own format (tsl logging.cc) is a log line with a level: its E line is a failure."""
    line = (
        "2026-12-02 05:01:02.000000: E tensorflow/core/grappler/optimizers/meta_optimizer.cc:954] Op type not"
        " registered 'Addons>Resampler' in binary running on triton-0. Make sure the Op and Kernel are"
        " registered in the binary running in this process."
    )
    events = parse_text(line + "\n")
    assert [(e.level, e.source) for e in events] == [
        ("E", "tensorflow/core/grappler/optimizers/meta_optimizer.cc:954")
    ]
    assert first_runbook(line + "\n") == c.RUNBOOK_LIBRARY_VERSION_MISMATCH
