"""Pure data: the error texts of the libraries BELOW Triton's backends, read from their sources, and the
runbook page each one means (issue 20 item 1).

Triton quotes a library's failure unchanged (``failed to load 'm' version 1: Internal: <text>``), a
backend logs it on its own line, or the process prints it bare. `library_errors()` is the table of real
texts (``library_errors.yaml``, package data, read by `library_errors()` only when asked: the engine
never needs it), one per failure the library reports, with the page its cause belongs to by the page's
"Meaning" and the source that emits it; ``tests/test_diagnosis_library_errors.py`` wraps each text the
three ways and asserts the first finding. `LIBRARY_RULES` are the patterns the engine lacked for them
(ordered by `hand_rules.HAND_RULES`), `LIBRARY_COMPETES` a specific-over-generic pair for
`rules.HAND_COMPETES`, `LIBRARY_FAILURE_MARKS` the libraries' own failure wording for
`signals.BACKEND_FAILURE`.

The pages by principle:

- the GPU is not usable (no device, driver older than the runtime, CUDA cannot initialise, the PTX
  newer than the driver's compiler, every GPU busy in an exclusive compute mode, a driver daemon not
  running): ``cuda-driver-mismatch``;
- a driver library the container toolkit did not mount (``PTX JIT compiler library not found``):
  ``gpu-container-runtime``;
- no kernel for this GPU's architecture (``no kernel image``, ``invalid device function``,
  ``*_ARCH_MISMATCH``, NVRTC's ``invalid value for --gpu-architecture``, the PTX fallback failing or switched
  off): ``platform-unsupported``;
- a device number CUDA does not show the process (``invalid device ordinal``): ``instance-group-invalid``;
- a device allocation refused (``out of memory``, ``*_ALLOC_FAILED``, TensorRT's ``OutOfMemory``):
  ``gpu-out-of-memory``;
- the model file needs another library version than the image ships (ONNX IR version and opsets, a
  TorchScript archive version, TensorFlow ops or attrs unknown to this binary, an OpenVINO opset), a
  library built against another ABI (``undefined symbol``, ``GLIBC_x.y`` / ``GLIBCXX_x.y.z not
  found``, numpy's C API), or a library of another CUDA/cuDNN release: ``library-version-mismatch``;
- the file is there but is not a model the library can parse (protobuf, zip archive, IR XML, an
  inconsistent graph): ``model-file-invalid``; not there: ``model-file-missing``;
- a TensorRT plan from another TensorRT or GPU: ``trt-engine-incompatible``; a dynamic input
  without an optimization profile that fits: ``shape-or-dims-mismatch``;
- a Python model that forked a worker after CUDA was initialised in its process (PyTorch's ``Cannot
  re-initialize CUDA in forked subprocess``): the model's code, ``python-model-error``, whatever CUDA word
  the text carries;
- failures no page covers (an illegal memory access and the other kernel faults, a hardware fault, NCCL's
  unhandled errors, a TensorRT plugin the process never loaded, a library "not initialized"):
  ``unknown-load-failure`` with the text, whatever frame quotes it (`CUDA_FRAME_RULES`).

CUDA's own table (the ``cuda`` entries with ``enum``, ``releases`` and ``why``) is docs/cuda-errors.md.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from typing import Final, NamedTuple

import yaml

from triton_sre import conventions as c
from triton_sre.diagnosis.framework_rules import FRAMEWORK_RULES, ORT_OWN_DOMAIN
from triton_sre.diagnosis.llm_library_rules import LLM_LIBRARY_RULES, LLM_REFUSALS
from triton_sre.diagnosis.stack_rules import CauseRule, rx
from triton_sre.diagnosis.tool_rules import CONSOLE_SCRIPT_RUN

__all__ = [
    "CUDA_FRAME_RULES",
    "LIBRARY_COMPETES",
    "LIBRARY_FAILURE_MARKS",
    "LIBRARY_INFO",
    "LIBRARY_RULES",
    "LibraryError",
    "library_errors",
    "parse_table",
]


LIBRARY_ERRORS_FILE: Final = "library_errors.yaml"

_FIELDS: Final = ("group", "text", "runbook", "source")
_CUDA_TABLE_FIELDS: Final = ("enum", "releases", "why")
"""Optional, together: an entry of CUDA's own error table (cudaGetErrorString / cuGetErrorString)."""


