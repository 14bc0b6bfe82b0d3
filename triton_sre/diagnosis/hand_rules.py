"""Pure data: the wording of third-party code that surfaces inside Triton's messages.

CUDA, ONNX Runtime, TensorRT, PyTorch, Python tracebacks and the layers around the server
(`host_rules.py`, `stack_rules.py`, `backend_rules.py`), one `CauseRule` each. Taken from the real Triton 2.51
server (``tests/test_diagnosis_realtriton.py``) and from logs users posted (cited in
``tests/data/logs/gpu/`` and ``tests/data/logs/tune/``; never from a held-out set). `rules.py`
orders them with the message inventory's rules into ``CAUSE_RULES``.
"""

from __future__ import annotations

from typing import Final

from triton_sre import conventions as c
from triton_sre.diagnosis.backend_rules import BELOW_BACKEND_RULES
from triton_sre.diagnosis.crash_rules import CRASH_RULES
from triton_sre.diagnosis.host_rules import HOST_RULES
from triton_sre.diagnosis.library_errors import LIBRARY_RULES
from triton_sre.diagnosis.llm_library_rules import not_on_info_line
from triton_sre.diagnosis.orchestrator_rules import ORCHESTRATOR_RULES
from triton_sre.diagnosis.server_rules import OPTION_RULES, PORT_RULES
from triton_sre.diagnosis.signals import ENTRYPOINT_DRIVER_BANNER, STUB_DIED
from triton_sre.diagnosis.stack_rules import RESTART_RULES, STACK_RULES, WINDOWS_RULES, CauseRule
from triton_sre.diagnosis.stack_rules import rx as _rx
from triton_sre.diagnosis.tool_rules import CONSOLE_SCRIPT_RUN, TOOL_RULES

__all__ = [
    "ENTRY_POINT_FRAME",
    "HAND_RULES",
    "MISSING_SUBMODULE",
    "PLUGIN_FIELDS_MISREAD",
    "STEP_ERROR",
]

MISSING_SUBMODULE: Final = (
    # Python names the first part of a dotted import it cannot find, so `No module named 'pkg.sub'`
    # says `pkg` imported and lacks `sub`: moved or renamed between releases (a pickle or code written
    # for another release of the package), as `cannot import name 'X' from 'pkg'` is for a name. Not
    # for namespace packages (PEP 420: `google.protobuf` missing says nothing of `google`), nor for
    # `'pkg.sub'; 'pkg' is not a package` (a module shadowing the package).
    r"No module named '(?!(?:google|azure|nvidia|backports|mpl_toolkits|zope|jaraco|sphinxcontrib"
    r"|opentelemetry)\.)[A-Za-z_]\w*(?:\.\w+)+'(?!; )"
)


# A frame of the model's own code in the stub's traceback ("At:" then "  /m/1/model.py(36): initialize"),
# or of the backend's entry points wherever the model class defines them (a base class in a package:
# "/x/paddlex_hps_server/base_model.py(80): initialize"): the model's Python raised.
ENTRY_POINT_FRAME: Final = (
    r"(?m:^\s*\S+\.py\(\d+\): (?:initialize|execute|finalize|auto_complete_config)[ \t]*$)"
)
"""A stub "At:" frame of the Python backend's entry points (TritonPythonModel's methods the stub calls)."""
_PYTHON_FRAME = rf"(?:(?m:^\s+\S*/model\.py\(\d+\): <?\w+)|{ENTRY_POINT_FRAME})"
# A model status reason that is a Python exception: "Internal: <module.>ExceptionType: ".
_PYTHON_STATUS = (
    # The status alone, after a load failure, or quoted by core's "version N is at UNAVAILABLE state:"
    # (error: creating server, an ensemble's dependency); an exception raised without a message (a bare
    # ``assert``) leaves "AssertionError:" at the end of the line.
    r"(?:^|UNAVAILABLE: |version \d+: |UNAVAILABLE state: )Internal: (?:[A-Za-z_]\w*\.)*[A-Z]\w*"
    r"(?:Error|Exception):(?: |[ \t]*(?=\n|$))"
)

