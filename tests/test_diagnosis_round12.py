"""Round 12 of issue 20: the classes behind heldout15's scored misses, from the sources that emit them.

heldout15 was scored once (tests/data/logs/SPLIT.md); its misses are development cases now. Each test
quotes the wording from a source other than the heldout15 paste (named in a comment), and the
heldout15 case that flipped is checked beside it.
"""

# ruff: noqa: E501 - quoted log lines are test data

from __future__ import annotations

import pytest
from test_diagnosis_round8 import LOGS, diagnose, top

from triton_sre import conventions as c
from triton_sre.diagnosis import log_layouts, severity
from triton_sre.diagnosis.severity import is_failure_line


def _heldout15(name: str) -> str:
    return (LOGS / "heldout15" / f"{name}.log").read_text()


# -- 1. never empty: core's closing "failed to load '<model>'", assertions ---------------------------------

# triton-inference-server/server#7950 (24.12, TensorRT-LLM): core's model_lifecycle.cc prints the reason at E,
# then its closing line at I, without the reason (OnLoadFinal: LOG_INFO << "failed to load '" << id << "'").
_E_7950 = "E0120 08:28:09.425599 2049 model_lifecycle.cc:654] \"failed to load 'tensorrt_llm' version 1: Invalid argument: unable to find backend library for backend 'tensorrtllm', try specifying runtime on the model configuration.\"\n"
_I_7950 = "I0120 08:28:09.425626 2049 model_lifecycle.cc:789] \"failed to load 'tensorrt_llm'\"\n"


def test_core_closing_line_alone_is_a_failed_model() -> None:
    report = diagnose(_I_7950)
    assert report.has_failure
    (finding,) = report.findings
    assert (finding.model, finding.runbook) == ("tensorrt_llm", c.RUNBOOK_UNKNOWN_LOAD_FAILURE)
    assert "failed to load 'tensorrt_llm'" in finding.evidence[0].text


def test_core_closing_line_after_its_reason_changes_nothing() -> None:
    with_reason = diagnose(_E_7950)
    both = diagnose(_E_7950 + _I_7950)
    assert [(f.model, f.runbook) for f in both.findings] == [(f.model, f.runbook) for f in with_reason.findings]
    assert both.findings[0].runbook == c.RUNBOOK_BACKEND_NOT_FOUND


def test_heldout15_vllm_closing_line_is_no_longer_empty() -> None:
    finding = top(_heldout15("tensorrt-llm-2079"))
    assert finding[0] == c.RUNBOOK_UNKNOWN_LOAD_FAILURE and "vllm_model" in finding[2]


# Tlntin/Qwen-TensorRT-LLM#123 (TensorRT-LLM 0.8, worldConfig.cpp:90) and NVIDIA/TensorRT-LLM#1992 (0.12's
# rewording): TensorRT-LLM's world-size TLLM_CHECK; glibc's assert wording (assert.h __assert_fail).
@pytest.mark.parametrize(
    "line",
    [
        "RuntimeError: [TensorRT-LLM][ERROR] Assertion failed: mpiSize == tp * pp (/home/jenkins/agent/workspace/LLM/release-0.8/L0_PostMerge/tensorrt_llm/cpp/tensorrt_llm/runtime/worldConfig.cpp:90)",
        "Assertion failed: mpiSize == tp * pp",
        "RuntimeError: [TensorRT-LLM][ERROR] Assertion failed: MPI size 1 != TP size 2 * PP size 1",
    ],
)
def test_tensorrt_llm_world_size_check_is_llm_backend_config(line: str) -> None:
    assert top(line + "\n")[0] == c.RUNBOOK_LLM_BACKEND_CONFIG


def test_a_bare_assertion_is_a_failure_signal() -> None:
    assert is_failure_line("Assertion failed: tensor.shape[0] > 0")
    assert is_failure_line("python3: src/foo.c:42: main: Assertion `n > 0' failed.")
    assert not is_failure_line("all assertions passed")
    assert diagnose("python3: src/foo.c:42: main: Assertion `n > 0' failed.\n").has_failure