class LibraryError(NamedTuple):
    group: str
    """The library (``cuda``, ``cublas``, ``cudnn``, ``nccl``, ``tensorrt``, ``onnxruntime``,
    ``pytorch``, ``tensorflow``, ``openvino``, ``dali``, ``grpc``, ``python``, ``vllm``, ``tensorrt_llm``,
    ``transformers``): which file logs it."""
    text: str
    """The text as the library (and the code calling it) words it."""
    runbook: str
    source: str
    enum: str = ""
    """CUDA's table only: the runtime's ``cudaError`` name and number, and the driver API's ``CUresult``."""
    releases: str = ""
    """CUDA's table only: the CUDA releases that word the text so (and where the wording changed)."""
    why: str = ""
    """CUDA's table only: what the error means (its doc comment) and why that is the page, or why none is."""


def parse_table(text: str) -> tuple[LibraryError, ...]:
    """``library_errors.yaml`` -> entries; ValueError names the first malformed entry."""
    doc = yaml.safe_load(text)
    entries = doc.get("entries") if isinstance(doc, dict) else None
    if not isinstance(entries, list):
        raise ValueError(f"{LIBRARY_ERRORS_FILE}: expected a mapping with an 'entries' list")
    table = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or sorted(entry) not in (
            sorted(_FIELDS),
            sorted(_FIELDS + _CUDA_TABLE_FIELDS),
        ):
            raise ValueError(
                f"{LIBRARY_ERRORS_FILE}: entry {i} must have exactly {', '.join(_FIELDS)}"
                f" (and, for CUDA's own table, {', '.join(_CUDA_TABLE_FIELDS)})"
            )
        if not all(isinstance(value, str) and value for value in entry.values()):
            raise ValueError(f"{LIBRARY_ERRORS_FILE}: entry {i}: every field is a non-empty string")
        if entry["runbook"] not in c.LOAD_FAILURE_RUNBOOKS:
            raise ValueError(f"{LIBRARY_ERRORS_FILE}: entry {i}: unknown runbook {entry['runbook']!r}")
        table.append(LibraryError(**entry))
    return tuple(table)


@cache
def library_errors() -> tuple[LibraryError, ...]:
    """The table (``library_errors.yaml``): each real text, its page, its source."""
    return parse_table(
        resources.files("triton_sre.diagnosis").joinpath(LIBRARY_ERRORS_FILE).read_text(encoding="utf-8")
    )


# The frames that quote cudaGetErrorString's (or cuGetErrorString's) text: PyTorch's c10 and most C++ checks
# ("CUDA error: "), ONNX Runtime's CUDA_CALL ("CUDA failure 3: "), TensorRT 8-10's error kind ("Cuda Runtime
# ("), TensorRT 5-8's cudaCheck ("Cuda Error in allocate: 2 ("), TensorRT-LLM's TLLM_CUDA_CHECK ("CUDA runtime
# error in <call>: "), the backends' common library (backend_common.cc: "unable to create stream: "), CuPy's
# CUDARuntimeError and a driver-API check naming the code ("cudaErrorNoDevice: ", "CUDA_ERROR_NO_DEVICE: "),
# and ggml's CUDA_CHECK ("CUDA error 3 at ggml-cuda.cu:5661: initialization error").
_CUDA_SAYS = (
    r"(?:\bCUDA (?:error|failure \d+|runtime error)(?: \d+)?: |\bCuda Runtime \(|\bCuda Error in \w+: \d+ \("
    r"|\bCUDA runtime error in [^\n]*?\): |\bunable to create stream: |\bcudaError[A-Z]\w*: "
    r"|\bCUDA_ERROR_[A-Z_]+: |\bCUDA error \d+ at [^\s:]+:\d+: )"
)

