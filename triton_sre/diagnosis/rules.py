"""Pure data: which text means which failure (the one-line fix of each runbook is in its front
matter, `runbooks/<id>.md`, read by `catalog.py`).

`CAUSE_RULES` is ordered: the first rule whose pattern matches a text claims it, so a line is
evidence for exactly one runbook. It is built from two sources, in `PRIORITY` order (specific
before general: a shared-memory failure before a generic Python error, a bad enum before a
data-type mismatch, TensorRT-LLM before TensorRT):

- Triton's own messages: one rule per entry of the message inventory (``inventory.yaml``, read
  from the sources of core and the backends across releases). Where an entry names competing
  evidence (``competes``), a rule for the competitor that needs both texts goes first.
- ``HAND_RULES``: the wording of third-party code that surfaces inside Triton's messages (CUDA,
  ONNX Runtime, TensorRT, PyTorch, Python tracebacks, cloud SDKs), taken from the real Triton 2.51
  server (``tests/test_diagnosis_realtriton.py``) and from logs users posted (cited in
  ``tests/data/logs/gpu/`` and ``tests/data/logs/tune/``; never from ``heldout/``).
"""

from __future__ import annotations

import re
from typing import Final

from triton_sre import conventions as c
from triton_sre.diagnosis.inventory import ENTRIES
from triton_sre.diagnosis.stack_rules import RESTART_RULES, STACK_RULES, WINDOWS_RULES, CauseRule
from triton_sre.diagnosis.stack_rules import rx as _rx

__all__ = [
    "BACKEND_FAILURE",
    "CAUSE_RULES",
    "HAND_RULES",
    "HARMLESS",
    "PRIORITY",
    "RANK",
    "SERVER_FAILURE",
    "SUMMARY",
    "CauseRule",
    "classify",
    "from_frames",
    "is_backend_failure",
    "is_harmless",
    "is_server_failure",
    "is_summary",
]


def _not_on_info_line(*alternatives: str) -> re.Pattern[str]:
    """Like `rx`, but only on a line that the library itself did not mark INFO or WARNING:
    TensorRT-LLM prints its parameter defaults (``[TensorRT-LLM][WARNING] enable_kv_cache_reuse is
    not specified, will be set to false``, a json.exception about an optional key) on every healthy
    start."""
    body = "|".join(f"(?:{a})" for a in alternatives)
    return re.compile(
        rf"(?m:^(?![^\n]*\[(?:TensorRT-LLM\]\[)?(?:INFO|WARNING|DEBUG|VERBOSE)\])[^\n]*?(?:{body}))", re.I
    )


# Lines every CPU-only host prints: informational, never a cause.
HARMLESS: Final = _rx(
    r"CudaDriverHelper has not been initialized",
    # Alone, NVML failing is what every CPU host prints; with a reason it is a driver problem.
    r"Failed to initialize NVML(?!: *(Driver/library|Unknown Error|Insufficient Permissions))",
    r"DCGM (unable to start|initialization error)",
    r"Unable to allocate pinned system memory",
    r"failed to allocate pinned system memory",
    r"CUDA memory pool disabled",
    r"Unable to get (power limit|power usage|energy consumption|memory)",
    r"GPU metrics will not be available",
    r"failed to stop server: .*Exit timeout expired",
    r"Collecting (CPU|GPU) metrics",
)

# The generic consequence lines: the cause is elsewhere.
SUMMARY: Final = _rx(
    r"failed to load all models",
    r"No server context available\. Exiting immediately",
)

