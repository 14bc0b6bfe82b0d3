"""Pure data: which text means which failure (the one-line fix of each runbook is in its front
matter, `runbooks/<id>.md`, read by `catalog.py`).

`CAUSE_RULES` is ordered: the first rule whose pattern matches a text claims it, so a line is
evidence for exactly one runbook. It is built from two sources, in `PRIORITY` order (specific
before general: a shared-memory failure before a generic Python error, a bad enum before a
data-type mismatch, TensorRT-LLM before TensorRT):

- Triton's own messages: one rule per entry of the message inventory (``inventory.yaml``, read
  from the sources of core and the backends across releases). Where an entry names competing
  evidence (``competes``), a rule for the competitor that needs both texts goes first.
- ``HAND_RULES`` (`hand_rules.py`): third-party wording that surfaces inside Triton's messages
  (CUDA, ONNX Runtime, TensorRT, Python tracebacks, the layers around the server).
"""

from __future__ import annotations

import re
from typing import Final

from triton_sre import conventions as c
from triton_sre.diagnosis.framework_rules import FRAMEWORK_FIRST_RULES
from triton_sre.diagnosis.hand_rules import HAND_RULES, MISSING_SUBMODULE, PLUGIN_FIELDS_MISREAD
from triton_sre.diagnosis.inventory import ENTRIES, LazyPattern, Pattern
from triton_sre.diagnosis.library_errors import CUDA_FRAME_RULES, LIBRARY_COMPETES
from triton_sre.diagnosis.llm_library_rules import LLM_CONSEQUENCE_RULES
from triton_sre.diagnosis.stack_rules import CauseRule
from triton_sre.diagnosis.stack_rules import rx as _rx

__all__ = [
    "CAUSE_RULES",
    "HAND_COMPETES",
    "PRIORITY",
    "RANK",
    "SHIPPED_BACKEND_LACKS",
]


# The order in which runbooks claim a text: specific before general. A shared-memory failure beats a
# generic Python error, a bad enum a data-type mismatch, TensorRT-LLM TensorRT, a Python import of a
# missing native library the general library rule, a negative max_batch_size the batching-support rule.
PRIORITY: Final[tuple[str, ...]] = (
    c.RUNBOOK_SHM_TOO_SMALL,
    # The pod's node went away or the pod was taken from it: the kubelet's exit code 137 beside
    # ContainerStatusUnknown is its own, not the OOM killer's (the rule yields to an eviction or OOM kill
    # named in the same text, orchestrator_rules.py).
    c.RUNBOOK_POD_DISRUPTED,
    c.RUNBOOK_HOST_RESOURCE_EXHAUSTED,
    c.RUNBOOK_SERVER_PORT_IN_USE,
    c.RUNBOOK_SERVER_OPTION_INVALID,
    c.RUNBOOK_MODEL_CONTROL_REFUSED,
    c.RUNBOOK_POD_UNSCHEDULABLE,
    c.RUNBOOK_POD_ADMISSION_REFUSED,
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
    # The kubelet's reason for a container it could not create is a page of its own, but any cause the
    # same text names beside it (the runtime's or a validator's own error) is more specific.
    c.RUNBOOK_POD_START_FAILED,
    # A process that died on a signal: any cause printed beside the crash (an out-of-memory, a CUDA error,
    # the model's exception) says why; the crash alone is its own page. A probe that kills the container
    # and a restart loop come after it: they follow from a crash, never cause one.
    c.RUNBOOK_SERVER_CRASHED,
    c.RUNBOOK_POD_PROBE_FAILED,
    c.RUNBOOK_POD_CRASH_LOOPING,
    # A deadline Kubernetes gave up at follows from whatever kept the pods from finishing or becoming ready.
    c.RUNBOOK_POD_DEADLINE_EXCEEDED,
)


def _both(template: Pattern, evidence: Pattern) -> LazyPattern:
    """A text holding both the template and the deciding evidence (in any order); compiled at its first
    search (inventory.LazyPattern)."""
    return LazyPattern(rf"^(?=[\s\S]*?(?:{evidence.pattern}))[\s\S]*?(?:{template.pattern})", re.I)