def test_heldout15_world_size_assertion_flips() -> None:
    assert top(_heldout15("tensorrt-llm-1047"))[0] == c.RUNBOOK_LLM_BACKEND_CONFIG


# -- 2. no false alarm: a client's "cannot reach the server" beside Triton's own clean lines ----------------

# fauxpilot/fauxpilot#128: Triton's model table (fastertransformer READY) and the copilot proxy's log lines as
# the thread shows them, put in the docker compose columns of the services' names that fauxpilot#198 shows
# (`fauxpilot-triton-1`, `fauxpilot-copilot_proxy-1`): the proxy's gRPC client cannot reach Triton.
_TRITON_128 = (
    "I1211 15:59:38.476351 88 server.cc:626] \n"
    "+-------------------+---------+--------+\n"
    "| Model             | Version | Status |\n"
    "+-------------------+---------+--------+\n"
    "| fastertransformer | 1       | READY  |\n"
    "+-------------------+---------+--------+\n"
)
_PROXY_128 = (
    "[StatusCode.UNAVAILABLE] failed to connect to all addresses\n"
    "Returned completion in 4.535913467407227 ms\n"
    'INFO:     2022-12-18 13:18:02,796 :: 172.25.0.1:52770 - "POST /v1/engines/codegen/completions HTTP/1.1" 200 OK\n'
)
_COMPOSE_128 = "".join(f"fauxpilot-triton-1         | {line}\n" for line in _TRITON_128.splitlines()) + "".join(
    f"fauxpilot-copilot_proxy-1  | {line}\n" for line in _PROXY_128.splitlines()
)


def test_a_client_refusal_beside_clean_triton_lines_is_no_failure() -> None:
    report = diagnose(_COMPOSE_128)
    assert not report.has_failure
    assert not any(f.severity == c.IMPACT_CRITICAL for f in report.findings)


def test_a_client_refusal_alone_still_gets_a_finding() -> None:
    # isarsoft/yolov4-triton-tensorrt#70: only the client's exception is pasted (never an empty answer).
    line = "tritonclient.utils.InferenceServerException: [StatusCode.UNAVAILABLE] failed to connect to all addresses\n"
    assert diagnose(line).has_failure


def test_triton_own_error_with_the_same_words_stays_a_failure() -> None:
    # triton-inference-server/server#3147: the Python backend's stub (21.x) reports its gRPC failure as the
    # model's load failure, on Triton's own E line: that is a failed model, whatever the words.
    text = (
        "triton-srv    | I0723 03:41:11.552163 1 model_repository_manager.cc:1065] loading: DEVELOPED_MODEL:1\n"
        "triton-srv    | E0723 03:46:11.726061 1 model_repository_manager.cc:1242] failed to load 'DEVELOPED_MODEL' version 1: Internal: failed to connect to all addresses\n"
    )
    report = diagnose(text)
    assert report.has_failure and report.findings[0].model == "DEVELOPED_MODEL"


def test_heldout15_fauxpilot_proxy_is_not_flagged() -> None:
    assert not diagnose(_heldout15("healthy-fauxpilot-122")).has_failure


# -- 3. core's poll of a model no repository holds ---------------------------------------------------------

# triton-inference-server/model_analyzer#786 (23.10): Model Analyzer asks for a model the repository lacks.
_POLL_786 = "E1107 07:34:03.823179 7 model_repository_manager.cc:1265] failed to poll model 'pipe': model not found in any model repository.\n"


def test_a_model_no_repository_holds_is_model_file_missing() -> None:
    report = diagnose(_POLL_786)
    assert (report.findings[0].model, report.findings[0].runbook) == ("pipe", c.RUNBOOK_MODEL_FILE_MISSING)