# Lines that say the server itself did not come up (or lost its GPUs): whatever else the log
# holds, a log with one of these is a failed log and gets at least one finding.
SERVER_FAILURE: Final = _rx(
    r"^error: creating server\b",
    r"\bCUDA failed to initialize\b",
    r"failed to initialize CUDA\b",
    r"Unable to find CUDA driver",
    r"no CUDA-capable device",
    r"CUDA driver version is insufficient",
    r"Failed to initialize NVML: ",
    r"NVML[_ ](ERROR|error)\w*",
    r"unable to get number of CUDA devices",
    # The process ended with a non-zero status, as docker compose, kubectl describe and a pod's
    # status (KServe's lastFailureInfo) report it; 137 (SIGKILL) is a cause rule of its own.
    r"\bexited with code [1-9]\d*",
    r"\bExit Code:\s+[1-9]\d*",
    r"\bexitCode\"?:\s*[1-9]\d*",
    r"\bReason:\s+(Error|ContainerCannotRun|StartError)\b",
    # KServe's model status (pkg/apis/serving/v1beta1 FailureInfo, ModelState): the controller
    # writes lastFailureInfo only when a model failed, and FailedToLoad / a FailureReason say so
    # even when the message it quotes holds only the runtime's I lines (an OOM kill leaves no E line).
    r"\blastFailureInfo\b\"?:",
    r"\b(activeModelState|targetModelState)\"?:\s*\"?FailedToLoad\b",
    r"\breason\"?:\s*\"?(ModelLoadFailed|RuntimeUnhealthy|NoSupportingRuntime|RuntimeNotRecognized|InvalidPredictorSpec)\b",
    # The container runtime refused the container (docker CLI / compose / the OCI runtime's hook).
    r"\bError response from daemon: ",
    r"\bOCI runtime (create|exec) failed\b",
    r"\berror running hook\b",
)

_ENOSPC = r"(?:\[Errno 28\]|\bNo space left on device\b|\bENOSPC\b)"
_SHM_CONTEXT = r"(?:/dev/shm\b|\bmultiprocessing[/.]|\bSemLock\b|\bsem_open\b)"

# A backend's own error line (not Triton's): the model load failed even when the wording names no known
# class and no Triton line is around it. From the sources that print them: onnxruntime_backend
# src/onnxruntime_utils.h (RETURN_IF_ORT_ERROR: "onnx runtime error <code>: <msg>"), ONNX Runtime's
# Python binding ("[ONNXRuntimeError] : <code> : <STATUS> : <msg>"), the TensorRT logger ("[TRT] [E]",
# "[TensorRT] ERROR", TensorRT 8+'s "Error Code <n>: <Kind> (<msg>)" from "[file.cpp::func::line]"),
# libtorch (c10::Error, the TorchScript interpreter), the CUDA runtime ("CUDA error: <text>").
BACKEND_FAILURE: Final = _rx(
    r"onnx runtime error \d+: ",
    r"\[ONNXRuntimeError\] : \d+ : [A-Z_]+ : ",
    r"\[TRT\] \[E\]|\[TensorRT\] ERROR|\bTRT ERROR\b",
    r"\[[\w.]+\.cpp::[\w:~]+::\d+\] Error Code \d+: ",
    r"\bc10::Error\b|The following operation failed in the TorchScript interpreter",
    r"\bCUDA error: \w",
    r"\bcudaError\w+\b|\bCUDA_ERROR_\w+\b",
)

# A frame of the model's own code in the stub's traceback ("At:" then "  /m/1/model.py(36): initialize").
_PYTHON_FRAME = r"(?m:^\s+\S*/model\.py\(\d+\): <?\w+)"

