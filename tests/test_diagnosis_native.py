"""Rules from principles and the wording of the code that prints it (issue 14, second pass).

(a) An operating-system resource error decides over a guess read from traceback frames: the
    exception line decides, the frames are context.
(b) A backend's own error line (TensorRT, ONNX Runtime, libtorch, CUDA) with no Triton line around it
    still yields a finding: its class when the wording names one, else `unknown-load-failure`,
    attributed to the model whose file the line names, else server-wide.

Each case quotes the wording from the source that prints it and cites file and release. None is
taken from the held-out logs (tests/data/logs/heldout*/).
"""

from __future__ import annotations

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.frames import classify, from_frames
from triton_sre.diagnosis.logparse import parse_text

# pybind11's error_already_set::what() as the Python stub reports it (python_backend src/pb_stub.cc,
# r24.06-r26.06): "<Type>: <message>\n\nAt:\n  <file>(<line>): <function>" - frames after "At:".
IMPORT_FRAMES = (
    "  /models/m/1/model.py(3): <module>\n"
    "  <frozen importlib._bootstrap>(241): _call_with_frames_removed\n"
    "  <frozen importlib._bootstrap_external>(940): exec_module\n"
    "  <frozen importlib._bootstrap>(1178): _find_and_load\n"
)
MP_FRAMES = (
    "  /usr/lib/python3.10/multiprocessing/synchronize.py(57): __init__\n"
    "  /usr/lib/python3.10/multiprocessing/context.py(68): Lock\n"
)

# (text, runbook, source of the wording)
OS_ERRORS = [
    # glibc strerror() via CPython's OSError.__str__ ("[Errno N] <strerror>"), CPython 3.8-3.12.
    (
        "OSError: [Errno 28] No space left on device\n\nAt:\n" + IMPORT_FRAMES,
        c.RUNBOOK_HOST_RESOURCE_EXHAUSTED,
        "glibc string/_strerror.c ENOSPC; CPython Objects/exceptions.c OSError_str",
    ),
    (
        "OSError: [Errno 12] Cannot allocate memory\n\nAt:\n" + IMPORT_FRAMES,
        c.RUNBOOK_HOST_RESOURCE_EXHAUSTED,
        "glibc ENOMEM",
    ),
    (
        "OSError: [Errno 24] Too many open files: '/models/m/1/vocab.txt'\n\nAt:\n" + IMPORT_FRAMES,
        c.RUNBOOK_HOST_RESOURCE_EXHAUSTED,
        "glibc EMFILE",
    ),
    # CPython Lib/multiprocessing/synchronize.py: SemLock -> sem_open(), whose semaphore lives in
    # /dev/shm on Linux: ENOSPC there means the container's shared memory is full.
    (
        "OSError: [Errno 28] No space left on device\n\nAt:\n" + MP_FRAMES + IMPORT_FRAMES,
        c.RUNBOOK_SHM_TOO_SMALL,
        "CPython Lib/multiprocessing/synchronize.py SemLock (3.8-3.12)",
    ),
    (
        "Traceback (most recent call last):\n"
        '  File "/models/m/1/model.py", line 3, in <module>\n'
        "    lock = multiprocessing.Lock()\n"
        '  File "/usr/lib/python3.10/multiprocessing/synchronize.py", line 57, in __init__\n'
        "    sl = self._semlock = _multiprocessing.SemLock(\n"
        "OSError: [Errno 28] No space left on device",
        c.RUNBOOK_SHM_TOO_SMALL,
        "CPython Lib/traceback.py format (3.8-3.12), multiprocessing/synchronize.py",
    ),
    # The kernel's OOM killer (mm/oom_kill.c "Out of memory: Killed process <pid>"), the shell's
    # report of SIGKILL (bash "Killed"), Kubernetes' container status reason.
    (
        "Out of memory: Killed process 4711 (tritonserver) total-vm:61234567kB",
        c.RUNBOOK_HOST_RESOURCE_EXHAUSTED,
        "linux mm/oom_kill.c (5.x)",
    ),
    ("Killed", c.RUNBOOK_HOST_RESOURCE_EXHAUSTED, "bash jobs.c j_strsignal(SIGKILL)"),
    (
        "Last State: Terminated\n  Reason: OOMKilled\n  Exit Code: 137",
        c.RUNBOOK_HOST_RESOURCE_EXHAUSTED,
        "kubernetes pkg/kubelet container status reason",
    ),
]