# cudaGetErrorString texts no page covers, read in a CUDA frame (see CUDA_FRAME_RULES): a kernel's own
# fault, which leaves the context unusable until the process restarts (700, 710, 714-719: the model's or a
# library's kernel bug), a hardware fault (ECC, NVLink), the display watchdog, a launch too large for the
# GPU, the driver unloading while the process exits, a refusal no page explains (800, 801, 304), a vGPU
# without a licence, MPS, and "unknown error".
_CUDA_NO_PAGE: Final = (
    "an illegal memory access was encountered",
    "an illegal instruction was encountered",
    "misaligned address",
    "operation not supported on global/shared address space",
    "invalid program counter",
    "unspecified launch failure",
    "device-side assert triggered",
    "hardware stack error",
    "uncorrectable ECC error encountered",
    "uncorrectable NVLink error detected during the execution",
    "the launch timed out and was terminated",
    "too many resources requested for launch",
    "driver shutting down",
    "operation not permitted",
    "operation not supported",
    "OS call failed or operation not supported on this OS",
    "shared object initialization failed",
    "shared object symbol not found",
    "device doesn't have valid Grid license",
    "MPS client failed to connect to the MPS control daemon or the MPS server",
    "unknown error",
)

_NO_PAGE_TEXTS: Final = "|".join(re.escape(text) for text in _CUDA_NO_PAGE)
_CUDA_NO_PAGE_SAID: Final = rx(rf"{_CUDA_SAYS}(?:{_NO_PAGE_TEXTS})")

CUDA_FRAME_RULES: Final[tuple[CauseRule, ...]] = (
    # cudaErrorInvalidDevice (101) / CUDA_ERROR_INVALID_DEVICE: the device ordinal asked for is not one
    # CUDA shows this process (a config's or model's GPU id beyond the visible GPUs).
    CauseRule(
        c.RUNBOOK_INSTANCE_GROUP_INVALID,
        rx(
            rf"{_CUDA_SAYS}invalid device ordinal\b",
            r"\bcudaErrorInvalidDevice\b|\bCUDA_ERROR_INVALID_DEVICE\b",
        ),
        "CUDA cudaErrorInvalidDevice (101) / CUDA_ERROR_INVALID_DEVICE",
    ),
    # Core's stream creation failing for want of memory is memory, not the driver its template reads.
    CauseRule(
        c.RUNBOOK_GPU_OUT_OF_MEMORY,
        rx(r"\bunable to create stream: out of memory\b"),
        "CUDA cudaErrorMemoryAllocation (2) in backend_common.cc CreateCudaStream",
    ),
    # A text no page covers, where a rule would read the frame or the words as another page: core's stream
    # creation (its template reads as the driver's), TensorRT 8.6-10's "Cuda Runtime (<text>)" (its words as
    # a backend's or an engine's), cudaErrorNotPermitted (800, not a file's EACCES),
    # cudaErrorIllegalInstruction (715, the GPU's, not a CPU without AVX). Elsewhere the engine's own
    # fallback reads them, and a crash beside them is the crash's page.
    CauseRule(
        c.RUNBOOK_UNKNOWN_LOAD_FAILURE,
        rx(
            rf"\b(?:unable to create stream: |Error Code \d+: Cuda Runtime \()(?:{_NO_PAGE_TEXTS})",
            rf"{_CUDA_SAYS}(?:operation not permitted|an illegal instruction was encountered)\b",
        ),
        "CUDA cudaGetErrorString texts no page covers (library_errors.yaml, group cuda)",
    ),
)
"""CUDA's own text in a CUDA frame decides over the page the frame or its words would otherwise read as
(core's ``unable to create stream:`` as the driver's, ``operation not permitted`` as a file's, an illegal
instruction as the CPU's): placed first by `rules._build`."""

_TRT_CUDA_INIT: Final = r"\bCUDA initiali[sz]ation failure with error:? \d+"
"""TensorRT's own check of CUDA (a cause rule's pattern and, logged at W in 8.x, a failure mark)."""
_TORCH_NO_KERNELS: Final = (
    r"\bwith CUDA capability sm_\d+ is not compatible with the current PyTorch installation\b"
)
"""PyTorch's capability check, a UserWarning (a cause rule's pattern and a failure mark)."""