# Specific over generic inside one text: (generic runbook, specific runbook, the specific evidence). An
# LLM backend's error line that reports an import failure (vLLM's "[vllm] Error generating stream: ...
# No module named 'x'", a Ray worker's RaySystemError) is the missing module's page, not the backend
# configuration's.
_STUB_CLASSES = r"(?:Tensor|InferenceRequest|InferenceResponse|TritonError|TritonModelException)"
# A backend shipped as Python (vllm_backend's model.py under /opt/tritonserver/backends/<name>/) raising, in
# its own frame, that the library it drives lacks an attribute or a name: the library was upgraded or
# downgraded inside the image past what that model.py was written for (vLLM 0.10 dropped AsyncLLM.engine,
# which the 25.08 backend read). python_backend prints the innermost frame first after "At:"; Python's own
# traceback prints it last. (A model.json key AsyncEngineArgs lacks, a TypeError raised in the same frame,
# stays llm-backend-config; the user's own model.py is not under backends/.)
SHIPPED_BACKEND_LACKS: Final = CauseRule(
    c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
    _rx(
        r"(?:\bhas no attribute '\w+'|\bcannot import name '\w+')"
        r"(?:\\n|\s)*At:(?:\\n|\s)*/opt/tritonserver/backends/\w+/model\.py\(",
        r"File \"/opt/tritonserver/backends/\w+/model\.py\", line \d+, in \w+\n(?:[^\n]*\n){0,3}?"
        r"(?:AttributeError: [^\n]*has no attribute|ImportError: cannot import name)",
    ),
    "python_backend pb_stub.cc (the stub's 'At:' frames); a backend's model.py under backends/<name>/",
    reads_frames=True,  # the frames are the evidence: an exception raised in a shipped backend's own code
)