def test_heldout15_poll_of_a_missing_model_flips() -> None:
    assert top(_heldout15("core-pr-244"))[0] == c.RUNBOOK_MODEL_FILE_MISSING


# -- 4. a CUDA runtime refusal inside TensorRT-LLM is not the backend's configuration ----------------------

# NVIDIA/ChatRTX#49 (a vGPU in a VM; the maintainer: VMs and vGPUs do not support it), TLLM_CUDA_CHECK's
# wording as the reporter pasted it.
_CHATRTX_49 = "RuntimeError: [TensorRT-LLM] [ERROR] CUDA runtime error in cudaDeviceGetDefaultMemPool(&memPool, device): operation not s upported (C: \\Users\\tejaswinp\\workspace\\tekit\\cpp\\tensorrt_llm\\runtime\\bufferManager.cpp:171)\n"


# triton-inference-server/tensorrtllm_backend#328: the same refusal in core's model table (another reporter).
_ROW_328 = (
    "| tensorrt_llm   | 1       | UNAVAILABLE: Internal: unexpected error when creating modelInstanceState: [TensorRT-LLM][ERROR] "
    "CUDA runtime error in cudaDeviceGetDefaultMemPool(&memPool, device): operation not supported "
    "(/app/tensorrt_llm/cpp/tensorrt_llm/runtime/bufferManager.cpp:170) |\n"
)


def test_a_cuda_runtime_refusal_in_tensorrt_llm_is_not_llm_config() -> None:
    assert top(_CHATRTX_49)[0] == c.RUNBOOK_UNKNOWN_LOAD_FAILURE
    assert top(_ROW_328)[0] == c.RUNBOOK_UNKNOWN_LOAD_FAILURE


def test_cuda_out_of_memory_inside_tensorrt_llm_keeps_its_page() -> None:
    # triton-inference-server/tensorrtllm_backend#281 (v0.7.1): the same check failing on an allocation.
    line = "Model 'tensorrt_llm' loading failed with error: version 1 is at UNAVAILABLE state: Internal: unexpected error when creating modelInstanceState: [TensorRT-LLM][ERROR] CUDA runtime error in ::cudaMallocAsync(ptr, n, mCudaStream->get()): out of memory (/app/tensorrt_llm/cpp/tensorrt_llm/runtime/tllmBuffers.h:112)\n"
    assert top(line)[0] == c.RUNBOOK_GPU_OUT_OF_MEMORY


def test_heldout15_cuda_memory_pool_refusal_flips() -> None:
    assert top(_heldout15("tensorrtllm-backend-363"))[0] == c.RUNBOOK_UNKNOWN_LOAD_FAILURE


# -- speed: the format patterns read with a literal guard answer exactly as the one regex ------------------


def test_guarded_format_patterns_answer_as_the_single_regex() -> None:
    guarded = [f for f in severity._FORMATS if isinstance(f, log_layouts.Guarded)]
    assert 0 < len(guarded) == len(severity._GUARDED) < len(severity._FORMATS)
    for entry in guarded:
        for one in entry.literals:  # each guard is text the pattern holds (the pattern's words, not others)
            assert one in entry.pattern.replace("\\", ""), entry.pattern
    texts = [p.read_text(errors="replace") for p in sorted(LOGS.glob("**/*.log"))]
    lines = [line for text in texts for line in text.splitlines()]
    assert len(lines) > 3000
    extra = ["x: Assertion `n' failed.", "got status 503", "  reason: BackOff", "pod-0   0/1   Init:OOMKilled   3"]
    for text in [*texts, *lines, *extra]:
        assert severity.is_failure_line(text, "W") == (severity.FAILURE_FORMATS.search(text) is not None), text
        # a levelless line also reads the failure prose (round 15), guarded the same way
        either = severity.FAILURE_FORMATS.search(text) or severity.FAILURE_PROSE.search(text)
        assert severity.is_failure_line(text) == (either is not None), text
