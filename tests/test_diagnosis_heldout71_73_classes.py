"""heldout71-73's misses fixed by class from the wordings' sources (the logs themselves are scored in
test_diagnosis_accuracy.py; these tests quote each wording as its source prints it, in other layouts).

- Core 20.03's dynamic batcher printed ``Wait: <n> us`` at E level on every scheduling pass
  (src/core/dynamic_batch_scheduler.cc:571 at r20.03, gone in r20.03.1): a serving server's debugging line.
- The distribution registry client's ``received unexpected HTTP status: <status>`` (registry/client/errors.go,
  "Received" in older copies), what a pull gives for a registry answering 4xx/5xx with no error body:
  image-pull-failed.
- A backend shipped as Python (``/opt/tritonserver/backends/<name>/model.py``) raising in its own frame that
  the library it drives lacks an attribute or a name (vLLM 0.10 dropped ``AsyncLLM.engine``, which the 25.08
  vllm backend read): library-version-mismatch, not the model.json (llm-backend-config) nor the model's code.
"""

from __future__ import annotations

import pytest

from triton_sre.conventions import (
    RUNBOOK_IMAGE_PULL_FAILED,
    RUNBOOK_LIBRARY_VERSION_MISMATCH,
    RUNBOOK_LLM_BACKEND_CONFIG,
    RUNBOOK_PYTHON_MODEL_ERROR,
)
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text


def _runbooks(text: str) -> list[str]:
    return [f.runbook for f in diagnose_events(parse_text(text + "\n")).findings]


def test_the_20_03_batchers_wait_lines_are_no_failure() -> None:
    log = "\n".join(
        [
            "I0409 12:21:40.111111 1 server.cc:227] Initializing Triton Inference Server",
            "I0409 12:21:46.905105 1 model_repository_manager.cc:810] successfully loaded 'det' version 1",
            "I0409 12:21:46.910000 1 grpc_server.cc:1973] Started GRPCService at 0.0.0.0:8001",
            *(f"E0409 12:22:1{i}.98 1 dynamic_batch_scheduler.cc:571] Wait: 249493{i} us" for i in range(5)),
        ]
    )
    assert _runbooks(log) == []
    # the same line with anything after it, or a wait that failed, is not the debugging print
    assert _runbooks("E0409 12:22:11.984376 1 dynamic_batch_scheduler.cc:571] Wait: 24949393 us failed")


@pytest.mark.parametrize(
    "line",
    [
        "Error response from daemon: received unexpected HTTP status: 502 Bad Gateway",
        "docker: Error response from daemon: Received unexpected HTTP status: 503 Service Unavailable.",
        "Error: failed to pull nvcr.io/nvidia/tritonserver:24.05-py3: received unexpected HTTP status: 500 "
        "Internal Server Error",
    ],
)
def test_a_registry_answering_without_an_error_body_fails_the_pull(line: str) -> None:
    assert _runbooks(line)[:1] == [RUNBOOK_IMAGE_PULL_FAILED]


STUB = (
    'I0911 08:21:51.554457 1 pb_stub.cc:389] "Failed to initialize Python stub: AttributeError: {exc}'
    "\\n\\nAt:\\n"
    '  {frame}(365): _setup_metrics\\n  {frame}(191): initialize\\n"'
)


@pytest.mark.parametrize(
    "exc",
    [
        "'AsyncLLM' object has no attribute 'engine'",
        "module 'vllm.engine.metrics' has no attribute 'Metrics'",
    ],
)
def test_the_shipped_backend_calling_what_its_library_lacks_is_the_versions(exc: str) -> None:
    text = STUB.format(exc=exc, frame="/opt/tritonserver/backends/vllm/model.py")
    assert _runbooks(text)[:1] == [RUNBOOK_LIBRARY_VERSION_MISMATCH]
    traceback = "\n".join(
        [
            "Traceback (most recent call last):",
            '  File "/opt/tritonserver/backends/vllm/model.py", line 191, in initialize',
            "    self._setup_metrics()",
            '  File "/opt/tritonserver/backends/vllm/model.py", line 365, in _setup_metrics',
            "    self.llm_engine.engine.stat_loggers",
            f"AttributeError: {exc}",
        ]
    )
    assert _runbooks(traceback)[:1] == [RUNBOOK_LIBRARY_VERSION_MISMATCH]


def test_the_users_own_model_or_a_model_json_key_keeps_its_page() -> None:
    own = STUB.format(exc="'Model' object has no attribute 'tokenizer'", frame="/models/llm/1/model.py")
    assert _runbooks(own)[:1] == [RUNBOOK_PYTHON_MODEL_ERROR]
    key = (
        'E0911 08:21:51.554457 1 model_lifecycle.cc:654] "failed to load \'vllm_model\' version 1: Internal: '
        "TypeError: AsyncEngineArgs.__init__() got an unexpected keyword argument 'max_loras_count'"
        "\\n\\nAt:\\n"
        '  /opt/tritonserver/backends/vllm/model.py(238): init_engine\\n"'
    )
    assert _runbooks(key)[:1] == [RUNBOOK_LLM_BACKEND_CONFIG]
