"""The classes behind heldout9's misses (round 6) and heldout's last one, each tested with wording from
another source than the held-out log: ONNX Runtime's graph type check, TensorRT's optimization-profile errors, an empty model/engine file, an import
failure inside an LLM backend's error line, a structured ``Error:`` message logged at info, and the
GPU operator's validators. heldout9's own logs are scored in tests/test_diagnosis_accuracy.py.
"""

# ruff: noqa: E501 - quoted log lines are test data

from __future__ import annotations

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.classes import cause_class
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.frames import classify
from triton_sre.diagnosis.logparse import parse_text
from triton_sre.diagnosis.severity import is_failure_line


def first(text: str) -> tuple[str, str]:
    """(runbook, quoted line) of the first finding."""
    findings = diagnose_events(parse_text(text)).findings
    assert findings, text
    return findings[0].runbook, findings[0].evidence[0].text


CASES = [
    # ---- TensorRT's network validation before a build: dims, not an incompatible engine.
    # NVIDIA/TensorRT#1812 (TensorRT 8.2): the profile misses an input; the builder's assertion follows.
    (
        "[02/22/2022-03:35:30] [TRT] [E] 4: [network.cpp::validate::2948] Error Code 4: Internal Error (inputs:0: dynamic input is missing dimensions in profile 0.)\n"
        "[02/22/2022-03:35:30] [TRT] [E] 2: [builder.cpp::buildSerializedNetwork::609] Error Code 2: Internal Error (Assertion enginePtr != nullptr failed. )\n",
        c.RUNBOOK_SHAPE_OR_DIMS_MISMATCH,
        "dynamic input is missing dimensions in profile 0",
    ),
    # NVIDIA/TensorRT#532 (TensorRT 7.0, Python logger format).
    (
        "[TensorRT] ERROR: input_image: dynamic input is missing dimensions in profile 0.\n[TensorRT] ERROR: Network validation failed.\n",
        c.RUNBOOK_SHAPE_OR_DIMS_MISMATCH,
        "missing dimensions in profile 0",
    ),
    # onnx/onnx-tensorrt#518 (TensorRT 7.1, onnx2trt): no profile at all, then the abort.
    (
        "[2020-08-20 11:03:50   ERROR] Network has dynamic or shape inputs, but no optimization profile has been defined.\n"
        "[2020-08-20 11:03:50   ERROR] Network validation failed.\n"
        "terminate called after throwing an instance of 'std::runtime_error'\n  what():  Failed to create object\nAborted (core dumped)\n",
        c.RUNBOOK_SHAPE_OR_DIMS_MISMATCH,
        "no optimization profile has been defined",
    ),
    # onnx/onnx-tensorrt#638: the cause line comes before a traceback that only reports the consequence.
    (
        "[TensorRT] ERROR: Network has dynamic or shape inputs, but no optimization profile has been defined.\n"
        "[TensorRT] ERROR: Network validation failed.\n"
        "Traceback (most recent call last):\n"
        '  File "onnx_trt.py", line 22, in <module>\n    main()\n'
        '  File "onnx_trt.py", line 14, in main\n    engine = backend.prepare(model)\n'
        "RuntimeError: Failed to build TensorRT engine from network\n",
        c.RUNBOOK_SHAPE_OR_DIMS_MISMATCH,
        "no optimization profile has been defined",
    ),
    # ---- An empty (0-byte) engine file: jetson-inference c/tensorNet.cpp LoadEngine,
    # LogError(LOG_TRT "invalid engine cache file size (%zu bytes)  %s\n"), then its Python wrapper's traceback.
    (
        "[TRT]    loading network plan from engine cache... networks/ssd-mobilenet.onnx.1.1.8201.GPU.FP16.engine\n"
        "[TRT]    invalid engine cache file size (0 bytes)  networks/ssd-mobilenet.onnx.1.1.8201.GPU.FP16.engine\n"
        "[TRT]    failed to load networks/ssd-mobilenet.onnx.1.1.8201.GPU.FP16.engine\n"
        "Traceback (most recent call last):\n"
        '  File "detectnet.py", line 53, in <module>\n'
        "    net = detectNet(args.network, sys.argv, args.threshold)\n"
        "Exception: jetson.inference -- detectNet failed to load network\n",
        c.RUNBOOK_MODEL_FILE_INVALID,
        "invalid engine cache file size (0 bytes)",
    ),
    # ---- ONNX Runtime's graph type check (heldout/server-3967's class): the ONNX file is inconsistent.
    # onnx/sklearn-onnx#1102 (ORT's Python API) and onnxruntime#649 (0.3, "Type parameter ... bound to"),
    # here in the onnxruntime backend's load-failure line.
    (
        "E0606 10:00:00.000000 1 model_lifecycle.cc:630] failed to load 'scorer' version 1: Internal: onnx runtime error 1: Load model from /models/scorer/1/model.onnx failed:Type Error: Type (tensor(double)) of output arg (variable) of node (Co_Concat) does not match expected type (tensor(float)).\n",
        c.RUNBOOK_MODEL_FILE_INVALID,
        "Type Error: Type (tensor(double)) of output arg",
    ),
    (
        "RuntimeError: [ONNXRuntimeError] : 1 : GENERAL ERROR : Load model from output/some.onnx failed:Type Error: Type parameter (T) bound to different types (tensor(float) and tensor(double) in node ().\n",
        c.RUNBOOK_MODEL_FILE_INVALID,
        "Type parameter (T) bound to different types",
    ),
    # ---- An import failure inside an LLM backend's error line: triton-inference-server/vllm_backend
    # src/model.py logs f"[vllm] Error generating stream: {e}"; the module of server#7528 (numpy).
    (
        "E0814 10:02:11.123456 1 model.py:502] \"[vllm] Error generating stream: ModuleNotFoundError: No module named 'numpy'\"\n",
        c.RUNBOOK_PYTHON_MODULE_MISSING,
        "No module named 'numpy'",
    ),
    # ---- The GPU operator's validator (gpu-operator cmd/nvidia-validator/main.go): main() prints the
    # returned error with logrus' log.Printf("Error: %v", err), i.e. at level=info.
    (
        'time="2026-07-03T07:54:41Z" level=info msg="Error: error validating driver installation: error validating driver: failed to locate nvidia-smi: exit status 14"\n',
        c.RUNBOOK_GPU_CONTAINER_RUNTIME,
        "error validating driver installation",
    ),
    (
        'time="2023-03-28T13:52:37Z" level=info msg="Error: error validating plugin installation: GPU resources are not discovered by the node"\n',
        c.RUNBOOK_GPU_CONTAINER_RUNTIME,
        "error validating plugin installation",
    ),
    # gpu-operator#133: a validator's wait loop as its container log.
    (
        "waiting for nvidia drivers to be loaded\nsh: nvidia-smi: command not found\ndriver is not ready\n",
        c.RUNBOOK_GPU_CONTAINER_RUNTIME,
        "driver is not ready",
    ),
    # The kubelet cannot mount the validator's host volume (assets/state-operator-validation: the
    # driver-install-path hostPath /run/nvidia/driver), kubectl get events columns.
    (
        '12s   Warning   Failed   pod/nvidia-operator-validator-7xq2d   Error: cannot find volume "driver-install-path" to mount into container "driver-validation"\n',
        c.RUNBOOK_GPU_CONTAINER_RUNTIME,
        'cannot find volume "driver-install-path"',
    ),
    # redhat-na-ssa/demo-ai-gitops-catalog docs (gpu-operator#1598): the validator pod in
    # Init:CreateContainerError, as kubectl describe prints the init container's state.
    (
        "Name:         nvidia-operator-validator-4kz8m\nNamespace:    nvidia-gpu-operator\n"
        "Init Containers:\n  driver-validation:\n    Image:         nvcr.io/nvidia/cloud-native/gpu-operator-validator:v24.6.2\n"
        "    State:          Waiting\n      Reason:       CreateContainerError\n    Ready:          False\n",
        c.RUNBOOK_GPU_CONTAINER_RUNTIME,
        "Reason:       CreateContainerError",
    ),
]


