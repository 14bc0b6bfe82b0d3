"""heldout59's misses by class (issue 20), each from the wording's source, not from the log.

- TensorRT 5-7's runtime reports a failed CUDA call as ``Cuda Error in <function>: <cudaError_t>``; 2 is
  ``cudaErrorMemoryAllocation`` (CUDA's driver_types.h): the GPU's memory, whatever aborts after it.
- TorchScript's type parser (``script_type_parser.cpp``) refuses a type it does not know as ``Unknown type
  name '<name>'``: an archive from a newer PyTorch, or a custom class whose library is not loaded. A C
  compiler's lowercase ``unknown type name`` is something else.
- The AWS SDK's curl client words a request that never reached the endpoint ``curlCode: <n>,
  <curl's reason>``: an s3:// or MinIO repository the server cannot reach or does not trust.
"""

# ruff: noqa: E501 - quoted log lines are test data

from __future__ import annotations

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text


def _first(text: str) -> str | None:
    findings = diagnose_events(parse_text(text)).findings
    return findings[0].runbook if findings else None


@pytest.mark.parametrize("fn", ["allocate", "deserialize"])
def test_tensorrts_cuda_error_2_before_an_abort_is_the_gpus_memory(fn: str) -> None:
    log = (
        "I0311 14:15:13.697682 1 logging.cc:49] Deserialize required 66238 microseconds.\n"
        f"E0311 14:15:13.700653 1 logging.cc:43] runtime.cpp (24) - Cuda Error in {fn}: 2\n"
        "terminate called after throwing an instance of 'nvinfer1::CudaError'\n"
        "  what():  std::exception\n"
    )
    assert _first(log) == c.RUNBOOK_GPU_OUT_OF_MEMORY


def test_another_cuda_error_number_is_not_memory() -> None:
    log = "E0311 14:15:13.700653 1 logging.cc:43] runtime.cpp (24) - Cuda Error in allocate: 35\n"
    assert _first(log) != c.RUNBOOK_GPU_OUT_OF_MEMORY


@pytest.mark.parametrize("name", ["NoneType", "__torch__.torch.classes.tensorrt.Engine", "Device"])
def test_torchscripts_unknown_type_name_is_a_library_version(name: str) -> None:
    log = (
        "E1117 05:00:32.253836 153 model_repository_manager.cc:899] failed to load 'fr-model' version 1: "
        "Internal: load failed for libtorch model -> 'fr-model':\n\n"
        f"Unknown type name '{name}':\n\n"
        'Serialized File "code/__torch__/train/network_files/image_list.py", line 6\n'
    )
    assert _first(log) == c.RUNBOOK_LIBRARY_VERSION_MISMATCH


def test_a_compilers_unknown_type_name_is_no_torchscript() -> None:
    log = "E1117 05:00:32.253836 153 model_repository_manager.cc:899] failed to load 'm' version 1: Internal: model.cc:3:1: error: unknown type name 'foo'\n"
    assert _first(log) != c.RUNBOOK_LIBRARY_VERSION_MISMATCH


@pytest.mark.parametrize(
    "reason",
    [
        "curlCode: 60, SSL peer certificate or SSH remote key was not OK",
        "curlCode: 6, Couldn't resolve host name",
        "curlCode: 7, Couldn't connect to server",
        "curlCode: 28, Timeout was reached",
    ],
)
def test_the_aws_sdks_curl_code_is_the_repository_unreachable(reason: str) -> None:
    # as the server writes it, and as a user retyped it (the bucket message's own words misspelt)
    for head, words in (("error: creating server", "MetaData for"), ("ErrorL creating server", "Metadata fro")):
        log = (
            f"{head}: Internal - Could not get {words} bucket with name tritonmodels due to "
            f"exception: , error message: {reason}\n"
        )
        assert _first(log) == c.RUNBOOK_CLOUD_REPOSITORY_ACCESS, head