# A plugin's deserializing constructor reading its fields to another length than were serialized (every
# TensorRT-LLM plugin checks "d == a + length"; later releases word the same check "Expected length (N) !=
# real length (M). This is often caused by using different TensorRT-LLM version to build engine and run
# engine.", gptAttentionCommon.cpp): the plan was built by another release of the plugin.
PLUGIN_FIELDS_MISREAD: Final = (
    r"(?:\bAssertion (?:failed: |`)d == a \+ length\b|\bExpected length \(\d+\) != real length \(\d+\))"
)

# The Python backend's reply to requests its model failed to execute (python_be.cc, r21.xx on).
_STEP_FAILED = r"Failed to process the request\(s\) for model instance '[^'\n]*', message: "
# A step's own error as its backend words it: onnxruntime_backend's RETURN_IF_ORT_ERROR ("onnx runtime
# error <code>: <msg>", src/onnxruntime_utils.h), the PyTorch backend's "PyTorch execute failure: <what>"
# (src/libtorch.cc), and the Python backend's reply above.
STEP_ERROR: Final = rf"(?:{_STEP_FAILED}|onnx runtime error \d+: |PyTorch execute failure: )"

HAND_RULES: Final[tuple[CauseRule, ...]] = (
    *HOST_RULES,
    *PORT_RULES,
    *OPTION_RULES,
    *STACK_RULES,
    *ORCHESTRATOR_RULES,
    *TOOL_RULES,
    *WINDOWS_RULES,
    *BELOW_BACKEND_RULES,
    *LIBRARY_RULES,
    CauseRule(
        c.RUNBOOK_CUDA_DRIVER_MISMATCH,
        _rx(
            # The entrypoint's driver check: the host driver is older than the image's CUDA and the
            # forward-compatibility libraries cannot help (a GeForce GPU, a Jetson, an old branch).
            *ENTRYPOINT_DRIVER_BANNER,
            r"No supported GPU\(s\) detected to run this container",
            r"Failed to detect NVIDIA driver version",
            r"Failed to load libcuda\.so",
            r"driver version is insufficient for CUDA runtime",
            r"no CUDA-capable device is detected",
            r"CUDA_ERROR_NO_DEVICE|cudaErrorNoDevice|cudaErrorInsufficientDriver",
            # cudaErrorCallRequiresNewerDriver (36): the CUDA runtime needs a newer driver than the
            # host's; cudaGetErrorString words it "API call is not supported in the installed CUDA driver".
            r"API call is not supported in the installed CUDA driver|cudaErrorCallRequiresNewerDriver",
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
            # (NVML's "Unknown Error" and "Insufficient Permissions" in a container are the runtime's:
            # `stack_rules`, gpu-container-runtime)
            r"Failed to initialize NVML: *Driver/library",
            r"NVML[_ ]ERROR\w*",
            r"Driver/library version mismatch",
        ),
    ),
    CauseRule(
        c.RUNBOOK_GPU_OUT_OF_MEMORY,
        _rx(
            # (not advice about a condition: vLLM's model runner prints "CUDA graphs can take additional 1~3
            # GiB memory per GPU. If you are running out of memory, consider decreasing
            # `gpu_memory_utilization` ..." at INFO on every start that captures CUDA graphs, 0.4-0.6)
            r"(?<!\bif you are running )(?<!\bif you're running )\bout of memory\b",
            r"CUDA_ERROR_OUT_OF_MEMORY|cudaErrorMemoryAllocation|OutOfMemoryError",
            r"Error Code 2: OutOfMemory",
            r"OOM when allocating",
            r"CUDA failure 2\b",
            # TensorRT 5-7's runtime ("runtime.cpp (24) - Cuda Error in allocate: 2"): cudaError_t 2 is
            # cudaErrorMemoryAllocation (CUDA's driver_types.h).
            r"\bCuda Error in \w+: 2\b",
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
            # core src/backend_model.cc since the Python-based backends (r23.xx): "unable to find
            # '<lib>' or '<backend>/model.py' for model '<m>', in <backend dir>".
            r"unable to find '[^']*'(?: or '[^']*')? for model '[^']*', in \S*backends",
            r"unexpected platform type",
            r"unknown platform",
            # ... but not when dlerror names another library than the backend's own: that is a
            # dependency of the backend (library-version-mismatch); nor when it found the backend's
            # library and a symbol in it did not resolve (core's shared_library.cc quotes dlerror's
            # "<path>: undefined symbol: <name>"): a backend built against another core or libraries.
            r"unable to (load|find) backend\b(?! library: (?![^:\s]*libtriton_)[^:\s]*\.so[\w.]*: cannot"
            r" open)(?![^\n]{0,200}\bin static TLS block)(?![^\n]{0,300}: undefined symbol: )",
        ),
    ),
    CauseRule(
        c.RUNBOOK_LLM_BACKEND_CONFIG,
        not_on_info_line(
            r"\[TensorRT-LLM\]\[(ERROR|FATAL)\]",
            r"tensorrt_llm::|libtriton_tensorrtllm|inflight_batcher_llm",
            # FasterTransformer's and TurboMind's (lmdeploy) own checks (FT_CHECK / TM_CHECK throw through
            # throwRuntimeError, src/.../utils/cuda_utils.h): a crash frame in it, demangled or not, is the
            # backend refusing the model's parameters (tensor parallelism, vocabulary, weights layout).
            r"\b(?:turbomind|fastertransformer)::throwRuntimeError\b",
            r"_ZN(?:9turbomind|17fastertransformer)17throwRuntimeError",
            r"gpt_model_path|encoder_model_path|decoder_model_path|engine_dir",
            r"json\.exception",
            # (vLLM by name or by its package's path, not a container or pod named after it: "Stopping
            # container vllm-lmcache", "Started container vllm")
            r"\[vllm\]|\bvllm\.|(?<!-)(?<!container )(?<!container \")\bvLLM\b(?!-)",
            r"AsyncLLMEngine|AsyncEngineArgs|build_async_engine_client",
            r"\bmodel\.json\b",
        ),
    ),
    CauseRule(
        c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE,
        _rx(
            r"Serialization assertion",
            r"Version tag does not match",
            # the same assertion's note, quoted alone (stdArchiveReader.cpp, TensorRT 8.6-10.x)
            r"\bCurrent Version: \d+, Serialized Engine Version: \d+",
            r"Engine deserialization failed",
            r"Failed to deserialize (the )?cuda engine",
            PLUGIN_FIELDS_MISREAD,
            # Myelin keeps the cuDNN/cuBLAS it was built with (graphContext.h: plan from another image)
            r"\bCompiled against cu(?:DNN|BLAS(?:Lt)?) [\d.]+ but running against cu",
            # (not TensorRT 8.0-8.2 INFO "[MemUsageSnapshot] deserializeCudaEngine begin|end" of a good load)
            r"deserializeCudaEngine(?! (?:begin|end)\b)",
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
            # (not "failed to build": building fails for any reason, the builder's error says which)
            r"failed to (create|load) (the )?(CUDA|TensorRT|TRT) engine",
            # TensorRT's Python IRuntime.deserialize_cuda_engine returns None (no exception) for a plan
            # it cannot deserialize; the caller's next step on the engine is an AttributeError on
            # NoneType: create_execution_context[_without_device_memory] (TensorRT-LLM's runtime
            # session.py from_serialized_engine, polygraphy, user code alike). A Python model's
            # traceback carrying it failed on the engine, not in its own code.
            r"'NoneType' object has no attribute 'create_execution",
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
            # PyTorch 1.11+ (torch/csrc/jit/serialization/import.cpp) refuses the pre-1.4 TorchScript archive
            # (model.json) with this misleading "on mobile" wording: a model from a far older PyTorch.
            r"Legacy model format is not supported",
            r"undefined symbol",
            # Windows' loader for a DLL that lacks an export (ERROR_PROC_NOT_FOUND), as CPython's extension
            # loader (Python/dynload_win.c) reports it: the Windows "undefined symbol".
            r"DLL load failed(?: while importing \w+)?: The specified procedure could not be found",
            # Python's ImportError for a name (PEP 328 semantics; "from 'mod' (path)" since 3.8, bare
            # before, and as docs quote it): the module was found and imported but lacks the name, so the
            # installed package is another release than the code importing it expects; a circular import
            # is the code's own bug.
            r"cannot import name '[^'\n]+'(?: from '[^'\n]+')?(?! \(most likely due to a circular import\))"
            r"(?![^\n]*partially initialized)",
            MISSING_SUBMODULE,
            # the dynamic loader's "version `GLIBCXX_3.4.30' not found", also quoted otherwise or bare
            r"\b(?:GLIBC|GLIBCXX|CXXABI)_\d+(?:\.\d+)+['\"]? not found",
            # The Python backend's own utility module (triton_python_backend_utils, with its C++ half
            # c_python_backend_utils) ships with the server: a model.py calling a name it lacks was
            # written for another Triton release (the utilities grow with releases: decoupled, BLS, logging).
            r"module '(?:triton_python_backend_utils|c_python_backend_utils)' has no attribute '",
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
            # TorchScript's schema matching (jit/frontend/schema_matching.cpp): an op call no schema of this
            # libtorch takes (aten::gelu's `approximate`, 1.12): saved by another PyTorch.
            r"Arguments for call are not valid\.\s*(?:\\n)?\s*The following variants are available",
            # TorchScript's type parser (torch/csrc/jit/frontend/script_type_parser.cpp, "Unknown type name
            # 'NoneType'"): the archive names a type this libtorch does not know, a newer PyTorch's or a
            # custom class whose library is not loaded. Capitalised, unlike a C compiler's.
            r"(?-i:Unknown type name) '[\w.]+'",
            # Hugging Face transformers' auto mappings (models/auto/configuration_auto.py,
            # auto_factory.py): a model type or config class the installed release does not map raises
            # KeyError in the mapping's __getitem__; since 4.37 AutoConfig words it "Transformers does not
            # recognize this architecture" (the installed transformers is older than the model).
            r"\bKeyError: <class 'transformers\.models\.[\w.]+Config'>",
            r"transformers/models/auto/(?:configuration_auto|auto_factory)\.py"
            r"(?:\(\d+\): |\"?, line \d+, in )__getitem__",
            r"Transformers does not recognize this architecture",
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
            r"Error parsing text-format\s+inference\.ModelConfig",  # (a paste may wrap at the space)
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
            # A backend that looked for the model's file in its version folder (backend_common's "for model
            # instance", and the same words with "for model" in backends built from the template, such as
            # IBM Z's Snap ML and ONNX-MLIR ones).
            r"unable to find '[^'\n]*/\d+/[^'\n/]+' for model (?:instance )?'",
        ),
    ),
    CauseRule(
        c.RUNBOOK_ENSEMBLE_DEPENDENCY,
        _rx(
            r"ensemble '?[^'\s]+'? contains models that are not available",
            r"ensemble '[^']+' depends on '[^']+' which has no loaded version",
            # (core's ValidateTensorConsistency, "ensemble tensor T: inconsistent data type|shape: ...", is
            # the mismatch's own page: the tensor is there, two steps disagree on it; the whole line is read
            # first, as a step may be named "step")
            r"\bensemble\b(?![^\n]*: inconsistent (?:data type|shape): )"
            r"[^\n]{0,120}\b(step|tensor|not written|is not used|mapped from|unable to find)",
            # Core's EnsembleContext::FinishEnsemble prefixes "in ensemble '<name>', " to whatever failed the
            # request: the ensemble's own output check, or a step's error. A step's error (the Python
            # backend's "Failed to process the request(s) for model instance ..." from python_be.cc, an
            # ONNX Runtime or PyTorch step's error) names its own cause: the prefix only says where it ran.
            rf"\bin ensemble '[^'\n]*', (?!{STEP_ERROR})",
        ),
    ),
    CauseRule(
        c.RUNBOOK_VERSION_DIR_INVALID,
        _rx(
            r"at least one version must be available",
            r"fails to convert to integral number",
            r"contains leading zeros in its directory name",
            r"version -?\d+ is specified for model '[^']*', but the version directory is not present",
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
            # a backend's own check of the names it expects (TRTIS's custom addsub example)
            r"\bmodel (?:inputs|outputs) must be named\b",
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
            # TensorRT's network validation before a build (network.cpp::validate, TensorRT 7 to 10): a
            # dynamic input the optimization profile does not cover, or no profile at all. The build
            # failure that follows ("failed to build CUDA engine", builder.cpp "enginePtr != nullptr") is
            # its consequence.
            r"dynamic input is missing dimensions in profile",
            r"Network has dynamic or shape inputs, but no optimization profile has been defined",
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
            # The Python backend resolving EXECUTION_ENV_PATH (EnvironmentManager::ExtractIfNotExtracted,
            # realpath failing: "Failed to get the canonical path for <env_path>."): the archive is not there.
            r"\bFailed to get the canonical path for /",
        ),
    ),
    CauseRule(
        c.RUNBOOK_PYTHON_MODEL_ERROR,
        _rx(
            _PYTHON_FRAME,
            r"Failed to (pre)?initialize Python stub",
            STUB_DIED,
            r"Failed to initialize stub",
            r"\b(SyntaxError|IndentationError|TabError)\b",
            # CPython's NameError and UnboundLocalError texts (Python/ceval.c), quoted without their type
            # (Triton's QA greps "name 'x' is not defined" from a model whose initialize() uses a typo).
            r"\bname '[A-Za-z_]\w*' is not defined\b",
            r"\blocal variable '[A-Za-z_]\w*' referenced before assignment\b"
            r"|\bcannot access local variable '[A-Za-z_]\w*' where it is not associated with a value\b",
            # (not Paddle's ``C++ Traceback``, phi's enforce of a C++ failure; nor a console script's run)
            rf"(?<!C\+\+ )\bTraceback \(most recent call last\)(?!{CONSOLE_SCRIPT_RUN})",
            r"\(model\.py, line \d+\)",
            r"TritonModelException",
            r"Failed to create instance: \w*(Error|Exception)\b",
            # The Python backend's model status when the model's initialize() raised: the stub sends
            # pybind11's error_already_set::what(), "<ExceptionType>: <message>", and the backend
            # fails the instance with TRITONSERVER_ERROR_INTERNAL ("Internal: HFValidationError: Repo
            # id must be ..."). Specific exceptions (imports, shared memory, shapes) are claimed by
            # their own rules first; any other raised type is the model's Python code.
            _PYTHON_STATUS,
            # The Python backend's error for a request its execute() failed (python_be.cc
            # RespondErrorToAllRequests), the exception's type first in its message.
            rf"{_STEP_FAILED}(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)\b",
        ),
    ),
    # --- classes added with the message inventory; wording of third-party code and users' logs ---
    CauseRule(
        c.RUNBOOK_PYTHON_SHARED_LIBRARY_MISSING,
        _rx(
            # A Python import that needs a native library the image lacks (libGL for OpenCV, ...).
            r"(ImportError|OSError): [^\n]{0,200}\.so(\.[\w.]+)?: cannot open shared object file",
            r"(ImportError|OSError): [^\n]{0,200}cannot load library '[^']*\.so",
            # Windows: CPython's extension loader (Python/dynload_win.c, "DLL load failed while importing %U:
            # %s" from 3.8, "DLL load failed: %s" before) with the system's ERROR_MOD_NOT_FOUND text: a DLL
            # the extension needs is not on the search path (ERROR_PROC_NOT_FOUND, an export missing, is
            # another release's DLL: library-version-mismatch).
            r"ImportError: DLL load failed(?: while importing \w+)?: The specified module could not be found",
            # The Python backend's stub binary itself, linked to one Python's libpython, started where
            # the loader cannot find it (ld.so: "<prog>: error while loading shared libraries: <lib>:
            # cannot open shared object file"): PyTriton in a conda or venv Python (its installation guide:
            # the stub is linked to a fixed Python; add the environment's lib to LD_LIBRARY_PATH).
            # Any program linked to libpython the same way (Dynamo's dynamo-run, a custom server binary).
            r"\S+: error while loading shared libraries: libpython[\d.]*\.so",
        ),
    ),
    CauseRule(
        c.RUNBOOK_MODEL_FILE_INVALID,
        _rx(
            # The Python stub imports the model file as `<version>.<file name without .py>` (python_backend
            # src/pb_stub.cc StubSetup, r24.10) after checking the path exists: not found as a module, the
            # path is no Python file (a directory, as a bind mount of a missing host file makes). A user's
            # own import cannot start with a digit.
            r"No module named '\d+\.[A-Za-z_]\w*'",
            # ONNX Runtime cannot read the file as an ONNX protobuf (truncated, a Git LFS pointer, HTML).
            r"Protobuf parsing failed",
            r"\bINVALID_PROTOBUF\b|onnx runtime error 7: ",
            # ONNX Runtime's Model constructor (core/graph/model.cc) on a ModelProto that parsed but is
            # no complete model: no graph, no opset import, and (releases that split the older "Unknown
            # model file format version.", thrown for a missing OR a newer IR version) no IR version. A
            # NEWER IR version than the runtime's is the split's other half, "Unsupported model IR
            # version: N, max supported IR version: M", and the old combined wording stays a version
            # mismatch (its common case: a model from a newer exporter; Paddle2ONNX's FAQ).
            r"\bModelProto does not have a graph\b",
            r"\bMissing opset in the model\b",
            r"\bMissing model IR version\b",
            # ONNX Runtime's graph check (INVALID_GRAPH), unless it is an operator this release lacks.
            r"This is an invalid model\."
            r"(?![^\n]{0,300}(No Op registered|Unrecognized attribute|domain_version))",
            r"\[(ShapeInferenceError|TypeInferenceError)\]",
            # ONNX Runtime's graph type check (core/graph/graph.cc, since 0.3): the file's own graph is
            # inconsistent (a hand-edited or mis-converted type), whatever the config says.
            r"\bType Error: Type (parameter \(\w+\) bound to different types|\(\S*\) of (input|output) arg)",
            # PyTorch cannot open the file as a TorchScript archive (torch.save'd weights, a cut download).
            r"PytorchStreamReader failed (reading zip archive|locating file|reading file)",
            r"failed finding central directory",
            # The Python stub cannot even compile model.py: binary bytes in it (a cut copy, a broken sync).
            r"source code (?:string )?cannot contain null bytes",
            # An empty (0-byte) model or engine file: a copy or conversion that wrote nothing
            # (jetson-inference tensorNet.cpp "invalid engine cache file size (%zu bytes)" with 0).
            r"\bfile size \(0 bytes\)",
            r"\b(model|engine|plan|onnx|weights?|checkpoint|cache) file[^\n]{0,40}\b(is empty|has size 0"
            r"|\(?0 bytes\)?)",
            r"\bempty (model|engine|plan|onnx|weights?|checkpoint) file\b",
            r"\b0[- ]byte (model|engine|plan|onnx|weights?|checkpoint|file)\b",
        ),
    ),
    CauseRule(
        c.RUNBOOK_PYTHON_MODULE_MISSING,
        # Only the frames survived: the stub failed inside Python's import machinery.
        _rx(r"<frozen importlib\._bootstrap>\(\d+\): _find_and_load"),
    ),
    *CRASH_RULES,
    *RESTART_RULES,
)
