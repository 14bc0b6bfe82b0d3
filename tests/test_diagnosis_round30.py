"""Round 30 (2026-12-03, twelfth session): causes read from sources that two blind check sets pointed
at, after their first score (tests/data/qa_backend_logs, tests/data/doc_statements; the first figures
are in their READMEs).

- NVML failing inside a container that started, as the NVIDIA Container Toolkit's troubleshooting notes
  explain it (cloud-native-docs container-toolkit/troubleshooting.md): "Unknown Error" once the runtime
  dropped the GPU devices from the container's cgroup, "Insufficient Permissions" where SELinux keeps the
  container from the device files: the runtime's page; "Driver/library version mismatch" stays the driver's.
- PyTriton refusing a model's batching or outputs before Triton starts (pytriton v0.1.0 to v0.7.0): a
  traceback's last line.
- DALI's config checks (dali_backend src/config_tools/config_tools.cc, r22.07/r22.08 to r26.06).
- A relay (a NIM's nimutils.py `ERROR` prefix) learned on Triton's first line is peeled from every line it
  carried before that one (tritonserver's libcurl warnings), not only the line right before.
- KServe's storage initializer finding nothing at the model's URI (kserve_storage.py, kfserving's storage.py and
  KServe's debugging guide: a predictor pod in `Init:Error` is its storage initializer failing).
- A line a terminal cut inside a quoted name (an odd count of quotes, the piece closing it) is joined, and the
  streaming reader hands the parser whole lines where it cannot use its fast path, prefixes on.
"""

# ruff: noqa: E501 - quoted log lines are test data

from __future__ import annotations

import io

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.api import diagnose_stream
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text


def first(text: str) -> tuple[str | None, str | None, str | None]:
    findings = diagnose_events(parse_text(text)).findings
    return (findings[0].model, findings[0].runbook, findings[0].severity) if findings else (None, None, None)


@pytest.mark.parametrize(
    ("line", "runbook"),
    [
        ("Failed to initialize NVML: Unknown Error", c.RUNBOOK_GPU_CONTAINER_RUNTIME),
        ("Failed to initialize NVML: Insufficient Permissions", c.RUNBOOK_GPU_CONTAINER_RUNTIME),
        ("Failed to initialize NVML: Driver/library version mismatch", c.RUNBOOK_CUDA_DRIVER_MISMATCH),
    ],
)
def test_nvml_in_a_container_names_the_layer_that_failed(line: str, runbook: str) -> None:
    assert first(line + "\n") == (None, runbook, c.IMPACT_CRITICAL)
    # nvidia-smi inside the container, as a user pastes it after Triton's own start lines
    pasted = 'I1203 10:00:00.000000 1 server.cc:674] "ok"\n$ nvidia-smi\n' + line + "\n"
    assert first(pasted)[1] == runbook


def test_bare_nvml_failure_on_a_cpu_host_stays_harmless() -> None:
    text = (
        "Error: Failed to initialize NVML\n"
        'W1203 10:00:00.000000 1 metrics.cc:798] "DCGM unable to start: DCGM initialization error"\n'
    )
    assert not diagnose_events(parse_text(text)).findings


PYTRITON_TRACEBACK = """Traceback (most recent call last):
  File "/workspace/server.py", line 31, in <module>
    triton.bind(
  File "/usr/local/lib/python3.10/dist-packages/pytriton/triton.py", line 498, in bind
    self._model_manager.add_model(model, self.is_connected())
  File "/usr/local/lib/python3.10/dist-packages/pytriton/model_config/generator.py", line 137, in _set_batching
    raise PyTritonBadParameterError("The `max_batch_size` must be greater or equal to 1.")
pytriton.exceptions.PyTritonBadParameterError: {message}
"""


@pytest.mark.parametrize(
    ("message", "runbook"),
    [
        ("The `max_batch_size` must be greater or equal to 1.", c.RUNBOOK_BATCHING_CONFIG_INVALID),
        (
            "Invalid `priority`=6 provided. The value must be between 1 and 5.",
            c.RUNBOOK_BATCHING_CONFIG_INVALID,
        ),
        (
            "Optional flag for outputs is not supported. Outputs marked as optional: scores.",
            c.RUNBOOK_MODEL_IO_UNSUPPORTED,
        ),
    ],
)
def test_pytriton_refusals_are_read_from_the_tracebacks_last_line(message: str, runbook: str) -> None:
    assert first(PYTRITON_TRACEBACK.format(message=message))[1] == runbook


