"""Known issues from Triton's release notes (`known_issues.yaml`): each wording, with the release
banner in range, gives a finding whose fix carries the advice; the same log from a release outside
the range does not. The wordings are what the failures print (sources next to each log).
"""

# ruff: noqa: E501 - quoted log lines are test data

from __future__ import annotations

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text

# PyTorch's refusal of a legacy (model.json) TorchScript archive, pytorch/pytorch#77840; 22.02+ notes.
LEGACY_TORCHSCRIPT = "E0601 00:00:00.000000 1 model_lifecycle.cc:596] failed to load 'resnet' version 1: Internal: failed to load model 'resnet': Legacy model format is not supported on mobile.\n"

# server#6202 (the 23.08 notes): opentelemetry-cpp's exporter times out, then the server segfaults.
OTEL_CRASH = """[Error] File: /tmp/tritonbuild/tritonserver/build/_deps/repo-third-party-build/opentelemetry-cpp/src/opentelemetry-cpp/exporters/otlp/src/otlp_http_client.cc:213 [OTLP HTTP Client] Session state: connection failed.Timeout was reached
[Error] File: /tmp/tritonbuild/tritonserver/build/_deps/repo-third-party-build/opentelemetry-cpp/src/opentelemetry-cpp/exporters/otlp/src/otlp_http_exporter.cc:107 [OTLP HTTP Client] ERROR: Export 1 trace span(s) error: 1
Signal (11) received.
"""

# tensorrt_backend src/instance_state.cc (from r24.08); the 24.10 notes' known issue.
TRT_NON_LINEAR_IO = "E1001 00:00:00.000000 1 model_lifecycle.cc:654] \"failed to load 'plan_model' version 1: Internal: input 'INPUT0' for model 'plan_model' uses a non-linear IO format, but 'is_non_linear_format_io' is incorrectly set to false in the model configuration.\"\n"

# The stack in server#7952 (DCGM's NVSwitch module in libnvidia-nscq); the 25.03 notes' known issue.
NSCQ_CRASH = """Signal (11) received.
 0# 0x000055F7D4359B48 in /opt/tritonserver/bin/tritonserver
 1# 0x00007F4E49FEF320 in /usr/lib/x86_64-linux-gnu/libc.so.6
 2# 0x00007F4DCA04FCB3 in /usr/lib/x86_64-linux-gnu/libnvidia-nscq.so.2
 5# nscq_session_path_observe in /usr/lib/x86_64-linux-gnu/libnvidia-nscq.so.2
 6# 0x00007F4E404F10E7 in /usr/lib/x86_64-linux-gnu/libdcgmmodulenvswitch.so.3
13# __clone in /usr/lib/x86_64-linux-gnu/libc.so.6
"""

# The dynamic linker's refusal (glibc elf/dl-lookup.c) of a custom-op library preloaded as the 22.09-23.02
# notes and qa/L0_custom_ops (server PR #4873) do, built against another Python than the server's.
CUSTOM_OP_PYTHON = "tritonserver: symbol lookup error: /opt/custom_ops/libtorch_modulo/custom_modulo.so: undefined symbol: PyExc_RuntimeError\n"

# server#4566 (the 22.07 notes): several TensorRT instances abort inside TensorRT, as Triton's handler
# prints it (" N# frame in library").
TRT_SIGNAL_6 = """Signal (6) received.
 0# 0x000055F7D4359B48 in /opt/tritonserver/bin/tritonserver
 5# 0x00007F1A2B3C4D5E in /usr/lib/x86_64-linux-gnu/libnvinfer.so.8
 6# 0x00007F1A2B3C4D5F in /opt/tritonserver/backends/tensorrt/libtriton_tensorrt.so
"""

# The 23.10+ notes' TensorRT-LLM core dump at shutdown; the frame is tensorrtllm_backend#443's
# (a WorkItem list walked after TRITONSERVER_ServerDelete).
TRTLLM_SHUTDOWN = """I1013 00:00:00.000000 1 server.cc:307] Waiting for in-flight requests to complete.
Signal (11) received.
 0# 0x000055F7D4359B48 in /opt/tritonserver/bin/tritonserver
 3# std::_List_const_iterator<std::shared_ptr<triton::backend::inflight_batcher_llm::WorkItem> >::operator++() in /opt/tritonserver/backends/tensorrtllm/libtriton_tensorrtllm.so
"""

