"""Messages a person wrapped by hand (a list item, a code comment, a mail reply): the line broken at a
blank, the rest indented under it. They read as the unwrapped message (issue #20 item 5)."""

# ruff: noqa: E501 - quoted log lines are test data

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.frames import classify
from triton_sre.diagnosis.logparse import parse_text

LOGS = Path(__file__).parent / "data" / "logs"
_HEADER = ("# source:", "# expect:", "# layer:", "# note:")


def _wrapped(line: str, width: int = 72) -> str:
    return "\n".join(textwrap.wrap(line, width, subsequent_indent="  ", break_long_words=False)) + "\n"


def _first(text: str) -> tuple[str | None, str | None, str | None]:
    findings = diagnose_events(parse_text(text)).findings
    return (findings[0].model, findings[0].runbook, findings[0].severity) if findings else (None, None, None)


@pytest.mark.parametrize(
    "line",
    [
        # an inventory template (core's Python stub), a hand rule (the CUDA runtime), a class word
        "E1203 10:00:00.000000 1 pb_stub.cc:2081] Failed to preinitialize Python stub: Python model file not found in '/models/base_model/10/model.py'",
        "E1203 10:00:00.000000 1 model_lifecycle.cc:638] failed to load 'densenet_onnx' version 1: Internal: CUDA driver version is insufficient for CUDA runtime version",
        # an entry whose deciding evidence is its own regex (core-platform-type's `competes.when`)
        "E1203 10:00:00.000000 1 model_lifecycle.cc:638] failed to load 'resnet' version 1: Invalid argument: unexpected platform type 'onnxruntime' for resnet",
        # failure signals without a level: KServe's controller, TensorRT's plugin refusal (the signal checks)
        "Warning  InternalError  3m  v1beta1Controllers  No ServingRuntimes or ClusterServingRuntimes with the name: kserve-tritonserver",
        "[TRT] Triton: Serialized engine contains plugin, but no plugin factory was provided. To deserialize an engine without a factory, please use IPluginV2 instead.",
        # a CPU host's harmless warning stays what it is unwrapped
        'W1129 17:06:12.130121 10326 pinned_memory_manager.cc:273] "Unable to allocate pinned system memory, pinned memory pool will not be available: CUDA driver version is insufficient for CUDA runtime version"',
    ],
)
def test_a_hand_wrapped_line_reads_as_the_line(line: str) -> None:
    wrapped = _wrapped(line)
    assert wrapped.count("\n") > 1  # it was wrapped
    assert _first(wrapped) == _first(line + "\n")  # the model, the page and its severity


@pytest.mark.parametrize(
    ("log", "runbook"),
    [
        ("heldout11/seldon-core-4887.log", c.RUNBOOK_CUDA_DRIVER_MISMATCH),  # the driver check it stops at
        ("heldout12/kserve-2143.log", c.RUNBOOK_UNKNOWN_LOAD_FAILURE),  # KServe's runtime refusal
        ("heldout8/kserve-pr-134.log", c.RUNBOOK_IMAGE_PULL_FAILED),  # an image the node cannot pull
    ],
)
def test_a_corpus_log_wrapped_by_hand_reads_as_the_log(log: str, runbook: str) -> None:
    """Logs that gave no finding at all once wrapped, before the signal checks read the joined words."""
    lines = (LOGS / log).read_text().splitlines()
    body = "".join(line + "\n" for line in lines if not line.startswith(_HEADER))
    wrapped = "".join(_wrapped(line) if line else "\n" for line in body.splitlines())
    assert _first(body)[1] == runbook
    assert _first(wrapped) == _first(body)


def test_the_blind_sets_hand_wrapped_stub_line() -> None:
    """heldout47's Jetson log, wrapped in its spec page: the stub's missing model.py."""
    text = (
        "pb_stub.cc:2081 Failed to preinitialize Python stub: Python model file not\n"
        "  found in '.../base_model-cookies-binary-jetson-xavier-jp5/10/model.py'\n"
    )
    assert _first(text)[:2] == ("base_model-cookies-binary-jetson-xavier-jp5", c.RUNBOOK_MODEL_FILE_MISSING)


def test_only_a_text_no_rule_claims_is_joined() -> None:
    assert (
        classify("CUDA driver version is\n  insufficient for CUDA runtime version")
        == c.RUNBOOK_CUDA_DRIVER_MISMATCH
    )
    # a native backtrace's frames are not the rest of the crash line: its symbols name no cause (the crash is
    # its own page, not the LLM backend's configuration its frames name)
    crash = (
        "[node-1:2211:0:2230] Caught signal 11 (Segmentation fault: address not mapped to object)\n"
        " 1 0x0000000000127022 tensorrt_llm::runtime::TllmRuntime::TllmRuntime()  :0\n"
    )
    assert classify(crash) == c.RUNBOOK_SERVER_CRASHED
    # a paragraph is no wrap
    paragraphs = "Python model file not\n\n  found in '/models/m/1/model.py'"
    assert classify(paragraphs) != c.RUNBOOK_MODEL_FILE_MISSING


def test_the_finding_quotes_the_line_a_hand_wrapped_decision_starts_on() -> None:
    # No single line holds the NGC banner's refusal: the quote is the line it starts on, not the block's first.
    text = (
        "we deployed the 25.04 image on the old fleet and it failed:\n"
        "  * the DLC refused outright --\n"
        '    "built for NVIDIA Driver Release 575.51 or later ... compatibility mode is\n'
        '    UNAVAILABLE" -- after which Triton started with no GPU visible\n'
    )
    finding = diagnose_events(parse_text(text)).findings[0]
    assert finding.runbook == c.RUNBOOK_CUDA_DRIVER_MISMATCH
    assert finding.evidence[0].line == 3
    assert finding.evidence[0].text.startswith('"built for NVIDIA Driver Release 575.51')


@pytest.mark.parametrize(
    ("text", "model", "runbook"),
    [
        # glibc's refusal wrapped before its backtick-quoted version
        (
            "nvidia-device-plugin: /lib64/libc.so.6: version\n  `GLIBC_2.34' not found (required by nvidia-device-plugin)\n",
            None,
            c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
        ),
        # 24.06's quoted closing verdict at I level, wrapped before the model's name
        ("I0801 12:18:29.148506 1818 model_lifecycle.cc:776] \"failed to load\n  'vllm_model'\"\n", "vllm_model", c.RUNBOOK_UNKNOWN_LOAD_FAILURE),
        # a backend's failure line wrapped under one of Triton's I lines
        (
            "I0721 04:58:21.624868 27811 logging.cc:52] Registered plugin creator - ::Normalize_TRT version 1\n"
            "Triton: Serialized engine contains plugin, but no plugin factory was\n  provided.\n",
            None,
            c.RUNBOOK_UNKNOWN_LOAD_FAILURE,
        ),
    ],
)
def test_a_wrapped_failure_is_never_an_empty_answer(text: str, model: str | None, runbook: str) -> None:
    assert _first(text)[:2] == (model, runbook)


def test_tensorrt_samples_error_format_is_a_failure_line() -> None:
    # trtexec's and the samples' logger: "[<time>] [E] [TRT] ..." is an error by its format, wrapped or not.
    line = "[12/08/2024-11:57:31] [E] [TRT] ModelImporter.cpp:949: While parsing node number 395 [YOLO_NMS_TRT]:\n"
    assert _first(line)[1] == c.RUNBOOK_UNKNOWN_LOAD_FAILURE
    assert _first(line.replace("[E]", "[I]")) == (None, None, None)