LIBRARY_RULES: Final[tuple[CauseRule, ...]] = (
    CauseRule(
        c.RUNBOOK_CUDA_DRIVER_MISMATCH,
        rx(
            rf"{_CUDA_SAYS}initialization error\b",
            r"\bcudaErrorInitializationError\b|\bCUDA_ERROR_NOT_INITIALIZED\b",
            r"\bunsupported display driver / cuda driver combination\b",
            r"\bcudaErrorSystemDriverMismatch\b|\bCUDA_ERROR_SYSTEM_DRIVER_MISMATCH\b",
            r"\bCUDA-capable device\(s\) is/are busy or unavailable\b|\bcudaErrorDevicesUnavailable\b",
            r"\bCUDA driver is a stub library\b|\bcudaErrorStubLibrary\b|\bCUDA_ERROR_STUB_LIBRARY\b",
            r"\bCUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE\b|\bcudaErrorCompatNotSupportedOnDevice\b",
            # cudaErrorDevicesUnavailable (46) as CUDA 11.x and earlier word it (the newer wording above),
            # and the driver API's name for it; cudaErrorDeviceAlreadyInUse (216): a compute mode that
            # gives the GPU to one process or thread, held by another.
            r"\ball CUDA-capable devices are busy or unavailable\b|\bCUDA_ERROR_DEVICE_UNAVAILABLE\b",
            r"\bexclusive-thread device already in use by a different thread\b",
            r"\bcudaErrorDeviceAlreadyInUse\b|\bCUDA_ERROR_CONTEXT_ALREADY_IN_USE\b",
            # cudaErrorSystemNotReady (802): the host's driver daemons (Fabric Manager on NVSwitch systems)
            # are not running.
            rf"{_CUDA_SAYS}system not yet initialized\b",
            # The driver API's own entry point failing with one of these codes (CUresult: 3 NOT_INITIALIZED,
            # 34 STUB_LIBRARY, 35 INSUFFICIENT_DRIVER, 802 SYSTEM_NOT_READY, 803 SYSTEM_DRIVER_MISMATCH, 804
            # COMPAT_NOT_SUPPORTED_ON_DEVICE), as programs print it ("cuInit(0) failed with error 802"). (100,
            # no device, is a CPU host's everyday answer and stays out.)
            r"\bcuInit\(\w*\) failed with error (?:3|34|35|802|803|804)\b",
            # Ollama's GPU discovery (discover/gpu_info_nvcuda.c: "cuInit err: %d"), 999 (CUDA_ERROR_UNKNOWN)
            # included: the driver itself failed (a stale libcuda, a wedged module); 100 stays out.
            r"\bcuInit err: (?:3|34|35|802|803|804|999)\b",
            # PyTorch's device-count warning (c10/cuda/CUDAFunctions.cpp: "... Error 802: system not yet
            # initialized") quotes the code and cudaGetErrorString's text without CUDA's own frame.
            r"\bError 80[234]: (?:system not yet initialized|system has unsupported display driver / cuda"
            r" driver combination|forward compatibility was attempted on non supported HW)\b",
            # The driver's own libcuda lacking a driver-API entry point the runtime or program calls (Ollama's
            # dlsym of cuCtxCreate_v3 in libcuda.so.418.74): a driver older than the code needs.
            r"\blibcuda\.so[\d.]*: undefined symbol: cu[A-Z]\w*",
            # TorchServe's GPU discovery (frontend ConfigManager.getAvailableGpu) asserting on nvidia-smi's
            # output: its GPU image started where nvidia-smi finds no GPU or driver.
            r"\bjava\.lang\.AssertionError: Unexpected nvidia-smi response\b",
            r"\bcudaErrorSystemNotReady\b|\bCUDA_ERROR_SYSTEM_NOT_READY\b",
            # cudaErrorInvalidKernelImage (200): the driver cannot load the image, in practice one built by
            # a newer CUDA than the driver reads (a compressed fatbin before driver 550).
            rf"{_CUDA_SAYS}device kernel image is invalid\b",
            r"\bcudaErrorInvalidKernelImage\b|\bCUDA_ERROR_INVALID_IMAGE\b",
            # torch/serialization.py: a checkpoint saved on a GPU, loaded where CUDA sees none.
            r"\bon a CUDA device but torch\.cuda\.is_available\(\) is False\b",
            # The driver's own libraries (libnvidia-container nvc_info.c compute_libs / utility_libs: what the
            # NVIDIA Container Toolkit mounts) not found by the loader: no driver where the process runs.
            r"\blib(?:cuda|nvidia-ml)\.so(?:\.1)?: cannot open shared object file\b",
            # NVML's codes as pynvml raises them (nvidia-ml-py pynvml.py): no libnvidia-ml to load, the kernel
            # module not loaded, the driver's user and kernel halves of two releases.
            r"\bNVML Shared Library Not Found\b|\bNVMLError_(?:LibraryNotFound|DriverNotLoaded)\b",
            r"\bRM has detected an NVML/RM version mismatch\b|\bNVMLError_LibRmVersionMismatch\b",
            # TensorRT's own check of CUDA before a builder or runtime exists (5-7: "Cuda initialization
            # failure with error 35. Please check cuda installation", 8-10: "CUDA initialization failure with
            # error: 222. Please check your CUDA installation"): CUDA could not start, whatever the code.
            _TRT_CUDA_INIT,
            # A CUDA check macro of TensorRT plugins and samples ("Cuda failure in file 'yolo_layer.cu' line
            # 51: 35") with a code that is the driver's: 3, 34, 35 (insufficient driver), 222 (PTX newer than
            # the driver), 803, 804.
            r"\bCuda failure in file '[^'\n]+' line \d+: (?:3|34|35|222|803|804)\b(?![.\d])",
        ),
        "CUDA runtime/driver error strings and enum names (cuda_runtime_api.h, cuda.h, 11.0-12.6); "
        "PyTorch torch/serialization.py; libnvidia-container src/nvc_info.c (the driver's libraries); "
        "nvidia-ml-py pynvml.py (NVML's codes)",
    ),
    CauseRule(
        c.RUNBOOK_PLATFORM_UNSUPPORTED,
        rx(
            r"\bno kernel image is available for execution on the device\b",
            r"\bcudaErrorNoKernelImageForDevice\b|\bCUDA_ERROR_NO_BINARY_FOR_GPU\b",
            r"\b(?:CUBLAS|CUDNN)_STATUS_ARCH_MISMATCH\b",
            # NVRTC refusing the -arch it was given (NVRTC_ERROR_INVALID_OPTION): its toolkit has no
            # target for this GPU (a GPU newer, or older, than the image's CUDA compiles for).
            r"\binvalid value for --gpu-architecture \(-arch\)",
            # cudaErrorInvalidPtx (218), cudaErrorJitCompilationDisabled (223): no kernel built for this
            # GPU, and the fallback, the driver compiling the PTX, failed or is switched off.
            rf"{_CUDA_SAYS}a PTX JIT compilation failed\b|\bcudaErrorInvalidPtx\b|\bCUDA_ERROR_INVALID_PTX\b",
            r"\bPTX JIT compilation was disabled\b",
            # Hugging Face's text-embeddings-inference (backends/candle: the GPU's compute capability against
            # the one the image's kernels were compiled for).
            r"\bRuntime compute cap \d+ is not compatible with compile time compute cap \d+",
            r"\bcudaErrorJitCompilationDisabled\b|\bCUDA_ERROR_JIT_COMPILATION_DISABLED\b",
            # TensorRT on a GPU its release does not know: the builder's "Unsupported SM" (7.x "Assertion
            # failed: Unsupported SM.", 10.x "Internal Error (Unsupported SM: 0x601)") and its NVRTC's "SM
            # version not supported in this NVRTC version".
            r"\bUnsupported SM\b",
            r"\bSM version not supported in this NVRTC version\b",
            # Other engines' builds without kernels for the GPU or without CUDA at all: llama.cpp's ggml-cuda
            # ("ggml-cuda was compiled without support for the current GPU architecture"), CTranslate2 ("This
            # CTranslate2 package was not compiled with CUDA support"), ROCm's rocBLAS ("Cannot read
            # .../TensileLibrary.dat: No such file or directory for GPU arch : gfx90c").
            r"\bwas compiled without support for the current GPU architecture\b",
            r"\bpackage was not compiled with CUDA support\b",
            r"\bTensileLibrary\w*\.dat\b[^\n]{0,80}\bfor GPU arch\b",
            # PyTorch's capability check (torch/cuda/__init__.py _check_capability: "<GPU> with CUDA
            # capability sm_120 is not compatible with the current PyTorch installation."): no kernels for it.
            _TORCH_NO_KERNELS,
        ),
        "CUDA cudaErrorNoKernelImageForDevice (209), cudaErrorInvalidPtx (218), "
        "cudaErrorJitCompilationDisabled (223); cuBLAS/cuDNN *_STATUS_ARCH_MISMATCH; NVRTC's "
        "--gpu-architecture refusal",
    ),
    # cudaErrorJitCompilerNotFound (221): the driver's PTX compiler (libnvidia-ptxjitcompiler.so) is not in
    # the container: the toolkit did not mount it (the `compute` driver capability, a CSV/CDI spec).
    CauseRule(
        c.RUNBOOK_GPU_CONTAINER_RUNTIME,
        rx(
            r"\bPTX JIT compiler library not found\b",
            r"\bcudaErrorJitCompilerNotFound\b|\bCUDA_ERROR_JIT_COMPILER_NOT_FOUND\b",
        ),
        "CUDA cudaErrorJitCompilerNotFound (221) / CUDA_ERROR_JIT_COMPILER_NOT_FOUND",
    ),
    # Torch-TensorRT's runtime (core/runtime: a TorchScript module whose embedded engines another
    # Torch-TensorRT serialized, "Program to be deserialized targets an incompatible Torch-TensorRT ABI").
    CauseRule(
        c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE,
        rx(r"\bProgram to be deserialized targets an incompatible Torch-TensorRT ABI\b"),
        "Torch-TensorRT core/runtime (the serialized ABI version check)",
    ),
    CauseRule(
        c.RUNBOOK_GPU_OUT_OF_MEMORY,
        rx(r"\b(?:CUBLAS|CUDNN)_STATUS_ALLOC_FAILED\b"),
        "cuBLAS cublasStatus_t / cuDNN cudnnStatus_t *_STATUS_ALLOC_FAILED",
    ),
    CauseRule(
        c.RUNBOOK_SHAPE_OR_DIMS_MISMATCH,
        rx(r"\bdoes not satisfy any optimization profile\b"),
        "TensorRT executionContext.cpp setInputShape (8.5-10.x)",
    ),
    CauseRule(
        c.RUNBOOK_DATATYPE_MISMATCH,
        rx(r"\bUnexpected input data type\. Actual: "),
        "ONNX Runtime core/framework/utils.cc (input type check)",
    ),
    CauseRule(
        c.RUNBOOK_MODEL_FILE_INVALID,
        rx(
            # TensorFlow's ReadBinaryProto on a SavedModel or GraphDef (ReadTextProto on a SavedModel's
            # text form); core's own (a config.pb) shares the wording and stays config-parse-error
            # (inventory core-binary-proto).
            r"\bCan't parse \S*(?:saved_model\.pb|\.graphdef) as binary proto\b",
            r"\bCan't parse \S*saved_model\.pbtxt as text proto\b",
            r"\[ NETWORK_NOT_READ \] Unable to read the model\b",
            r"\bIncorrect weights in bin file\b",
        ),
        "TensorFlow core/platform/env.cc ReadBinaryProto; OpenVINO core read_model / IR deserializer",
    ),
    # ONNX Runtime's graph resolution finds no schema for a node ("<domain>:<op>(<since version>) is not a
    # registered function/op"). In its own domains the release or build lacks the op (a newer op, a contrib
    # op left out); any other domain is a custom op: a library the config does not load, or a file exported
    # for another runtime (TensorRT's plugin ops, `TRT:EfficientNMS_TRT(-1)`). Older releases name the op
    # alone, which says neither, except a TensorRT plugin's own name (TensorRT names its plugin creators
    # `<Name>_TRT`: `EfficientNMS_TRT is not a registered function/op`), a custom op all the same.
    CauseRule(
        c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
        rx(rf"(?<![\w.]){ORT_OWN_DOMAIN}:\w+\(-?\d+\) is not a registered function/op"),
        "ONNX Runtime core/graph/graph.cc, core/graph/constants.h",
    ),
    CauseRule(
        c.RUNBOOK_MODEL_FILE_INVALID,
        rx(
            rf"(?<![\w.])(?!{ORT_OWN_DOMAIN}:)[A-Za-z_][\w.]*:\w+\(-?\d+\) is not a registered function/op",
            r"(?<![\w.:])\w+_TRT is not a registered function/op",
        ),
        "ONNX Runtime core/graph/graph.cc, core/graph/constants.h",
    ),
    CauseRule(
        c.RUNBOOK_CONFIG_PARSE_ERROR,
        # TensorRT Inference Server (before 20.x) read config.pbtxt with TensorFlow's ReadTextProto; core
        # words it "failed to read text proto from <path>" since (inventory).
        rx(r"\bCan't parse \S*config\.pbtxt as text proto\b"),
        "TensorFlow core/platform/env.cc ReadTextProto (TensorRT Inference Server 19.x server.cc)",
    ),
    CauseRule(
        c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
        rx(
            r"\bCUDNN_STATUS_VERSION_MISMATCH\b",
            r"\bLoaded runtime CuDNN library: [\d.]+ but source was compiled with: ",
            r"\bOp type not registered '[^'\n]+' in binary\b",
            r"\bnumpy\.core\.multiarray failed to import\b|\b_ARRAY_API not found\b",
            r"\bcompiled using NumPy \d\.x cannot be run in\s+NumPy \d",
            r"\bnumpy\.dtype size changed, may indicate binary incompatibility\b",
            # DALI's SchemaRegistry::GetSchema (dali/pipeline/operator/op_schema.cc): the serialized
            # pipeline names an operator the backend's libdali does not know (serialized by a newer DALI).
            r"\bSchema for operator '[^'\n]+' not registered\b",
            # A gRPC server without the method the client calls (gRPC's UNIMPLEMENTED with no details,
            # or "Method not found"), relayed by tritonclient: client and server of other protocol releases.
            r"\[StatusCode\.UNIMPLEMENTED\]"
            r"(?:(?![^\n]*\w)|[ \t]*(?:Method not found|unknown (?:service|method))\b)",
            # ... and grpcio's own _InactiveRpcError with empty details.
            r"\bstatus = StatusCode\.UNIMPLEMENTED\s+details = \"(?:\"|Method not found\b)",
        ),
        "cuDNN CUDNN_STATUS_VERSION_MISMATCH; TensorFlow cuda_dnn.cc, core/framework/op.cc; numpy C-API "
        "import (__multiarray_api.h, 1.x and 2.0); Cython's type size check; DALI op_schema.cc; gRPC "
        "status UNIMPLEMENTED",
    ),
    CauseRule(
        c.RUNBOOK_MODEL_FILE_MISSING,
        rx(
            r"\bCould not find SavedModel \.pb or \.pbtxt at supplied\b",
            r"\bSavedModel file does not exist at: ",
            r"\[ NETWORK_NOT_READ \] Model file \S+ cannot be opened\b",
        ),
        "TensorFlow cc/saved_model/reader.cc, python/saved_model/loader_impl.py; OpenVINO IR frontend",
    ),
    # FastDeploy's Python package failing to import its compiled extension (c_lib_wrap.py.in raises
    # RuntimeError("FastDeploy initalized failed!") from a bare except, later with "Error: <the loader's
    # error>"): the package is installed and its native part does not load, python-shared-library-missing's
    # Meaning. An appended error other than a library the loader cannot open (a GLIBCXX version, an
    # undefined symbol) is left to its own rule.
    CauseRule(
        c.RUNBOOK_PYTHON_SHARED_LIBRARY_MISSING,
        rx(
            r"\bFastDeploy initalized failed!(?! Error:)",
            r"\bFastDeploy initalized failed! Error: [^\n]{0,200}\.so(?:\.[\w.]+)?: cannot open shared object"
            r" file",
        ),
        "PaddlePaddle/FastDeploy python/fastdeploy/c_lib_wrap.py.in (the import of its compiled extension)",
    ),
    # PyTorch's torch.cuda._lazy_init in a process forked after CUDA was initialised (its _is_in_bad_fork
    # check; the text since 2017, "... To use CUDA with multiprocessing, you must use the 'spawn' start
    # method"): model.py forked a worker (multiprocessing's default start method on Linux, a DataLoader with
    # workers) once the stub's process had used CUDA. No driver or GPU is at fault: the model's code is. Read
    # as the RuntimeError it is raised as, not in a program run from a shell (CONSOLE_SCRIPT_RUN: no model).
    CauseRule(
        c.RUNBOOK_PYTHON_MODEL_ERROR,
        re.compile(
            rf"^(?![\s\S]*?\bTraceback \(most recent call last\){CONSOLE_SCRIPT_RUN})"
            r"[\s\S]*?\bRuntimeError: Cannot re-initialize CUDA in forked subprocess\b"
        ),
        "pytorch/pytorch torch/cuda/__init__.py _lazy_init (_is_in_bad_fork)",
    ),
    # vLLM, TensorRT-LLM, transformers / huggingface_hub / tokenizers / safetensors, protobuf (their module).
    *LLM_LIBRARY_RULES,
    # ONNX Runtime, libtorch, TensorFlow, TensorRT 7/10, OpenVINO (their module).
    *FRAMEWORK_RULES,
)
"""Patterns for the texts of the table no other rule read (`hand_rules.HAND_RULES` orders them)."""