# The 24.08-25.03 notes (vllm-project/vllm#6766; the line as vllm#10800 quotes it): explicit model control,
# tensor_parallel_size 2, the multiprocessing executor.
VLLM_TP_EXPLICIT = """I1201 00:00:00.000000 1 model_lifecycle.cc:473] "loading: vllm_model:1"
INFO 12-01 00:00:10 multiproc_worker_utils.py:120] Killing local vLLM worker processes
Fatal Python error: _enter_buffered_busy: could not acquire lock for <_io.BufferedWriter name='<stdout>'> at interpreter shutdown, possibly due to daemon threads
Python runtime state: finalizing (tstate=0x00005581f2a3e850)
"""

# core's refusal of --backend-config=tensorflow,version=1 (src/backend_config.cc, core#182); the 23.04 notes.
TF1_REMOVED = "E0501 00:00:00.000000 1 model_lifecycle.cc:623] failed to load 'savedmodel_tf1' version 1: Invalid argument: starting from 23.04, Triton no longer supports Tensorflow 1. Please switch to Tensorflow 2.\n"

# A request to a Python model whose stub died (python_backend stub_launcher.cc), as the HTTP endpoint
# answers it; from 24.06 the stub is not restarted (the 24.12/25.01 notes, server#8604).
STUB_NOT_RESTARTED = """I1201 00:00:00.000000 1 model_lifecycle.cc:839] "successfully loaded 'preprocess'"
$ curl -s localhost:8000/v2/models/preprocess/infer -d @request.json
{"error":"Stub process 'preprocess_0_0' is not healthy."}
"""

# The same through an ensemble, as server#8518 (Triton 2.60.0) quotes it.
STUB_NOT_RESTARTED_ENSEMBLE = """{"error":"[500] in ensemble 'scene_text_ensemble', Stub process 'scene_text_pre_0_0' is not healthy."}\n"""

# python_backend stub_launcher.cc (r24.02 on) on Windows with EXECUTION_ENV_PATH; the 24.12/25.01 notes.
WINDOWS_EXEC_ENV = "E1201 00:00:00.000000 1 model_lifecycle.cc:654] \"failed to load 'pre' version 1: Unsupported: Custom execution environments are not currently supported on Windows.\"\n"