@pytest.mark.parametrize(("text", "runbook", "source"), OS_ERRORS, ids=[s for _t, _r, s in OS_ERRORS])
def test_os_resource_errors(text: str, runbook: str, source: str) -> None:
    assert classify(text) == runbook, source


def test_exception_line_decides_over_frames() -> None:
    # Frames alone (a paste cut above the exception) still name the import machinery...
    assert classify(IMPORT_FRAMES) == c.RUNBOOK_PYTHON_MODULE_MISSING
    assert from_frames(IMPORT_FRAMES)
    # ...but any exception line more specific than a generic Python error decides.
    assert classify("OSError: [Errno 28] No space left on device\n\nAt:\n" + IMPORT_FRAMES) != (
        c.RUNBOOK_PYTHON_MODULE_MISSING
    )
    vllm = (
        "Traceback (most recent call last):\n"
        '  File "/usr/local/lib/python3.10/dist-packages/vllm/engine/llm_engine.py", line 9, in <module>\n'
        "    import missing_dep\n"
        "ModuleNotFoundError: No module named 'missing_dep'"
    )
    assert classify(vllm) == c.RUNBOOK_PYTHON_MODULE_MISSING
    # A generic exception leaves the frames in charge (a vLLM library path = the LLM backend).
    generic = vllm.replace("ModuleNotFoundError: No module named 'missing_dep'", "RuntimeError: boom")
    assert classify(generic) == c.RUNBOOK_LLM_BACKEND_CONFIG
    assert not from_frames("OSError: [Errno 28] No space left on device\n\nAt:\n" + IMPORT_FRAMES)


def test_an_exception_raised_during_import_is_the_models_error() -> None:
    """pybind11's "At:" block of an exception raised while model.py is imported: the frames are
    import machinery, the exception line (not an ImportError) is the model's own error."""
    text = "ValueError: vocab.txt has no entries\n\nAt:\n" + IMPORT_FRAMES
    assert classify(text) == c.RUNBOOK_PYTHON_MODEL_ERROR
    assert not from_frames(text)
    assert classify("ModuleNotFoundError: No module named 'cv2'\n\nAt:\n" + IMPORT_FRAMES) == (
        c.RUNBOOK_PYTHON_MODULE_MISSING
    )


def test_a_quoted_exception_outranks_the_models_own_import_frames() -> None:
    """The step's own lines are only import frames; the ensemble's line quotes its exception."""
    log = (
        "  <frozen importlib._bootstrap>(991): _find_and_load\n"
        "  /models/step/1/model.py(6): <module>\n"
        "E0101 00:00:00.000000 1 model_repository_manager.cc:487] Invalid argument: ensemble 'ens' "
        "depends on 'step' which has no loaded version. Model 'step' loading failed with error: "
        "version 1 is at UNAVAILABLE state: Internal: OSError: [Errno 24] Too many open files\n"
    )
    findings = diagnose_events(parse_text(log)).findings
    assert (findings[0].model, findings[0].runbook) == ("step", c.RUNBOOK_HOST_RESOURCE_EXHAUSTED)