LIBRARY_COMPETES: Final[tuple[tuple[str, str, re.Pattern[str]], ...]] = (
    # TensorRT cannot rebuild a plugin layer (pluginV2Runner.cpp "Serialization assertion creator
    # failed.Cannot deserialize plugin"): the plugin's library was never loaded, not an engine from another
    # TensorRT; no page covers it (as BACKEND_FAILURE's plugin lines).
    (
        c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE,
        c.RUNBOOK_UNKNOWN_LOAD_FAILURE,
        rx(r"\bCannot deserialize plugin\b|\bIPluginCreator not found\b"),
    ),
    # A Python model's exception quoting a CUDA text no page covers (an illegal memory access, an ECC error,
    # a device-side assert): the model's code did not fail, CUDA did; the fallback says so with the text.
    (c.RUNBOOK_PYTHON_MODEL_ERROR, c.RUNBOOK_UNKNOWN_LOAD_FAILURE, _CUDA_NO_PAGE_SAID),
)
"""(generic, specific, evidence) pairs for `rules.HAND_COMPETES`."""

LIBRARY_FAILURE_MARKS: Final[tuple[str, ...]] = (
    # cuBLAS / cuDNN failures as their callers state them (ONNX Runtime's "CUBLAS failure 3: ", "CUDNN
    # failure 4: ", PyTorch's and the apps' "cuDNN error: "); a status name alone is not one (TensorRT-LLM
    # warns "Fail to get CUBLAS_STATUS_NOT_SUPPORTED workspace" on healthy starts). NCCL's ncclResult_t
    # names and "NCCL error".
    r"\b(?:cuDNN|CUDNN|cuBLAS|CUBLAS) (?:error|failure \d+): ",
    r"\bNCCL error\b|\bnccl(?:UnhandledCudaError|SystemError|InternalError|InvalidArgument|InvalidUsage"
    r"|RemoteError)\b",
    # TensorRT's CUDA check (at W level in 8.x: the builder it could not make is the failure) and ROCm's
    # rocBLAS ("rocBLAS error: Cannot read ...").
    _TRT_CUDA_INIT,
    r"^rocBLAS error: ",
    _TORCH_NO_KERNELS,
    # Ollama's cuInit report (not 100: no device on a CPU host), ggml's CUDA_CHECK of old ("CUDA error 304 at
    # ggml-cuda.cu:5065: OS call failed ..."; today "CUDA error: <text>" with "current device" lines).
    r"\bcuInit err: (?!100\b)\d+",
    r"\bCUDA error \d+ at \S+:\d+: ",
    r"\bCuda failure in file '[^'\n]+' line \d+: \d+",
    # TensorRT 10's registry errors carry no [file::func::line] prefix.
    r"\bIPluginRegistry::\w+: Error Code \d+: ",
    # OpenVINO's OPENVINO_THROW ("Exception from src/<file>:<line>:") and its status names.
    r"\bException from src/\S+:\d+:",
    r"\[ (?:GENERAL_ERROR|NOT_FOUND|NETWORK_NOT_READ|NETWORK_NOT_LOADED|NOT_IMPLEMENTED|PARAMETER_MISMATCH"
    r"|UNEXPECTED|OUT_OF_BOUNDS|NOT_ALLOCATED) \]",
    # vLLM's refusals of its engine arguments, worded without a failure word.
    *LLM_REFUSALS,
)
"""A library's own failure wording (`signals.BACKEND_FAILURE` reads them): never an empty answer."""

LIBRARY_INFO: Final[tuple[str, ...]] = (
    # NCCL's own INFO level (NCCL_DEBUG=INFO, src/debug.cc: "<host>:<pid>:<tid> [<dev>] NCCL INFO <msg>"):
    # never a failure, even when it reports a plugin it did not find ("NET/Plugin : dlerror=libnccl-net.so:
    # cannot open shared object file ... using internal implementation" on every healthy multi-GPU start).
    r"^\S+:\d+:\d+ \[\d+\] NCCL INFO ",
)
"""Lines a library marks informational (`signals.HARMLESS` reads them)."""