HAND_RULES: Final[tuple[CauseRule, ...]] = (
    # Unresolved template placeholders (${triton_backend}) are an unfinished config, whatever
    # message they surface in.
    CauseRule(c.RUNBOOK_CONFIG_PARSE_ERROR, re.compile(r"\$\{\s*[A-Za-z_][\w.]*\s*\}")),
    CauseRule(
        c.RUNBOOK_SHM_TOO_SMALL,
        _rx(
            r"Unable to initialize shared memory key",
            r"run out of shared memory",
            r"Failed to increase the shared memory pool",
            r"shared[ -]memory.{0,80}(No space left on device|too small|insufficient)",
            r"\bBus error\b",
            r"shm-default-byte-size.{0,40}(exceed|too large|larger)",
            # ENOSPC where the full device is /dev/shm: CPython's multiprocessing (SemLock ->
            # sem_open, queues, pools) keeps its semaphores there; the frames are the context.
            rf"{_ENOSPC}[\s\S]{{0,2000}}?{_SHM_CONTEXT}",
            rf"{_SHM_CONTEXT}[\s\S]{{0,2000}}?{_ENOSPC}",
        ),
    ),
    CauseRule(
        c.RUNBOOK_HOST_RESOURCE_EXHAUSTED,
        _rx(
            # glibc strerror() wording, as Python's OSError prints it ("[Errno N] <strerror>") and
            # as C++ code quotes it: ENOSPC 28, ENOMEM 12, EMFILE 24, ENFILE 23.
            _ENOSPC,
            r"\[Errno 12\]|\bCannot allocate memory\b",
            r"\[Errno 2[34]\]|\bToo many open files\b",
            # The kernel's OOM killer (dmesg), the shell reporting SIGKILL, Kubernetes' reason.
            r"Out of memory: Kill(ed)? process",
            r"\boom[-_]kill(er)?\b",
            r"\bOOMKilled\b",
            r"(?m:^\s*Killed\s*$)",
            r"exit(ed)? (with )?(code|status) 137\b",
            # kubectl describe ("Exit Code:    137"), a pod's status ("exitCode: 137").
            r"\bexit ?code\"?:?\s+137\b",
        ),
    ),
    CauseRule(
        c.RUNBOOK_CLOUD_REPOSITORY_ACCESS,
        _rx(
            r"Unable to create (S3|GCS|Azure)[\w ]*client",
            r"Could not get MetaData for (bucket|object)",
            r"Server failed to authenticate the request",
            r"Unable to get blob property",
            r"Failed to (check|get|list|read|download)[^\n]{0,40}(as|gs|s3)://",
            r"\b(InvalidAccessKeyId|SignatureDoesNotMatch|NoSuchBucket|ExpiredToken|AccessDenied)\b",
            r"(s3|gs|as)://\S+[^\n]{0,80}(credential|forbidden|unauthori[sz]ed|\b40[13]\b|denied|anonymous)",
            r"does not have storage\.objects\.(get|list) access",
        ),
    ),
    CauseRule(
        c.RUNBOOK_PERMISSION_DENIED,
        _rx(
            # Not the NGC entrypoint's own `find: '/usr/lib/ssl/private': Permission denied` (printed
            # by every image started as a non-root user, e.g. under KServe): noise, not a model's file.
            r"(?m:^(?!\s*find: ')[^\n]*Permission denied)",
            r"\bEACCES\b",
            r"Operation not permitted",
            r"\[Errno 13\]",
        ),
    ),
    *STACK_RULES,
    *WINDOWS_RULES,
    CauseRule(
        c.RUNBOOK_CUDA_DRIVER_MISMATCH,
        _rx(
            # The entrypoint's driver check: the host driver is older than the image's CUDA and the
            # forward-compatibility libraries cannot help (a GeForce GPU, a Jetson, an old branch).
            r"This container was built for NVIDIA Driver Release",
            r"compatibility mode is UNAVAILABLE",
            r"No supported GPU\(s\) detected to run this container",
            r"Failed to detect NVIDIA driver version",
            r"Failed to load libcuda\.so",
            r"driver version is insufficient for CUDA runtime",
            r"no CUDA-capable device is detected",
            r"CUDA_ERROR_NO_DEVICE|cudaErrorNoDevice|cudaErrorInsufficientDriver",
            r"unable to get number of CUDA devices",
            r"Failed to get (CUDA )?device count",
            r"CUDA failure 35\b",
            r"forward compatibility was attempted on non supported HW",
            r"NVIDIA driver on your system is too old",
            r"Found no NVIDIA driver on your system",
            r"PTX was compiled with an unsupported toolchain",
            r"CUDA initialization: ",
            r"CUDA driver initialization failed",
            r"\bCUDA failed to initialize\b",
            r"failed to initialize CUDA\b",
            r"Unable to find CUDA driver",
            r"Failed to initialize NVML: *(Driver/library|Unknown Error|Insufficient Permissions)",
            r"NVML[_ ]ERROR\w*",
            r"Driver/library version mismatch",
        ),
    ),
    CauseRule(
        c.RUNBOOK_GPU_OUT_OF_MEMORY,
        _rx(
            r"\bout of memory\b",
            r"CUDA_ERROR_OUT_OF_MEMORY|cudaErrorMemoryAllocation|OutOfMemoryError",
            r"Error Code 2: OutOfMemory",
            r"OOM when allocating",
            r"CUDA failure 2\b",
            r"Failed to allocate memory for requested buffer",
            r"Requested amount of GPU memory \(\d+ bytes\) could not be allocated",
            r"No available memory for the cache blocks",
            r"CNMEM_STATUS_OUT_OF_MEMORY",
        ),
    ),
    CauseRule(
        c.RUNBOOK_BACKEND_NOT_FOUND,
        _rx(
            r"unable to find backend library for backend",
            r"unable to find '[^']*' for model '[^']*', in \S*backends",
            r"unexpected platform type",
            r"unknown platform",
            r"unable to (load|find) backend\b",
        ),
    ),
    CauseRule(
        c.RUNBOOK_LLM_BACKEND_CONFIG,
        _not_on_info_line(
            r"\[TensorRT-LLM\]\[(ERROR|FATAL)\]",
            r"tensorrt_llm::|libtriton_tensorrtllm|inflight_batcher_llm",
            r"gpt_model_path|encoder_model_path|decoder_model_path|engine_dir",
            r"json\.exception",
            r"\[vllm\]|\bvllm\.|\bvLLM\b",
            r"AsyncLLMEngine|AsyncEngineArgs|build_async_engine_client",
            r"\bmodel\.json\b",
        ),
    ),
    CauseRule(
        c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE,
        _rx(
            r"Serialization assertion",
            r"Version tag does not match",
            r"Engine deserialization failed",
            r"Failed to deserialize (the )?cuda engine",
            r"deserializeCudaEngine",
            r"unable to create TensorRT engine",
            r"engine plan file is (not compatible|generated on an incompatible device)",
            r"expecting (\[TensorRT\] )?library version [\d.]+ got [\d.]+",
            r"plan file .{0,40}(incompatible|different (GPU|device|version))",
            # libnvinfer's own wording when IRuntime::deserializeCudaEngine rejects a plan, without any
            # Triton line around it: TensorRT 7 (coreReadArchive.cpp ... verifyHeader, INVALID_CONFIG:
            # Deserialize the cuda engine failed) and 8-10 (stdArchiveReader.cpp / runtime.cpp::parsePlan
            # "Serialization assertion ... magicTag", "Engine deserialization failed").
            r"Serialization Error in verifyHeader",
            r"\b(Magic|Version) tag does not match",
            r"\bkPLAN_MAGIC_TAG\b|\bmagicTagRead\b",
            r"Deserializ\w* (of )?(the )?(cuda )?engine[^\n]{0,20}fail",
            r"failed to (create|build|load) (the )?(CUDA|TensorRT|TRT) engine",
        ),
    ),
    CauseRule(
        c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
        _rx(
            r"Unsupported model IR version",
            r"max supported IR version",
            r"\bopset\b",
            r"Unknown model file format version",
            r"kMaxSupportedFileFormatVersion",
            r"Attempted to read a PyTorch file with version",
            r"PyTorch installation may be too old",
            r"undefined symbol",
            r"version `(GLIBC|GLIBCXX|CXXABI)_[\d.]+' not found",
            r"no kernel image is available for execution on the device",
            r"not in Op<",
            r"cannot open shared object file",
            r"was compiled (with|against) .{0,60}(version|newer|older)",
            # ONNX Runtime has no kernel for an operator (or its opset): exported for another release.
            r"Could not find an implementation for \w+\(\d+\)",
            r"No Op registered for \w+ with domain_version of \d+",
            # ONNX Runtime status NOT_IMPLEMENTED (OrtErrorCode 9): no kernel in this release.
            r"onnx runtime error 9: |\[ONNXRuntimeError\] : 9 : NOT_IMPLEMENTED",
            # TorchScript written by a newer PyTorch than the backend's.
            r"Unknown builtin op: \w+::",
            r"Unknown type name '__torch__",
        ),
    ),
    CauseRule(
        c.RUNBOOK_CONFIG_NAME_MISMATCH,
        _rx(
            r"unexpected directory name '[^']*' for model '[^']*'",
            r"directory name must equal model name",
        ),
    ),
    CauseRule(
        c.RUNBOOK_CONFIG_PARSE_ERROR,
        _rx(
            r"Error parsing text-format inference\.ModelConfig",
            r"failed to read text proto",
            r"Unknown enumeration value of",
            r"has no field named",
            r"failed to parse (the )?model config",
            r"unable to parse .{0,40}config",
        ),
    ),
    CauseRule(
        c.RUNBOOK_MODEL_FILE_MISSING,
        _rx(
            r"Python model file not found",
            r"unable to find model file",
            r"failed to stat file",
            r"Could not open file",
            r"unable to open (model )?file",
            r"model file \S* ?(not found|does not exist)",
            r"Load model from \S+ failed:[^\n]{0,120}(No such file|does not exist|Could not open)",
            # ONNX Runtime status NO_SUCHFILE (OrtErrorCode 3): the backend writes "onnx runtime error
            # 3: ...", the Python API "[ONNXRuntimeError] : 3 : NO_SUCHFILE : ...".
            r"onnx runtime error 3: |\[ONNXRuntimeError\] : 3 : NO_SUCHFILE",
            r"SavedModel file does not exist",
            r"failed to open text file for read \S+: No such file",
            r"No such file or directory[^\n]{0,20}'[^'\n]*\bmodel\.(pt|onnx|plan|savedmodel|graphdef|py)'",
            r"config\.pbtxt[^\n]{0,40}(not found|does not exist|missing)",
        ),
    ),
    CauseRule(
        c.RUNBOOK_ENSEMBLE_DEPENDENCY,
        _rx(
            r"ensemble '?[^'\s]+'? contains models that are not available",
            r"ensemble '[^']+' depends on '[^']+' which has no loaded version",
            r"\bensemble\b[^\n]{0,120}\b(step|tensor|not written|is not used|mapped from|unable to find)",
            r"\bin ensemble '",
        ),
    ),
    CauseRule(
        c.RUNBOOK_VERSION_DIR_INVALID,
        _rx(
            r"at least one version must be available",
            r"fails to convert to integral number",
            r"version \d+ is specified for model '[^']*', but the version directory is not present",
            r"No model version was found",
            r"no version is available",
        ),
    ),
    CauseRule(
        c.RUNBOOK_TENSOR_NAME_MISMATCH,
        _rx(
            r"unexpected (config |inference )?(input|output) '",
            r"allowed (inputs|outputs) are",
            r"configuration expects \d+ (inputs|outputs), model provides \d+",
            r"(input|output|tensor) '[^']+' (is )?not found",
            r"no (input|output) named",
            r"unknown (input|output) '",
        ),
    ),
    CauseRule(
        c.RUNBOOK_DATATYPE_MISMATCH,
        _rx(
            r"configuration expects datatype",
            r"unexpected datatype",
            r"model provides TYPE_",
            r"data ?type mismatch",
            r"expected (data ?type|dtype)",
        ),
    ),
    CauseRule(
        c.RUNBOOK_MAX_BATCH_SIZE_UNSUPPORTED,
        _rx(
            r"for the model to support batching",
            r"configuration specified max_batch_size",
            r"does not support batching",
            r"batching (is )?not supported",
            r"max_batch_size (should|must)",
            r"max_batch_size \d+, but",
        ),
    ),
    CauseRule(
        c.RUNBOOK_SHAPE_OR_DIMS_MISMATCH,
        _rx(
            r"the model expects (\d+ dimensions|dims)",
            r"model configuration specifies (\d+ dimensions|dims)",
            r"dimension must be integer >= 1",
            r"unexpected shape",
            r"\b(shape|dims?)\b[^\n]{0,60}\b(mismatch|does not match)",
            r"require \d+ dims",
            r"\breshape\b[^\n]{0,60}(invalid|mismatch|must)",
        ),
    ),
    CauseRule(
        c.RUNBOOK_PYTHON_MODULE_MISSING,
        _rx(
            r"\bModuleNotFoundError\b",
            r"\bImportError\b",
            r"No module named",
            r"cannot import name",
            r"EXECUTION_ENV_PATH",
            r"execution environment",
            r"archive_read_open_filename",
        ),
    ),
    CauseRule(
        c.RUNBOOK_PYTHON_MODEL_ERROR,
        _rx(
            _PYTHON_FRAME,
            r"Failed to (pre)?initialize Python stub",
            r"Stub process [^\n]{0,40}(unhealthy|not healthy|exited unexpectedly)",
            r"Failed to initialize stub",
            r"\b(SyntaxError|IndentationError|TabError)\b",
            r"\bTraceback \(most recent call last\)",
            r"\(model\.py, line \d+\)",
            r"TritonModelException",
            r"Failed to create instance: \w*(Error|Exception)\b",
        ),
    ),
    # --- classes added with the message inventory; wording of third-party code and users' logs ---
    CauseRule(
        c.RUNBOOK_PYTHON_SHARED_LIBRARY_MISSING,
        _rx(
            # A Python import that needs a native library the image lacks (libGL for OpenCV, ...).
            r"(ImportError|OSError): [^\n]{0,200}\.so(\.[\w.]+)?: cannot open shared object file",
            r"(ImportError|OSError): [^\n]{0,200}cannot load library '[^']*\.so",
        ),
    ),
    CauseRule(
        c.RUNBOOK_MODEL_FILE_INVALID,
        _rx(
            # ONNX Runtime cannot read the file as an ONNX protobuf (truncated, a Git LFS pointer, HTML).
            r"Protobuf parsing failed",
            r"\bINVALID_PROTOBUF\b|onnx runtime error 7: ",
            # ONNX Runtime's graph check (INVALID_GRAPH), unless it is an operator this release lacks.
            r"This is an invalid model\."
            r"(?![^\n]{0,300}(No Op registered|Unrecognized attribute|domain_version))",
            r"\[(ShapeInferenceError|TypeInferenceError)\]",
            # PyTorch cannot open the file as a TorchScript archive (torch.save'd weights, a cut download).
            r"PytorchStreamReader failed (reading zip archive|locating file|reading file)",
            r"failed finding central directory",
            # The Python stub cannot even compile model.py: binary bytes in it (a cut copy, a broken sync).
            r"source code (?:string )?cannot contain null bytes",
        ),
    ),
    CauseRule(
        c.RUNBOOK_PYTHON_MODULE_MISSING,
        # Only the frames survived: the stub failed inside Python's import machinery.
        _rx(r"<frozen importlib\._bootstrap>\(\d+\): _find_and_load"),
    ),
    *RESTART_RULES,
)