HAND_COMPETES: Final[tuple[tuple[str, str, re.Pattern[str]], ...]] = (
    # The Python backend's stub imports model.py before it sets the C++ classes on
    # triton_python_backend_utils (python_backend src/pb_stub.cc StubSetup, from r22.06; r21.08-r22.05 set
    # them first): model.py naming Tensor, InferenceRequest, InferenceResponse, TritonError or
    # TritonModelException at import time (module level, a default argument, an annotation) finds them
    # missing in every release since. The model's own code, not another release of the utilities.
    (
        c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
        c.RUNBOOK_PYTHON_MODEL_ERROR,
        _rx(
            rf"module 'triton_python_backend_utils' has no attribute '{_STUB_CLASSES}'",
            rf"cannot import name '{_STUB_CLASSES}' from 'triton_python_backend_utils'",
        ),
    ),
    # ... unless the import names a submodule of a package that did import: another release of it.
    (c.RUNBOOK_LLM_BACKEND_CONFIG, c.RUNBOOK_LIBRARY_VERSION_MISMATCH, _rx(MISSING_SUBMODULE)),
    # ... or the package is there and its import raised AttributeError (Dynamo's worker: "Failed to import
    # python 'vllm' module. Are we running in the correct venv? AttributeError: ..."): its code and another
    # installed package are of releases that do not fit.
    (
        c.RUNBOOK_LLM_BACKEND_CONFIG,
        c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
        _rx(r"\b(?:[Ff]ailed to import|[Ee]rror (?:while )?importing)\b[^\n]{0,200}\bAttributeError: \S"),
    ),
    (
        c.RUNBOOK_LLM_BACKEND_CONFIG,
        c.RUNBOOK_PYTHON_MODULE_MISSING,
        _rx(r"\bModuleNotFoundError\b", r"\bNo module named\b"),
    ),
    # TensorRT-LLM's TLLM_CUDA_CHECK (tensorrt_llm/common/cudaUtils.h: "[TensorRT-LLM][ERROR] CUDA runtime
    # error in <call>: <cudaGetErrorString>") inside the backend's error: the CUDA runtime refused a call
    # (a device, vGPU or driver without the feature), not the backend's configuration. Out of memory and
    # driver wording are claimed before this by their own pages; any other CUDA refusal has no page.
    (
        c.RUNBOOK_LLM_BACKEND_CONFIG,
        c.RUNBOOK_UNKNOWN_LOAD_FAILURE,
        _rx(r"\bCUDA runtime error in \S"),
    ),
    # NCCL's own failure inside the LLM backend's error (TensorRT-LLM's NCCLCHECK,
    # runtime/ncclCommunicator.cpp and common/cudaUtils.h: "Failed, NCCL error <file>:<line>
    # '<ncclGetErrorString>'"): the ranks could not talk (a network, a shared-memory segment, a driver, NCCL's
    # own bug), not the backend's configuration. NCCL's texts have no page (library_errors.yaml, group nccl);
    # a crash after one is the crash's page.
    (
        c.RUNBOOK_LLM_BACKEND_CONFIG,
        c.RUNBOOK_UNKNOWN_LOAD_FAILURE,
        _rx(r"\bNCCL error\b"),
    ),
    # TensorRT's own deserializer stating a VERSION mismatch (runtime.cpp: "The engine plan file is not
    # compatible with this version of TensorRT, expecting library version X got Y"; stdArchiveReader.cpp:
    # "Serialization assertion stdVersionRead == kSERIALIZATION_VERSION failed.Version tag does not
    # match") names the cause whatever backend wraps the engine: the engine was built by another TensorRT.
    # A bare "Failed to deserialize cuda engine" inside the LLM backend states no version and stays the
    # backend's configuration (the labels of tensorrtllm-235/-424/-190, SPLIT.md round 5).
    (
        c.RUNBOOK_LLM_BACKEND_CONFIG,
        c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE,
        _rx(
            r"\bnot compatible with this version of TensorRT\b",
            r"\bexpecting (?:\[TensorRT\] )?library version [\d.]+ got [\d.]+",
            r"\bstdVersionRead == kSERIALIZATION_VERSION\b|\bVersion tag does not match\b",
            r"\bCurrent Version: \d+, Serialized Engine Version: \d+",
        ),
    ),
    # TensorRT's own error kind "Cuda Runtime" ("Error Code 1: Cuda Runtime (In syncStreams at
    # resources.cpp:407)", TensorRT 8.6-10's ErrorCode text in "[file::func::line] Error Code N: <Kind>
    # (<msg>)"): a CUDA call failed while the engine was being deserialized or created (a capture, a stream,
    # a device fault), which says nothing against the engine itself. Out-of-memory and driver wording
    # are claimed before this by their own pages; any other CUDA failure has no page.
    (
        c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE,
        c.RUNBOOK_UNKNOWN_LOAD_FAILURE,
        _rx(r"\bError Code \d+: Cuda Runtime\b"),
    ),
    # The runtime asking for what the engine does not have (issue 20, round 18): TensorRT-LLM's runtime
    # binding an input the engine was built without (tllmRuntime.cpp: "Input tensor '<name>' not found;
    # expected shape: ..."), a plugin reading its serialized fields to another length (every plugin's
    # deserializing constructor checks "d == a + length"). The engine was built by another TensorRT-LLM
    # release than the runtime: rebuild it with the image's release (trt-engine-incompatible).
    (
        c.RUNBOOK_LLM_BACKEND_CONFIG,
        c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE,
        _rx(r"\bInput tensor '[^'\n]+' not found\b", PLUGIN_FIELDS_MISREAD),
    ),
    # The backend refusing a request tensor by name (inferenceRequest.h: "Invalid tensor name: <name>"):
    # the model repository's configs (the ensemble and tensorrt_llm config.pbtxt templates) come from
    # another TensorRT-LLM release than the backend (library-version-mismatch). A config.json key the
    # runtime cannot find stays llm-backend-config, as that page's Meaning and earlier labels say.
    (
        c.RUNBOOK_LLM_BACKEND_CONFIG,
        c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
        _rx(r"\bInvalid tensor name: \w"),
    ),
    # The kubelet failing the image pull on a full node disk ("Failed to pull image ...: failed to extract
    # layer ...: no space left on device"): the pull decides (image-pull-failed's Meaning: "an image too
    # large for the node's disk"); host-resource-exhausted is a resource refused while a model loads.
    (
        c.RUNBOOK_HOST_RESOURCE_EXHAUSTED,
        c.RUNBOOK_IMAGE_PULL_FAILED,
        _rx(r"\bFailed to pull image\b", r"\bfailed to pull and unpack image\b", r"\bErrImagePull\b"),
    ),
    # A version folder named -1: core reads the name as a signed number and the backend builds the path
    # from it unsigned, 2^64 - 1 (IBM Z Accelerated for Triton lists it as a known issue). The folder's
    # name is the fault, not a missing file.
    (
        c.RUNBOOK_MODEL_FILE_MISSING,
        c.RUNBOOK_VERSION_DIR_INVALID,
        _rx(r"/18446744073709551615/"),
    ),
    # The stub's `import model` of a Python-based backend (python_backend src/pb_stub.cc ModelContext::Init:
    # a runtime_modeldir other than "DEFAULT" makes the model type kBackend and the stub imports `model`
    # from that folder). python_be.cc sets it whenever the backend's location is not
    # `<backend-directory>/python` spelt exactly (a custom --backend-directory, a trailing slash), so a
    # plain Python model is looked for in the backend's folder: `No module named 'model'` is model.py not
    # where the stub looks, no package to install (docs/diagnosis-boundaries.md).
    (c.RUNBOOK_PYTHON_MODULE_MISSING, c.RUNBOOK_MODEL_FILE_MISSING, _rx(r"\bNo module named 'model'")),
    # A shared library the loader cannot find inside the LLM backend's error (TensorRT-LLM's executor
    # worker started without libnvinfer.so.10) is that library's page, whatever backend prints it (glibc's
    # ld.so "error while loading shared libraries: <lib>: cannot open shared object file"; the driver's own
    # libraries are claimed before this by cuda-driver-mismatch).
    (
        c.RUNBOOK_LLM_BACKEND_CONFIG,
        c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
        _rx(r"\bcannot open shared object file\b"),
    ),
    *LIBRARY_COMPETES,
)