# Backend-native wording, no Triton line around it.
NATIVE = [
    # TensorRT 7.x libnvinfer (closed source; its logger's text as the TensorRT backend r20.09-r21.08
    # prints it): the plan's header check in coreReadArchive.cpp.
    (
        "coreReadArchive.cpp (31) - Serialization Error in verifyHeader: 0 (Magic tag does not match)",
        c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE,
        "TensorRT 7.x coreReadArchive.cpp",
    ),
    (
        "INVALID_CONFIG: Deserialize the cuda engine failed.",
        c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE,
        "TensorRT 7.x runtime, IRuntime::deserializeCudaEngine",
    ),
    # TensorRT 8.x-10.x: stdArchiveReader.cpp / runtime.cpp::parsePlan assertions.
    (
        "1: [stdArchiveReader.cpp::StdArchiveReader::32] Error Code 1: Serialization "
        "(Serialization assertion magicTagRead == kMAGIC_TAG failed.Magic tag does not match)",
        c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE,
        "TensorRT 8.x stdArchiveReader.cpp",
    ),
    (
        "1: [runtime.cpp::parsePlan::314] Error Code 1: Serialization (Serialization assertion "
        "plan->header.magicTag == rt::kPLAN_MAGIC_TAG failed.)",
        c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE,
        "TensorRT 8.6 runtime.cpp::parsePlan",
    ),
    (
        "4: [runtime.cpp::deserializeCudaEngine::65] Error Code 4: Internal Error "
        "(Engine deserialization failed.)",
        c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE,
        "TensorRT 8.x runtime.cpp::deserializeCudaEngine",
    ),
    # NVIDIA/TensorRT documents/import_workflows.md (main, 2026): plans are tied to the GPU's SM.
    (
        "Engine plan file is generated on an incompatible device, expecting compute 8.6 "
        "got compute 7.5, please rebuild.",
        c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE,
        "NVIDIA/TensorRT documents/import_workflows.md",
    ),
    # onnxruntime_backend src/onnxruntime_utils.h RETURN_IF_ORT_ERROR (r22.06-r26.06): "onnx runtime
    # error <OrtErrorCode>: <msg>"; codes from onnxruntime include/onnxruntime/core/session/
    # onnxruntime_c_api.h (OrtErrorCode: 3 NO_SUCHFILE, 7 INVALID_PROTOBUF, 9 NOT_IMPLEMENTED).
    (
        "onnx runtime error 3: Load model from /models/m/1/model.onnx failed:"
        "Load model /models/m/1/model.onnx failed. File doesn't exist",
        c.RUNBOOK_MODEL_FILE_MISSING,
        "onnxruntime_backend src/onnxruntime_utils.h",
    ),
    (
        "onnx runtime error 7: Load model from /models/m/1/model.onnx failed:Protobuf parsing failed.",
        c.RUNBOOK_MODEL_FILE_INVALID,
        "onnxruntime_backend src/onnxruntime_utils.h",
    ),
    (
        "onnx runtime error 9: Could not find an implementation for GridSample(16) node with name 'gs'",
        c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
        "onnxruntime_backend src/onnxruntime_utils.h",
    ),
    # ONNX Runtime's Python binding (onnxruntime/python/onnxruntime_pybind_exceptions.cc):
    # "[ONNXRuntimeError] : <code> : <STATUS> : <msg>".
    (
        "onnxruntime.capi.onnxruntime_pybind11_state.NoSuchFile: [ONNXRuntimeError] : 3 : NO_SUCHFILE : Load "
        "model from model.onnx failed. File doesn't exist",
        c.RUNBOOK_MODEL_FILE_MISSING,
        "onnxruntime python/onnxruntime_pybind_exceptions.cc",
    ),
    # libtorch caffe2/serialize/inline_container.cc (PyTorch 1.x-2.x), via pytorch_backend
    # src/libtorch.cc "failed to load model '<m>': <what()>".
    (
        "PytorchStreamReader failed reading zip archive: failed finding central directory",
        c.RUNBOOK_MODEL_FILE_INVALID,
        "pytorch caffe2/serialize/inline_container.cc",
    ),
    # CUDA runtime's cudaGetErrorString(cudaErrorMemoryAllocation) as PyTorch wraps it.
    (
        "RuntimeError: CUDA error: out of memory",
        c.RUNBOOK_GPU_OUT_OF_MEMORY,
        "CUDA runtime cudaGetErrorString; c10/cuda/CUDAException.h",
    ),
]