# The order in which runbooks claim a text: specific before general. A shared-memory failure beats a
# generic Python error, a bad enum a data-type mismatch, TensorRT-LLM TensorRT, a Python import of a
# missing native library the general library rule, a negative max_batch_size the batching-support rule.
PRIORITY: Final[tuple[str, ...]] = (
    c.RUNBOOK_SHM_TOO_SMALL,
    c.RUNBOOK_HOST_RESOURCE_EXHAUSTED,
    c.RUNBOOK_POD_UNSCHEDULABLE,
    c.RUNBOOK_IMAGE_PULL_FAILED,
    c.RUNBOOK_PLATFORM_UNSUPPORTED,
    c.RUNBOOK_GPU_CONTAINER_RUNTIME,
    c.RUNBOOK_CLOUD_REPOSITORY_ACCESS,
    c.RUNBOOK_PERMISSION_DENIED,
    c.RUNBOOK_CUDA_DRIVER_MISMATCH,
    c.RUNBOOK_GPU_OUT_OF_MEMORY,
    c.RUNBOOK_PYTHON_SHARED_LIBRARY_MISSING,
    c.RUNBOOK_REPOSITORY_PATH_INVALID,
    c.RUNBOOK_BACKEND_PLATFORM_MISMATCH,
    c.RUNBOOK_BACKEND_NOT_FOUND,
    c.RUNBOOK_LLM_BACKEND_CONFIG,
    c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE,
    c.RUNBOOK_MODEL_FILE_INVALID,
    c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
    c.RUNBOOK_CONFIG_NAME_MISMATCH,
    c.RUNBOOK_CONFIG_PARSE_ERROR,
    c.RUNBOOK_MODEL_FILE_MISSING,
    c.RUNBOOK_ENSEMBLE_STEP_VERSION,
    c.RUNBOOK_ENSEMBLE_DEPENDENCY,
    c.RUNBOOK_VERSION_DIR_INVALID,
    c.RUNBOOK_INSTANCE_GROUP_INVALID,
    c.RUNBOOK_BATCHING_CONFIG_INVALID,
    c.RUNBOOK_TENSOR_NAME_MISMATCH,
    c.RUNBOOK_MODEL_IO_UNSUPPORTED,
    c.RUNBOOK_DATATYPE_MISMATCH,
    c.RUNBOOK_MAX_BATCH_SIZE_UNSUPPORTED,
    c.RUNBOOK_SHAPE_OR_DIMS_MISMATCH,
    c.RUNBOOK_PYTHON_MODULE_MISSING,
    c.RUNBOOK_PYTHON_MODEL_ERROR,
    c.RUNBOOK_POD_PROBE_FAILED,
    c.RUNBOOK_POD_CRASH_LOOPING,
)