def _build() -> tuple[CauseRule, ...]:
    """Hand rules and inventory entries in `PRIORITY` order; competing evidence first (the
    inventory's ``competes`` and `HAND_COMPETES`)."""
    placeholder, hand = HAND_RULES[0], HAND_RULES[1:]
    # CUDA's own text, then a framework's text no page covers, decide over the frame that quotes them; vLLM's
    # wrapper of a cause printed elsewhere is none.
    rules = [placeholder, *CUDA_FRAME_RULES, *FRAMEWORK_FIRST_RULES, *LLM_CONSEQUENCE_RULES]
    rules.append(SHIPPED_BACKEND_LACKS)  # before every reading of the backend's or the model's words
    for entry in ENTRIES:
        rules.extend(
            CauseRule(comp.runbook, _both(entry.regex, comp.when), entry.id) for comp in entry.competes
        )
    for runbook in PRIORITY:
        for rule in (r for r in hand if r.runbook == runbook):
            rules.extend(
                CauseRule(specific, _both(rule.pattern, evidence), rule.source, rule.reads_frames)
                for generic, specific, evidence in HAND_COMPETES
                if generic == runbook
            )
            rules.append(rule)
        rules.extend(CauseRule(runbook, e.regex, e.id) for e in ENTRIES if e.runbook == runbook)
        # A message quoted from its model's name on (the template's leading words dropped).
        rules.extend(CauseRule(runbook, e.tail, e.id) for e in ENTRIES if e.runbook == runbook and e.tail)
    return tuple(rules)


CAUSE_RULES: Final[tuple[CauseRule, ...]] = _build()
"""First match wins: a text is evidence for exactly one runbook."""

RANK: Final[dict[str, int]] = {}
"""How specific a runbook is (lower wins when one model has causes of several runbooks)."""
for _rb in (c.RUNBOOK_CONFIG_PARSE_ERROR, *PRIORITY, c.RUNBOOK_UNKNOWN_LOAD_FAILURE):
    RANK.setdefault(_rb, len(RANK))