@pytest.mark.parametrize(
    ("reason", "runbook"),
    [
        ("Missing max_batch_size field in model configuration.", c.RUNBOOK_BATCHING_CONFIG_INVALID),
        ("Missing inputs config.", c.RUNBOOK_TENSOR_NAME_MISMATCH),
        ("Missing outputs config.", c.RUNBOOK_TENSOR_NAME_MISMATCH),
        (
            "The input at index 0 in the model configuration does not contain a `name` field.",
            c.RUNBOOK_TENSOR_NAME_MISMATCH,
        ),
        ('Missing dims config for "DALI_OUTPUT_0"', c.RUNBOOK_SHAPE_OR_DIMS_MISMATCH),
        ('Missing data_type config for "DALI_INPUT_0"', c.RUNBOOK_DATATYPE_MISMATCH),
    ],
)
def test_dali_config_checks_name_their_page(reason: str, runbook: str) -> None:
    line = (
        "E1203 10:00:00.000000 1 model_lifecycle.cc:654] \"failed to load 'dali' version 1: Invalid argument: "
        f'{reason.replace(chr(34), chr(92) + chr(34))}"\n'
    )
    assert first(line) == ("dali", runbook, c.IMPACT_CRITICAL)


_KSERVE_PODS = (
    "NAME                                                              READY   STATUS       RESTARTS   AGE\n"
)


@pytest.mark.parametrize(
    ("text", "runbook"),
    [
        # kserve python/storage kserve_storage.py, and kfserving's storage.py before it
        ("RuntimeError: Failed to fetch model. No model found in s3://models/triton/resnet.\n", None),
        (
            "RuntimeError: Failed to fetch model. The path or model gs://kfserving-examples/models/x does not exist.\n",
            None,
        ),
        # a KServe predictor pod whose init container (the storage initializer) fails
        (
            _KSERVE_PODS
            + "triton-predictor-default-29jks-deployment-5f7d4b9996hzrnc   0/3     Init:Error   1   10s\n",
            None,
        ),
        # restarted in a loop, or on a pod that is not KServe's, it is the crash loop's page
        (
            _KSERVE_PODS
            + "triton-predictor-default-00002-deployment-55bbbb5d8c   0/3   Init:CrashLoopBackOff   82   6h\n",
            c.RUNBOOK_POD_CRASH_LOOPING,
        ),
        (
            _KSERVE_PODS + "triton-7c9d8f-x2x4z   0/1     Init:CrashLoopBackOff   4   3m\n",
            c.RUNBOOK_POD_CRASH_LOOPING,
        ),
    ],
)
def test_kserve_storage_initializer_failures_are_the_stores(text: str, runbook: str | None) -> None:
    assert first(text)[1] == (runbook or c.RUNBOOK_CLOUD_REPOSITORY_ACCESS)


_RELAY = "ERROR 2025-04-24 22:49:44.266 nimutils.py:68] "
_CURL = (
    "tritonserver: /usr/local/lib/libcurl.so.4: no version information available (required by "
    "/opt/tritonserver/bin/../lib/libtritonserver.so)"
)


@pytest.mark.parametrize("before", [1, 2, 5])
def test_a_relays_lines_before_tritons_first_are_read_past_its_prefix(before: int) -> None:
    """A NIM relays tritonserver's stderr behind its own ``ERROR`` (nimutils.py): the prefix is learned on
    Triton's first line, and every line the relay carried before it (a library's warnings) is read again
    past it, not only the one right before."""
    healthy = [
        "I0424 22:49:44.265292 98 cache_manager.cc:480] \"Create CacheManager with cache_dir: '/opt/tritonserver/caches'\"",
        'I0424 22:49:44.433448 98 model_lifecycle.cc:473] "loading: yolox:1"',
        "I0424 22:49:45.433448 98 model_lifecycle.cc:849] \"successfully loaded 'yolox'\"",
    ]
    lines = [_CURL] * before + healthy
    assert not diagnose_events(parse_text("".join(f"{_RELAY}{line}\n" for line in lines))).findings
    failed = [
        *lines[:-1],
        "E0424 22:49:45.433448 98 model_lifecycle.cc:654] \"failed to load 'yolox' version 1: Internal: "
        'unable to create TensorRT engine: Serialization assertion failed"',
    ]
    model, runbook, _ = first("".join(f"{_RELAY}{line}\n" for line in failed))
    assert (model, runbook) == ("yolox", c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE)


def test_a_cut_inside_a_quoted_name_is_joined_whatever_reads_the_file() -> None:
    """A terminal cut at 80 columns inside a model's quoted name (``'Deep`` | ``Seek-R1...'``), behind
    docker compose's column: the line parser and the streaming reader (which hands whole lines to the
    parser where most lines are not Triton's own) both join it and name the model whole."""
    line = (
        "triton-1  | E0210 23:48:21.607196 1 model_lifecycle.cc:622] failed to load 'DeepSeek-R1-Distill-Qwen-1.5B' "
        "version 1: Internal: onnx runtime error 1: Load model from /models/DeepSeek-R1-Distill-Qwen-1.5B/1/"
        "model.onnx failed: Unsupported model IR version: 10, max supported IR version: 9"
    )
    text = "".join(line[i : i + 80] + "\n" for i in range(0, len(line), 80))
    assert text.splitlines()[0].endswith("'Deep")
    want = ("DeepSeek-R1-Distill-Qwen-1.5B", c.RUNBOOK_LIBRARY_VERSION_MISMATCH)
    assert first(text)[:2] == want
    streamed = diagnose_stream(io.BytesIO(text.encode()), {}).findings
    assert (streamed[0].model, streamed[0].runbook) == want
