"""vllm_backend's health check (src/model.py _check_health, r24.12 on, ENABLE_VLLM_HEALTH_CHECK): once the engine
fails it, the backend logs the check's traceback and unloads the model, and every request gets "Model is unavailable
due to unhealthy vLLM engine". The answer is a consequence, as "failed to load all models" is: the traceback's
exception (or an earlier line) is the cause, and alone it is the fallback, never a configuration refusal."""

# ruff: noqa: E501 - quoted log lines are test data

from __future__ import annotations

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text

ANSWER = (
    "tritonclient.utils.InferenceServerException: [StatusCode.UNAVAILABLE] Model is unavailable due to unhealthy vLLM engine\n"
)


def _runbooks(text: str) -> list[str]:
    return [f.runbook for f in diagnose_events(parse_text(text)).findings]


def test_the_answer_alone_is_a_failure_with_no_known_cause() -> None:
    assert _runbooks(ANSWER) == [c.RUNBOOK_UNKNOWN_LOAD_FAILURE]


def test_the_health_checks_traceback_names_the_cause() -> None:
    text = (
        "E1204 10:00:00.000000 1 model.py:610] [vllm] Engine is not healthy and model will be unloaded: Traceback (most recent call last):\n"
        '  File "/opt/tritonserver/backends/vllm/model.py", line 608, in _check_health\n'
        "    future.result()\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n" + ANSWER
    )
    assert _runbooks(text)[0] == c.RUNBOOK_GPU_OUT_OF_MEMORY
