"""heldout74's misses fixed by class from the wordings' sources (the set itself is scored in
test_diagnosis_accuracy.py; these tests quote each wording as its source prints it, in other frames).

- TensorRT's Myelin graphs keep the cuDNN/cuBLAS release they were compiled against
  (``[graphContext.h::MyelinGraphContext::24] Error Code 1: Myelin (Compiled against cuDNN X but running
  against cuDNN Y.)``): the plan was built in another image than the server's (trt-engine-incompatible).
- TorchScript's schema matching (torch/csrc/jit/frontend/schema_matching.cpp, ``Arguments for call are not
  valid.`` / ``The following variants are available:``) at load: the archive calls an operator with arguments
  no schema of the backend's libtorch takes, saved by another PyTorch (library-version-mismatch).
- ONNX Runtime before the domain was printed (``Fatal error: <op> is not a registered function/op``) names a
  TensorRT plugin op by the plugin's own name (``<Name>_TRT``): a custom op, as ``TRT:EfficientNMS_TRT(-1)``
  is in later releases (model-file-invalid); an op named otherwise says nothing either way.
- A backend's own check of its tensors' names (TRTIS's custom ``addsub`` example: ``model outputs must be
  named 'OUTPUT0' and 'OUTPUT1'``): tensor-name-mismatch.
"""

from __future__ import annotations

import pytest

from triton_sre.conventions import (
    RUNBOOK_LIBRARY_VERSION_MISMATCH,
    RUNBOOK_MODEL_FILE_INVALID,
    RUNBOOK_TENSOR_NAME_MISMATCH,
    RUNBOOK_TRT_ENGINE_INCOMPATIBLE,
)
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text


def _first(text: str) -> str | None:
    findings = diagnose_events(parse_text(text + "\n")).findings
    return findings[0].runbook if findings else None


@pytest.mark.parametrize(
    "text",
    [
        "E0601 10:00:00.000000 1 logging.cc:43] 1: [graphContext.h::MyelinGraphContext::24] Error Code 1: "
        "Myelin (Compiled against cuDNN 8.9.2.0 but running against cuDNN 8.6.0.0.)",
        "[TRT] [E] 1: [graphContext.h::MyelinGraphContext::24] Error Code 1: Myelin (Compiled against "
        "cuBLASLt 11.11.3.0 but running against cuBLASLt 11.8.1.0.)",
    ],
)
def test_a_myelin_graph_built_against_another_cudnn_is_an_engine_from_another_image(text: str) -> None:
    assert _first(text) == RUNBOOK_TRT_ENGINE_INCOMPATIBLE


def test_torchscript_calling_an_op_no_schema_takes_is_another_pytorch() -> None:
    log = "\n".join(
        [
            "E0921 17:03:26.391509 1 model_lifecycle.cc:621] failed to load 'encoder' version 1: Internal: "
            "failed to load model 'encoder': ",
            "Arguments for call are not valid.",
            "The following variants are available:",
            "  ",
            "  aten::layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, "
            "Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True) -> (Tensor):",
            "  Expected at most 6 arguments but found 7 positional arguments.",
        ]
    )
    assert _first(log) == RUNBOOK_LIBRARY_VERSION_MISMATCH
    escaped = (
        "E0921 17:03:26.391509 1 model_lifecycle.cc:621] \"failed to load 'encoder' version 1: Internal: "
        "failed to load model 'encoder': \\nArguments for call are not valid.\\nThe following variants are "
        'available:\\n  \\n  aten::gelu(Tensor self, str approximate="none") -> (Tensor):\\n"'
    )
    assert _first(escaped) == RUNBOOK_LIBRARY_VERSION_MISMATCH


@pytest.mark.parametrize("which", ["inputs", "outputs"])
def test_a_backend_requiring_its_tensor_names(which: str) -> None:
    line = (
        "E0510 08:34:22.755094 1000 dynamic_batch_scheduler.cc:162] Initialization failed for dynamic-batch "
        f"scheduler thread 0: initialize error for 'add_sub': (6) model {which} must be named 'A' and 'B'"
    )
    assert _first(line) == RUNBOOK_TENSOR_NAME_MISMATCH


@pytest.mark.parametrize(
    "text",
    [
        "Fatal error: EfficientNMS_TRT is not a registered function/op",
        "E0707 01:02:03.000000 1 model_lifecycle.cc:621] failed to load 'yolo' version 1: Internal: onnx "
        "runtime error 1: Load model from /models/y/1/model.onnx failed:Fatal error: BatchedNMSDynamic_TRT "
        "is not a registered function/op",
        "Load model from m.onnx failed:Fatal error: TRT:EfficientNMS_TRT(-1) is not a registered function/op",
    ],
)
def test_a_tensorrt_plugin_op_in_an_onnx_file_is_a_custom_op(text: str) -> None:
    assert _first(text) == RUNBOOK_MODEL_FILE_INVALID