def _both(template: re.Pattern[str], evidence: re.Pattern[str]) -> re.Pattern[str]:
    """A text holding both the template and the deciding evidence (in any order)."""
    return re.compile(rf"^(?=[\s\S]*?(?:{evidence.pattern}))[\s\S]*?(?:{template.pattern})", re.I)


def _build() -> tuple[CauseRule, ...]:
    """Hand rules and inventory entries in `PRIORITY` order; the inventory's competing evidence first."""
    placeholder, hand = HAND_RULES[0], HAND_RULES[1:]
    rules = [placeholder]
    for entry in ENTRIES:
        rules.extend(
            CauseRule(comp.runbook, _both(entry.regex, comp.when), entry.id) for comp in entry.competes
        )
    for runbook in PRIORITY:
        rules.extend(r for r in hand if r.runbook == runbook)
        rules.extend(CauseRule(runbook, e.regex, e.id) for e in ENTRIES if e.runbook == runbook)
    return tuple(rules)


CAUSE_RULES: Final[tuple[CauseRule, ...]] = _build()
"""First match wins: a text is evidence for exactly one runbook."""

RANK: Final[dict[str, int]] = {}
"""How specific a runbook is (lower wins when one model has causes of several runbooks)."""
for _rb in (c.RUNBOOK_CONFIG_PARSE_ERROR, *PRIORITY, c.RUNBOOK_UNKNOWN_LOAD_FAILURE):
    RANK.setdefault(_rb, len(RANK))