@pytest.mark.parametrize(("text", "runbook", "quoted"), CASES)
def test_class_from_another_source(text: str, runbook: str, quoted: str) -> None:
    got, line = first(text)
    assert got == runbook, (got, line)
    assert quoted in line


def test_a_failed_build_is_a_consequence_not_an_incompatible_engine() -> None:
    # jetson-inference tensorNet.cpp: LogError(LOG_TRT "device %s, failed to build CUDA engine\n").
    assert classify("[TRT]    device GPU, failed to build CUDA engine") != c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE
    # ... while a plan that cannot be loaded still is the engine's page.
    assert classify("[TRT]    failed to create TensorRT engine from plan") == c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE


@pytest.mark.parametrize(
    "text",
    [
        # TensorRT#532's wording (missing -> dims).
        "input_image: dynamic input is missing dimensions in profile 0.",
        # Constructed, no source: the other word order and the profile alone, which the class layer
        # reads for wording no rule quotes yet.
        "Error: the dims of input 'x' are missing from the optimization profile",
        "Error: optimization profile 1 has not been set for the execution context",
    ],
)
def test_the_dims_class_reads_both_word_orders_and_the_profile(text: str) -> None:
    assert cause_class(text) == c.RUNBOOK_SHAPE_OR_DIMS_MISMATCH


def test_a_structured_error_message_is_a_failure_at_any_level() -> None:
    assert is_failure_line('time="2021-10-07T15:16:34Z" level=info msg="Error: error validating toolkit installation"')
    # The validator's routine info lines are not.
    assert not is_failure_line('time="2026-01-23T20:08:10Z" level=info msg="Attempting to validate a pre-installed driver on the host"')
    assert not is_failure_line(
        "time=\"2026-01-23T20:08:10Z\" level=info msg=\"No pre-installed driver detected on the host: no 'nvidia-smi' file present on the host\""
    )


def test_a_healthy_validator_describe_is_no_failure() -> None:
    text = (
        "Init Containers:\n  toolkit-validation:\n    Image:  nvcr.io/nvidia/cloud-native/gpu-operator-validator:v24.6.2\n"
        "    State:          Terminated\n      Reason:       Completed\n      Exit Code:    0\n    Ready:          True\n"
        "    Environment:\n      COMPONENT:  toolkit\n"
    )
    assert not diagnose_events(parse_text(text)).has_failure


def test_the_hook_driver_error_in_a_validator_describe_stays_the_drivers() -> None:
    # gpu-operator#559: the validator container cannot start because the hook cannot reach the driver.
    text = (
        "Init Containers:\n  plugin-validation:\n    State:          Waiting\n      Reason:       RunContainerError\n"
        "Events:\n  Warning  Failed  104s (x3 over 5m12s)  kubelet  Error: failed to start container \"plugin-validation\": "
        "Error response from daemon: failed to create shim task: OCI runtime create failed: runc create failed: unable to start "
        "container process: error during container init: error running hook #0: error running hook: exit status 1, stdout: , "
        "stderr: Auto-detected mode as 'legacy'\nnvidia-container-cli.real: detection error: driver rpc error: timed out: unknown\n"
    )
    assert first(text)[0] == c.RUNBOOK_CUDA_DRIVER_MISMATCH
