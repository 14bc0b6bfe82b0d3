"""Round 13 (issue #20): heldout16's misses fixed by class, each class quoting another public source."""

from __future__ import annotations

import accuracy
import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text
from triton_sre.diagnosis.severity import is_failure_line


def _top(text: str) -> str:
    findings = diagnose_events(parse_text(text)).findings
    return findings[0].runbook if findings else "(no finding)"


def _case(name: str) -> accuracy.Case:
    return next(case for case in accuracy.load("heldout16") if case.name == name)


# Crash signatures as posted in other threads: Open MPI's signal handler block inside tritonserver
# (https://github.com/triton-inference-server/tensorrtllm_backend/issues/273), the shell's report of a
# crashed tritonserver (https://github.com/triton-inference-server/server/issues/8284), libstdc++'s
# terminate handler with the shell's core-dumped line (https://github.com/cluebotng/cluebotng/issues/11).
CRASH_LINES = (
    "[e2e-102-219:06082] *** Process received signal ***",
    "[e2e-102-219:06082] Signal: Segmentation fault (11)",
    "[e2e-102-219:06082] [ 0] /usr/lib/x86_64-linux-gnu/libc.so.6(+0x42520)[0x7f8e755a2520]",
    "/workspace/start.sh: line 15:   341 Segmentation fault      (core dumped)"
    " /opt/tritonserver/bin/tritonserver",
    "  what():  FileIOException",
    "Aborted (core dumped)",
    "Segmentation fault (core dumped)",  # retinanet-examples#314, after TensorRT's engine error
)


@pytest.mark.parametrize("line", CRASH_LINES)
def test_crash_signatures_are_failure_lines(line: str) -> None:
    assert is_failure_line(line)


@pytest.mark.parametrize(
    "line", ("Signal handler installed", "what(): the docs explain", "core dumped files")
)
def test_crash_words_in_prose_are_not(line: str) -> None:
    assert not is_failure_line(line)


def test_a_crash_alone_gets_a_finding() -> None:
    text = (
        "terminate called after throwing an instance of 'libconfig::FileIOException'\n"
        "  what():  FileIOException\n"
        "Aborted (core dumped)\n"
    )
    report = diagnose_events(parse_text(text))
    assert report.findings and report.has_failure


def test_the_what_text_is_classified() -> None:
    # A loader refusing a file by path: the model's file is missing (FasterTransformer's INI reader).
    text = (
        "terminate called after throwing an instance of 'std::runtime_error'\n"
        "  what():  [FT][ERROR] Can't load /models/gpt/1/1-gpu//config.ini\n"
        "[host:00001] *** Process received signal ***\n"
        "[host:00001] Signal: Aborted (6)\n"
    )
    assert _top(text) == c.RUNBOOK_MODEL_FILE_MISSING


def test_heldout16_crash_case_flips() -> None:
    assert accuracy.top1(_case("fastertransformer-backend-140")) == c.RUNBOOK_MODEL_FILE_MISSING


# TensorRT's deserializer naming a version mismatch: runtime.cpp's wording as posted in
# https://github.com/NVIDIA/retinanet-examples/issues/314 (a plain TensorRT app, then a segfault), here
# inside TensorRT-LLM's logger prefix, and stdArchiveReader.cpp's version-tag assertion.
_RETINANET_314 = (
    "6: The engine plan file is not compatible with this version of TensorRT, expecting library version"
    " 8.0.0 got 8.0.1, please rebuild."
)


@pytest.mark.parametrize(
    "line",
    (
        _RETINANET_314,
        "[TensorRT-LLM][ERROR] " + _RETINANET_314,
        "[TensorRT-LLM][ERROR] 1: [stdArchiveReader.cpp::stdArchiveReaderInitCommon::47] Error Code 1:"
        " Serialization (Serialization assertion stdVersionRead == kSERIALIZATION_VERSION failed.Version"
        " tag does not match. Note: Current Version: 228, Serialized Engine Version: 226)",
    ),
)
def test_tensorrt_version_wording_in_the_llm_backend_is_engine_incompatible(line: str) -> None:
    assert _top(line + "\n") == c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE


def test_a_bare_deserialize_failure_stays_the_backend_configuration() -> None:
    line = "[TensorRT-LLM][ERROR] Assertion failed: Failed to deserialize cuda engine (/app/x.cpp:77)\n"
    assert _top(line) == c.RUNBOOK_LLM_BACKEND_CONFIG


@pytest.mark.parametrize("name", ("tensorrtllm-backend-299", "triton-cli-pr-59"))
def test_heldout16_engine_version_cases_flip(name: str) -> None:
    assert accuracy.top1(_case(name)) == c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE


# A warning never outranks an error: core's W line when it skips a version folder it cannot read
# (src/model_repository_manager/model_lifecycle.cc, inventory id core-version-not-integral) and then
# the model's own error; the warning is not the model's cause.
_SKIPPED_DIR = (
    "W0530 07:35:33.065839 152 model_lifecycle.cc:107] ignore version directory '.ipynb_checkpoints'"
    " which fails to convert to integral number\n"
)


def test_a_warning_never_outranks_an_error() -> None:
    text = (
        _SKIPPED_DIR + "I0530 07:35:33.065931 152 model_lifecycle.cc:459] loading: pre:1\n"
        "E0530 07:35:33.355016 152 model_lifecycle.cc:596] failed to load 'pre' version 1: Internal:"
        " ValueError: bad tokenizer path\n"
    )
    assert _top(text) == c.RUNBOOK_PYTHON_MODEL_ERROR


def test_the_warning_still_decides_when_nothing_else_names_a_cause() -> None:
    text = _SKIPPED_DIR + (
        "E0530 07:35:33.400000 152 model_lifecycle.cc:596] failed to load 'pre' version 1: Internal:"
        " at least one version must be available under the version policy of model 'pre'\n"
    )
    assert _top(text) == c.RUNBOOK_VERSION_DIR_INVALID


def test_heldout16_warning_case_no_longer_leads() -> None:
    # The log names no library, but FastDeploy raises its bare "FastDeploy initalized failed!" only around the
    # import of its compiled extension (c_lib_wrap.py.in; diag37): its label's page, the warning not first.
    assert accuracy.top1(_case("fastdeploy-2003")) == c.RUNBOOK_PYTHON_SHARED_LIBRARY_MISSING


# The wrong first findings a principle decides.
def test_cuda_runtime_needing_a_newer_driver_is_the_driver() -> None:
    # cudaErrorCallRequiresNewerDriver's string as posted in https://github.com/lllyasviel/Fooocus/issues/95
    # (fixed by a newer CUDA package) and https://github.com/VITA-Group/FasterSeg/issues/82 (driver 450).
    text = (
        "Traceback (most recent call last):\n"
        '  File "launch.py", line 1, in <module>\n'
        "RuntimeError: CUDA error: API call is not supported in the installed CUDA driver\n"
    )
    assert _top(text) == c.RUNBOOK_CUDA_DRIVER_MISMATCH


def test_a_bare_python_exception_quoted_by_core_is_the_python_model() -> None:
    # Round 11's Python-status class, reached through core's "version N is at UNAVAILABLE state:" and an
    # exception raised without a message (a bare assert leaves "AssertionError:").
    text = (
        "error: creating server: Invalid argument - load failed for model 'm': version 1 is at"
        " UNAVAILABLE state: Internal: AssertionError: \n"
    )
    assert _top(text) == c.RUNBOOK_PYTHON_MODEL_ERROR
    assert _top(text.replace("AssertionError: ", "AssertionError:")) == c.RUNBOOK_PYTHON_MODEL_ERROR


@pytest.mark.parametrize(
    "text",
    (
        # https://github.com/huggingface/transformers/issues/26179 (a config class the auto mapping lacks)
        "E1129 00:00:00.000000 1 model_lifecycle.cc:1] failed to load 'pre' version 1: Internal: KeyError:"
        " <class 'transformers.models.table_transformer.configuration_table_transformer."
        "TableTransformerConfig'>\n",
        # https://github.com/jianghoucheng/AlphaEdit/issues/27 (transformers 4.23.1 has no 'llama' type)
        "Traceback (most recent call last):\n"
        '  File "/usr/local/lib/python3.9/site-packages/transformers/models/auto/configuration_auto.py",'
        " line 497, in __getitem__\n"
        "    raise KeyError(key)\n"
        "KeyError: 'llama'\n",
    ),
)
def test_transformers_not_knowing_the_model_type_is_a_library_version(text: str) -> None:
    assert _top(text) == c.RUNBOOK_LIBRARY_VERSION_MISMATCH


def test_a_python_key_error_elsewhere_stays_the_python_model() -> None:
    text = "failed to load 'pre' version 1: Internal: KeyError: 'max_length'\n"
    assert _top(text) == c.RUNBOOK_PYTHON_MODEL_ERROR


@pytest.mark.parametrize(
    ("name", "runbook"),
    (
        ("fastertransformer-backend-102", c.RUNBOOK_CUDA_DRIVER_MISMATCH),
        ("sagemaker-examples-4651", c.RUNBOOK_PYTHON_MODEL_ERROR),
        ("tensorrtllm-backend-86", c.RUNBOOK_LIBRARY_VERSION_MISMATCH),
    ),
)
def test_heldout16_wrong_first_findings_flip(name: str, runbook: str) -> None:
    assert accuracy.top1(_case(name)) == runbook