def is_harmless(text: str) -> bool:
    return HARMLESS.search(text) is not None


def is_summary(text: str) -> bool:
    return SUMMARY.search(text) is not None


def is_backend_failure(text: str) -> bool:
    return BACKEND_FAILURE.search(text) is not None


def is_server_failure(text: str) -> bool:
    return SERVER_FAILURE.search(text) is not None


# Traceback frames, in the three shapes a Triton log shows them: pybind11's "At:" block (the Python
# stub's error_already_set::what(): "  /path/file.py(36): func"), CPython's own traceback
# ('  File "/path/file.py", line 36, in func' and the source line under it), and the "At:" header.
_FRAME_LINE = re.compile(
    r"^\s*(?:"
    r"(?:<frozen [\w.]+>|\S+)\(\d+\): <?[\w.]+>?"
    r"|File \"[^\"\n]+\", line \d+(?:, in \S+)?"
    r"|At:"
    r")\s*$"
)
# A Python exception line: "ValueError: ...", "module.SomeError: ...", "KeyboardInterrupt".
_EXCEPTION_LINE = re.compile(
    r"(?m)^\s*(?:Internal: )?(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt)\b"
)
_CPYTHON_FRAME = re.compile(r'^\s*File "[^"\n]+", line \d+')


def _first_rule(text: str) -> CauseRule | None:
    for rule in CAUSE_RULES:
        if rule.pattern.search(text):
            return rule
    return None