# (log, release in range as banner/options row, release out of range, a phrase of the advice, its source,
# the runbook of the finding that carries it)
CASES = {
    "legacy-torchscript": (
        LEGACY_TORCHSCRIPT,
        "NVIDIA Release 22.05 (build 1)",
        "NVIDIA Release 21.12 (build 1)",
        "torch.jit.save",
        "r22.05/RELEASE.md",
        c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
    ),
    "otel-exporter-crash": (
        OTEL_CRASH,
        "| server_version | 2.37.0 |",
        "NVIDIA Release 23.09 (build 1)",
        "--trace-config mode=triton",
        "r23.08/RELEASE.md",
        c.RUNBOOK_SERVER_CRASHED,
    ),
    "trt-non-linear-io": (
        TRT_NON_LINEAR_IO,
        "NVIDIA Release 24.10 (build 1)",
        "NVIDIA Release 24.07 (build 1)",
        "is_non_linear_format_io: true",
        "v2.51.0",
        c.RUNBOOK_UNKNOWN_LOAD_FAILURE,
    ),
    "pytorch-custom-op-python-symbols": (
        CUSTOM_OP_PYTHON,
        "NVIDIA Release 22.10 (build 1)",
        "NVIDIA Release 23.03 (build 1)",
        "LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libpython3.8.so.1",
        "r22.09/RELEASE.md",
        c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
    ),
    "tensorrt-instances-signal-6": (
        TRT_SIGNAL_6,
        "| server_version | 2.24.0 |",
        "NVIDIA Release 22.08 (build 1)",
        "server#4566",
        "r22.07/RELEASE.md",
        c.RUNBOOK_SERVER_CRASHED,
    ),
    "tensorrt-llm-shutdown-core-dump": (
        TRTLLM_SHUTDOWN,
        "docker run --gpus all nvcr.io/nvidia/tritonserver:24.05-trtllm-python-py3 tritonserver",
        "NVIDIA Release 23.09 (build 1)",
        "teardown only",
        "r23.10/RELEASE.md",
        c.RUNBOOK_LLM_BACKEND_CONFIG,
    ),
    "vllm-tp-explicit-model-control": (
        VLLM_TP_EXPLICIT,
        "NVIDIA Release 24.12 (build 1)",
        "NVIDIA Release 25.04 (build 1)",
        "distributed_executor_backend",
        "r25.01/docs/introduction/release_notes.md",
        c.RUNBOOK_SERVER_CRASHED,
    ),
    "tensorflow-1-removed": (
        TF1_REMOVED,
        "NVIDIA Release 23.05 (build 1)",
        "NVIDIA Release 23.03 (build 1)",
        "--backend-config=tensorflow,version=1",
        "r23.04/RELEASE.md",
        c.RUNBOOK_UNKNOWN_LOAD_FAILURE,
    ),
    "python-stub-not-restarted": (
        STUB_NOT_RESTARTED,
        "| server_version | 2.53.0 |",
        "NVIDIA Release 24.05 (build 1)",
        "no longer restarts a stub",
        "r24.12/docs/introduction/release_notes.md",
        c.RUNBOOK_PYTHON_MODEL_ERROR,
    ),
    "python-stub-not-restarted-ensemble": (
        STUB_NOT_RESTARTED_ENSEMBLE,
        "Triton Server Version 2.60.0",
        "NVIDIA Release 24.05 (build 1)",
        "no longer restarts a stub",
        "r24.12/docs/introduction/release_notes.md",
        c.RUNBOOK_ENSEMBLE_DEPENDENCY,
    ),
    "python-windows-execution-env": (
        WINDOWS_EXEC_ENV,
        "| server_version | 2.53.0 |",
        "NVIDIA Release 24.01 (build 1)",
        "EXECUTION_ENV_PATH",
        "r24.12/docs/introduction/release_notes.md",
        c.RUNBOOK_PYTHON_MODULE_MISSING,
    ),
    "dcgm-nscq-crash": (
        NSCQ_CRASH,
        "NVIDIA Release 25.03 (build 1)",
        "NVIDIA Release 24.12 (build 1)",
        "--allow-gpu-metrics=false",
        "v2.56.0",
        c.RUNBOOK_SERVER_CRASHED,
    ),
}


def first(text: str):
    report = diagnose_events(parse_text(text))
    assert report.findings, text
    return report.findings[0]


@pytest.mark.parametrize("name", sorted(CASES))
def test_release_note_advice_in_range_only(name: str) -> None:
    log, inside, outside, phrase, source, runbook = CASES[name]
    f = first(inside + "\n" + log)
    # A crash is server-crashed, a load error no rule names more precisely an unknown load failure; the legacy
    # TorchScript refusal is a model from another PyTorch release; a dead stub is the Python model's.
    assert f.runbook == runbook
    assert phrase in f.remediation and source in f.remediation
    g = first(outside + "\n" + log)
    assert phrase not in g.remediation and source not in g.remediation


def test_a_stub_that_fails_at_load_is_not_the_restart_note() -> None:
    # The restart the 24.06+ notes miss is of a stub that died while serving; one that never came up is
    # a load failure (the model is not served at all), whatever the release.
    log = "NVIDIA Release 24.12 (build 1)\nE1201 00:00:00.000000 1 model_lifecycle.cc:654] \"failed to load 'pre' version 1: Internal: Stub process 'pre_0_0' is not healthy.\"\n"
    f = first(log)
    assert f.runbook == c.RUNBOOK_PYTHON_MODEL_ERROR
    assert "no longer restarts a stub" not in f.remediation