@pytest.mark.parametrize(("line", "runbook", "source"), NATIVE, ids=[s for _l, _r, s in NATIVE])
def test_backend_native_wording_alone_yields_its_class(line: str, runbook: str, source: str) -> None:
    assert classify(line) == runbook, source
    findings = diagnose_events(parse_text(line + "\n")).findings
    assert findings, f"no finding for a lone {source} line"
    assert findings[0].runbook == runbook
    assert findings[0].severity == c.IMPACT_CRITICAL


def test_trt7_lines_without_triton_are_one_finding() -> None:
    log = (
        "coreReadArchive.cpp (31) - Serialization Error in verifyHeader: 0 (Version tag does not match)\n"
        "INVALID_STATE: std::exception\n"
        "INVALID_CONFIG: Deserialize the cuda engine failed.\n"
        "failed to create CUDA engine\n"
    )
    findings = diagnose_events(parse_text(log)).findings
    assert [(f.model, f.runbook) for f in findings] == [(None, c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE)]
    assert "Deserialize the cuda engine failed" in (findings[0].message or "")


UNKNOWN_NATIVE = [
    ("onnx runtime error 1: Non-zero status code returned while running Conv node", "onnxruntime_backend"),
    (
        "2: [ltWrapper.cpp::setupHeuristic::327] Error Code 2: Internal Error "
        "(Assertion cublasStatus failed.)",
        "TensorRT 8.x logger",
    ),
    (
        "[TRT] [E] 3: [executionContext.cpp::enqueueV3::2666] Error Code 3: API Usage Error",
        "TensorRT 8.6 logger",
    ),
    ("RuntimeError: CUDA error: an illegal memory access was encountered", "c10/cuda/CUDAException.h"),
]


@pytest.mark.parametrize(("line", "source"), UNKNOWN_NATIVE, ids=[s for _l, s in UNKNOWN_NATIVE])
def test_unclassified_backend_error_is_never_empty(line: str, source: str) -> None:
    findings = diagnose_events(parse_text(line + "\n")).findings
    assert [(f.model, f.runbook, f.severity) for f in findings] == [
        (None, c.RUNBOOK_UNKNOWN_LOAD_FAILURE, c.IMPACT_CRITICAL)
    ], source
    assert findings[0].message and findings[0].message.startswith(line[:20])


def test_backend_error_naming_a_model_file_is_attributed() -> None:
    line = "onnx runtime error 6: Load model from /models/detector/1/model.onnx failed: Exception during init"
    findings = diagnose_events(parse_text(line + "\n")).findings
    assert [(f.model, f.version, f.runbook) for f in findings] == [
        ("detector", "1", c.RUNBOOK_UNKNOWN_LOAD_FAILURE)
    ]
    classified = (
        "onnx runtime error 7: Load model from /models/detector/1/model.onnx failed:Protobuf parsing failed."
    )
    findings = diagnose_events(parse_text(classified + "\n")).findings
    assert [(f.model, f.runbook) for f in findings] == [("detector", c.RUNBOOK_MODEL_FILE_INVALID)]


def test_healthy_lines_stay_clean() -> None:
    log = (
        "I0101 00:00:00.000000 1 onnxruntime.cc:2900] TRITONBACKEND_Initialize: onnxruntime\n"
        "I0101 00:00:00.000000 1 tensorrt.cc:65] TRITONBACKEND_Initialize: tensorrt\n"
        "I0101 00:00:00.000000 1 model_lifecycle.cc:835] successfully loaded 'detector'\n"
    )
    assert diagnose_events(parse_text(log)).findings == ()