def _first(text: str) -> str | None:
    rule = _first_rule(text)
    return rule.runbook if rule is not None else None


def _without_frames(text: str) -> str | None:
    """``text`` without its traceback frames (None when it has none): the exception lines."""
    if "\n" not in text and not _FRAME_LINE.match(text):
        return None
    kept: list[str] = []
    dropped = False
    skip_source = False
    for line in text.split("\n"):
        if skip_source:
            skip_source = False
            if line.startswith("    ") and not _FRAME_LINE.match(line):
                continue  # the source line CPython prints under a File line
        if _FRAME_LINE.match(line):
            dropped = True
            skip_source = _CPYTHON_FRAME.match(line) is not None
            continue
        kept.append(line)
    return "\n".join(kept) if dropped else None


def classify(text: str) -> str | None:
    """The runbook id of the first rule that claims ``text``; None when no rule does.

    In a Python traceback the exception line decides and the frames are context: when the text
    without its frames names a cause more specific than a generic Python error, that cause wins over
    anything read from the frames (an ``import`` frame, a library's path). The rules that read an
    exception together with its frames (ENOSPC inside ``multiprocessing`` = a full /dev/shm) keep
    their place in `PRIORITY`."""
    whole = _first_rule(text)
    if whole is None or _SHM_CONTEXT in whole.pattern.pattern:
        return whole.runbook if whole is not None else None
    head = _without_frames(text)
    if head is None:
        return whole.runbook
    exception = _first(head)
    if exception is None or exception == c.RUNBOOK_PYTHON_MODEL_ERROR:
        if whole.runbook == c.RUNBOOK_PYTHON_MODULE_MISSING and _EXCEPTION_LINE.search(head):
            # The exception line is there and names no import failure: the import frames only say
            # the error was raised while model.py was being imported.
            return c.RUNBOOK_PYTHON_MODEL_ERROR
        return whole.runbook
    return exception


def from_frames(text: str) -> bool:
    """True when ``text``'s runbook comes only from traceback frames (its exception lines name no
    cause): weaker evidence than any exception line, in this text or another one about the model."""
    head = _without_frames(text)
    if head is None:
        return False
    return _first(head) in (None, c.RUNBOOK_PYTHON_MODEL_ERROR) and classify(text) not in (
        None,
        c.RUNBOOK_PYTHON_MODEL_ERROR,
    )
