"""Pure data: the cause CLASS of a failure line whose exact wording no rule knows.

`rules.CAUSE_RULES` know messages one by one; a source they never read (a new backend, a plugin,
an orchestrator) words the same causes differently. This layer is their fallback: it reads the
vocabulary each runbook's own definition uses for its cause (``runbooks/<id>.md``, "Meaning") and
maps a failure line (see `severity.py`; never a healthy line) to the page of that class.

Precedence, first match wins: the classes that name WHERE the failure happened outside the model
(the image, the scheduler, the platform, the driver) before those inside it; within a line, the
specific class before the generic one (a missing shared library before a missing file, an engine
deserialization before a version word, a registry denial before a permission word). Between lines,
the engine keeps the earliest cause-class line as the root cause (consequences come later).
"""

from __future__ import annotations

import re
from typing import Final

from triton_sre import conventions as c
from triton_sre.diagnosis.log_layouts import COMMAND_NOT_FOUND, FLAG_AS_COMMAND
from triton_sre.diagnosis.signals import HTTP_CLIENT_ERROR

__all__ = ["CLASSES", "MODEL_SITE", "cause_class", "model_site_class", "over_crash", "without_debugger_notes"]


def _rx(*alternatives: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{a})" for a in alternatives), re.I)


_NEG = r"(?:not|cannot|can't|could not|couldn't|unable to|failed to|fails? to|no)"
# Words split across wrapped lines (a YAML message folded by kubectl) still read as one phrase.
_S = r"\s+"

CLASSES: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    # The server's flags given to the image without the server (``docker run <image> --model-repository=..``):
    # the entrypoint execs the first flag as the command: the server's command line is wrong.
    (c.RUNBOOK_SERVER_OPTION_INVALID, re.compile(FLAG_AS_COMMAND, re.M)),
    # A command the shell or the container runtime cannot find in the image (the image lacks the
    # server, or the command is misspelled): no page covers an image without its command, so it is
    # the fallback by name, before the missing-file class claims "executable file not found".
    (
        c.RUNBOOK_UNKNOWN_LOAD_FAILURE,
        re.compile("|".join(f"(?:{a})" for a in COMMAND_NOT_FOUND), re.M),
    ),
    # image pull / registry / auth (image-pull-failed: "the image cannot be pulled").
    (
        c.RUNBOOK_IMAGE_PULL_FAILED,
        _rx(
            rf"\b(?:pull|fetch|resolve|download){_S}(?:the{_S})?image\b",
            rf"\b{_NEG}{_S}(?:pull|fetch|resolve|import){_S}(?:the{_S})?(?:docker{_S})?"
            r"(?:image|manifest|digest|tag)",
            # the registry's HTTP API v2 refusing a manifest or a layer (/v2/<name>/manifests/<reference>)
            r"/v2/\S+/(?:manifests|blobs)/\S+[^\n]{0,60}\b(?:40[134]|unauthori[sz]ed|denied|not found)\b",
            r"\bimage\b[^\n]{0,80}\b(?:not found|manifest unknown|unauthori[sz]ed|denied|does not exist)",
            r"\bmanifest (?:unknown|not found)\b|\bImagePullBackOff\b|\bErrImagePull\b",
            r"\bregistry\b[^\n]{0,80}\b(?:unauthori[sz]ed|denied|forbidden|timed? ?out|unreachable|refused)",
        ),
    ),
    # scheduling / insufficient resources (pod-unschedulable: "no node has the GPUs or resources").
    (
        c.RUNBOOK_POD_UNSCHEDULABLE,
        _rx(
            # the scheduler's "Insufficient <resource>": a Kubernetes resource name (lower case: cpu, memory,
            # ephemeral-storage, pods, hugepages-2Mi, or a domain-prefixed extended resource such as
            # nvidia.com/gpu), not an engine's "Insufficient GPU memory".
            r"(?-i:\bInsufficient\s+(?:[a-z0-9.-]+/[\w.-]+|cpu|memory|ephemeral-storage|pods|hugepages-\w+)\b)",
            r"(?:Pod)?Unschedulable\b",
            rf"\b{_NEG}{_S}(?:be{_S})?schedul",
            r"\bno nodes? (?:are |is )?available\b|\bnodes? (?:are|is) available: ",
            r"\buntolerated taint|\bdidn't match (?:Pod's )?node (?:affinity|selector)",
        ),
    ),
    # a volume, Secret or ConfigMap the container needs (pod-start-failed: "its container cannot be created").
    (
        c.RUNBOOK_POD_START_FAILED,
        _rx(
            rf"\b{_NEG}{_S}(?:mount|attach){_S}(?:the{_S})?(?:persistent{_S})?volumes?\b",
            rf"\bvolumes?\b[^\n]{{0,60}}\b(?:mount|attach)(?:ing)?{_S}(?:failed|timed{_S}out)",
        ),
    ),
    # a port another process holds (server-port-in-use: "one bind fails ... the server exits").
    (
        c.RUNBOOK_SERVER_PORT_IN_USE,
        _rx(
            # (not "Address already in use": server_rules claims it first, in every program's words)
            r"\bEADDRINUSE\b",
            r"\b(?:port|address|socket)\b[^\n]{0,60}\balready (?:in use|allocated|bound)\b",
            # a listener that cannot bind its address (gRPC's "Failed to bind to address 0.0.0.0:8081"): the
            # page's one bind that fails
            r"\b(?:failed|unable) to bind (?:to )?(?:the )?(?:address|port)\b",
        ),
    ),
    # the container runtime or the NVIDIA Container Toolkit refusing to give the container a GPU
    # (gpu-container-runtime: "the GPU could not be attached"), before the driver words below read
    # "device driver" as the driver's own fault.
    (
        c.RUNBOOK_GPU_CONTAINER_RUNTIME,
        _rx(
            r"\bcould not select device driver\b",
            r"\bnvidia-container-(?:cli|runtime(?:-hook)?|toolkit)\b[^\n]{0,300}?\b(?:error|fail\w*|not found"
            r"|unknown|refused|denied)",
            r"\b(?:unknown|invalid)\b[^\n]{0,20}\bruntime\b[^\n]{0,20}\bnvidia\b",
            # nvidia-docker 1.0's volume plugin failing to create the driver volume ("create
            # nvidia_driver_384.130: VolumeDriver.Create: internal error")
            r"\bnvidia_driver_[\d.]+: VolumeDriver\.\w+",
            # (Nomad's docker driver: 'requested docker runtime "nvidia" was not found')
            r"\bruntime\s+[\"']?nvidia[\"']?\s+(?:was\s+|is\s+)?not\s+found\b",
            r"\bunresolvable CDI devices?\b",
        ),
    ),
    # The NVIDIA kernel driver's own log lines (its "NVRM:" prefix, open-gpu-kernel-modules' nv_printf) and
    # its installer and module loading: the driver is not usable (API mismatch between its user and kernel
    # halves, RmInitAdapter, a GPU fallen off the bus or refused by this release, an Xid, a module that was
    # not built, signed or loaded). On a failure line only (a healthy host's NVRM banner says nothing failed).
    (
        c.RUNBOOK_CUDA_DRIVER_MISMATCH,
        _rx(
            r"\bNVRM: [^\n]{0,200}?\b(?:fail\w*|error|mismatch|not supported|fallen off|cannot|unable|Xid)\b",
            r"\b(?:fallen off the bus|RmInitAdapter failed)\b",
            r"\bkernel module\b[^\n]{0,80}\b(?:fail\w*|not (?:loaded|signed|found|built)|error)"
            r"|\b(?:Building|load(?:ing)?) (?:the )?kernel modules?\b[^\n]{0,80}\b(?:fail\w*|error)",
            r"\b(?:fail\w*|error|unable) (?:to )?(?:build|load|insert)\w* (?:the )?(?:NVIDIA )?kernel module",
            r"\bKey was rejected by service\b",
            r"\bperforming the step: \"Building kernel modules\"",
        ),
    ),
    # platform / architecture / compute capability (platform-unsupported: "does not support this GPU,
    # CPU or device").
    (
        c.RUNBOOK_PLATFORM_UNSUPPORTED,
        _rx(
            r"\bcompute cap(?:ability)?\b[^\n]{0,80}\b(?:not supported|unsupported|below|minimum|required|too"
            r" (?:low|old)|not compatible|incompatible)",
            # A CUDA architecture named by its short name (sm_75, sm75) that a build does not carry.
            r"\bsm[_ ]?\d{2,3}a?\b[^\n]{0,60}\b(?:not supported|unsupported|not compatible|incompatible)\b",
            r"\bsm_\d{2,3}a? or (?:higher|newer|later|above)\b",
            # a GPU generation a build requires ("FlashAttention only supports Ampere GPUs or newer")
            r"\b(?:Kepler|Maxwell|Pascal|Volta|Turing|Ampere|Ada|Hopper|Blackwell)\b[^\n]{0,30}\b(?:or"
            r" (?:newer|later|above|higher)|and (?:newer|later|above)|required|only)\b",
            r"\bonly supports?\b[^\n]{0,40}\b(?:GPUs?|compute capabilit\w+|sm_?\d+)\b",
            r"\b(?:your|this|the) (?:GPU|device|CPU|hardware)\b[^\n]{0,20}\b(?:does not|doesn't|do not"
            r"|cannot) support\b",
            # a feature the GPU must have (TensorRT: "Networks with FP8 Q/DQ layers require hardware with FP8
            # support")
            r"\brequires? (?:a )?(?:hardware|GPUs?|devices?) with\b[^\n]{0,30}\bsupport\b",
            r"\b(?:does not|doesn't|do not) support\b[^\n]{0,30}\b(?:this|the|your|current)\b[^\n]{0,10}"
            r"\b(?:GPU|device|CPU|hardware|platform|architecture)\b",
            # A CPU without the instruction set a build was compiled for (the entrypoint's AVX check).
            r"\b(?:AVX\w*|instruction set)\b[^\n]{0,60}\b(?:not supported|unsupported|required|missing"
            r"|not available)\b",
            r"\b(?:not supported|unsupported)\b[^\n]{0,60}\b(?:architecture|platform|compute capability"
            r"|GPU|device|CPU)\b",
            r"\b(?:architecture|platform)\b[^\n]{0,60}\b(?:not supported|unsupported|mismatch|does not"
            r" match)",
            # (not a SIGILL, "Illegal instruction": the crash's page names it, server-crashed's Meaning)
            r"\bexec format error\b|\bno kernel image is available\b",
        ),
    ),
    # driver / CUDA runtime (cuda-driver-mismatch: "no usable GPU: driver, CUDA or visibility").
    (
        c.RUNBOOK_CUDA_DRIVER_MISMATCH,
        _rx(
            r"\bdriver\b[^\n]{0,60}\b(?:too old|insufficient|not found|mismatch|version|not loaded"
            r"|unavailable)",
            r"\bno (?:GPU|CUDA[- ]capable device|NVIDIA (?:GPU|driver))s?\b[^\n]{0,30}\b(?:found|detected"
            r"|available)",
            r"\bno CUDA GPUs? (?:are |is )?(?:found|detected|available)\b",
            r"\bfound no (?:NVIDIA )?(?:driver|GPU)",
            # nvidia-smi's own refusal (it cannot talk to the driver) and a program that reads its answer.
            r"\bNVIDIA-SMI has failed\b",
            # the driver installs nvidia-smi: a shell that cannot find it has no driver where it runs
            r"\bnvidia-smi: (?:command )?not found\b|\bexec: \"?nvidia-smi\"?: executable file not found\b",
            r"\bnvidia-smi\b[^\n]{0,40}\b(?:failed|unexpected|couldn't communicate)",
            # CUDA's initialisation (the driver API's cuInit or a framework's lazy init) failing.
            r"\bcuInit\b[^\n]{0,40}\b(?:failed|error)|\bfailed to initiali[sz]e CUDA\b",
            r"\bCUDA (?:initiali[sz]ation|init)\b[^\n]{0,40}\b(?:fail\w*|error)",
            # the driver-API wordings programs print around cuInit: CUDA's "system not yet initialized"
            # (802, Fabric Manager), Numba's "Error at driver init", Ollama's "cuda driver library init
            # failure: 802" and "cudaSetDevice err: 999"
            r"\bsystem not yet initiali[sz]ed\b|\b(?:Error|fail\w*) at driver init\b",
            r"\b(?:cuda|nvidia) driver library\b[^\n]{0,40}\b(?:init\w* failure|fail\w*|error)",
            r"\b(?:unable|failed) to (?:dynamically )?load (?:the )?[\"']?(?:cuda|nvcuda|libcuda)[\"']? "
            r"(?:shared )?library\b",
            r"\bcuda(?:SetDevice|GetDeviceCount|DriverGetVersion)\b[^\n]{0,10}\berr(?:or)?\b[:= ]+\d+",
            # the driver's own daemon and libraries missing where the process runs: nvidia-persistenced's
            # socket, the video codec libraries (libnvidia-encode, libnvcuvid: "NVENC library file is not
            # found. Please ensure NV driver is installed"), a driver library mounted as an empty stub ("file
            # too short")
            r"\bnvidia-persistenced/socket\b[^\n]{0,40}\b(?:no such file|not found|refused)",
            r"\b(?:NVENC|NVDEC|nvcuvid|nvidia-encode)\b[^\n]{0,40}\b(?:not found|cannot|could not|missing)",
            r"\blib(?:cuda|nvidia-[\w-]+|nvcuvid)\.so[\d.]*: file too short\b",
            # CUDA's driver-level codes by number in a program's own words ("cuda error:35", "cuda error 999")
            r"\bcuda ?error ?[:=]? ?(?:3|35|803|804|999)\b(?![.\d])",
            # NVML's own initialisation ("error initializing nvidia nvml: nvml: Driver Not Loaded",
            # "Failed to initialize NVML: Driver/library version mismatch")
            r"\bnvml\b[^\n]{0,40}\b(?:driver not loaded|driver/library version mismatch)",
            r"\b(?:error|fail\w*) (?:to )?initiali[sz]\w* (?:nvidia )?nvml\b",
            # a program's own check that the framework sees a GPU (A1111's "Torch is not able to use GPU")
            r"\b(?:is not able to|unable to|cannot|can't|could not) use (?:the |any )?GPUs?\b",
        ),
    ),
    # /dev/shm too small (shm-too-small: "the region cannot be created"), before the host's "no space
    # left" claims it: the words name the shared-memory mount or its size, never a region a client
    # registers at request time.
    (
        c.RUNBOOK_SHM_TOO_SMALL,
        _rx(
            r"/dev/shm\b[^\n]{0,120}\b(?:no space left|too small|only \d+|insufficient|not enough|failed to"
            r" (?:extend|allocate|create|map|truncate)|bus error)",
            r"\b(?:failed to|unable to|cannot|could not) (?:extend|allocate|create|map)\b[^\n]{0,40}"
            r"/dev/shm\b",
            r"\bshared memory\b[^\n]{0,60}\b(?:too small|insufficient|not enough|no space left|exhausted"
            r"|size is too small)",
            r"\b(?:increase|raise|larger)\b[^\n]{0,40}(?:--shm-size|\bshm_size\b|\bshm-size\b)",
            # PyTorch's shared-memory manager (its DataLoader workers' tensors live in /dev/shm as
            # /torch_<pid>_<n>: "unable to write to file </torch_18692_1954506624>")
            r"\bunable to (?:write to|open shared memory object|mmap)\b[^\n]{0,20}</torch_\w+>",
        ),
    ),
    # OOM / memory (gpu-out-of-memory on a device, host-resource-exhausted otherwise).
    (
        c.RUNBOOK_GPU_OUT_OF_MEMORY,
        _rx(
            r"\b(?:CUDA|GPU|device|VRAM)\b[^\n]{0,60}\b(?:out of memory|OOM|memory allocation failed"
            r"|failed to allocate)",
            r"\b(?:out of memory|OutOfMemory|OOM)\b[^\n]{0,60}\b(?:CUDA|GPU|device)\b",
            r"\b(?:insufficient|not enough)\b[^\n]{0,20}\b(?:GPU|device|CUDA|VRAM)\b[^\n]{0,10}\bmemory\b",
            r"\b(?:GPU|device|CUDA|VRAM) memory\b[^\n]{0,40}\b(?:insufficient|not enough|exhausted)\b",
            r"\bno available memory for\b",
            # a device buffer the allocator could not get (ggml's "unable to allocate CUDA0 buffer")
            r"\b(?:unable to|failed to|cannot|could not) allocate (?:a )?"
            r"(?:CUDA|GPU|device|VRAM|ROCm|Metal)\w* buffer\b",
        ),
    ),
    (
        c.RUNBOOK_HOST_RESOURCE_EXHAUSTED,
        _rx(
            r"\bout of memory\b|\bOutOfMemory\w*|\bOOM[- ]?kill\w*|\bcannot allocate memory\b(?! in static"
            r" TLS block)",
            r"\bmemory allocation failed\b|\bstd::bad_alloc\b|\bMemoryError\b",
            r"\bno space left\b|\bdisk (?:full|pressure)\b|\btoo many open files\b",
            # The kubelet's eviction manager (pkg/kubelet/eviction/helpers.go): a pod evicted for a
            # local volume or container over its limit, or the node low on a resource.
            r"\bUsage of EmptyDir volume\b[^\n]{0,80}\bexceeds the limit\b",
            r"\bemptyDir usage exceeds the limit\b",
            r"\bexceeded its local ephemeral storage limit\b|\bThe node was low on resource: ",
        ),
    ),
    # engine / plan / serialization (trt-engine-incompatible).
    (
        c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE,
        _rx(
            r"\bdeseriali[sz]\w*\b[^\n]{0,60}\b(?:engine|plan)\b",
            r"\b(?:engine|plan)\b[^\n]{0,60}\b(?:deseriali[sz]\w*|seriali[sz]ation|incompatible|built"
            r" (?:with|for|on) (?:a )?(?:different|another))",
        ),
    ),
    # library / symbol / version (library-version-mismatch) before missing files: a shared object
    # that cannot be opened is a library, not a model file.
    (
        c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
        _rx(
            r"\bundefined symbol\b|\bsymbol lookup error\b|\bcannot open shared object\b",
            # Windows' loader: a process whose DLL is missing exits with STATUS_DLL_NOT_FOUND (0xC0000135,
            # 3221225781 unsigned), LoadLibrary's ERROR_MOD_NOT_FOUND reads "The specified module could not be
            # found" (its ImportError "DLL load failed"), a program's "Could not load library <x>.dll"
            r"\b(?:3221225781|-1073741515|0xC0000135|STATUS_DLL_NOT_FOUND)\b",
            r"\bCould not load library\b[^\n]{0,300}?\.dll\b",
            # LoadLibrary's own code for it (ERROR_MOD_NOT_FOUND, 126: the DLL or one it depends on), as ONNX
            # Runtime quotes it ("LoadLibrary failed with error 126 ... when trying to load
            # onnxruntime_providers_cuda.dll"), Java's loader's ("UnsatisfiedLinkError: <x>.dll: Can't find
            # dependent libraries") and ONNX Runtime's Java binding's ("Failed to load shared library")
            r"\bLoadLibrary failed with error 126\b|\bCan't find dependent libraries\b",
            r"\bAppendExecutionProvider_\w+: Failed to load shared library\b",
            # TensorFlow's graph importer (core/framework/op.cc): a graph holding an op the runtime's build
            # does not register ("Op type not registered 'FIFOQueueV2' in binary running on ...")
            r"\bOp type not registered\b",
            r"\blib[\w+-]*\.(?:so|dylib|dll)\b[^\n]{0,60}\b(?:not found|missing|cannot|could not|unable)",
            r"\b(?:version|ABI)\b[^\n]{0,40}\b(?:mismatch|incompatib\w*|not compatible|not supported)",
            r"\b(?:incompatib\w*|mismatch\w*)\b[^\n]{0,40}\b(?:version|ABI|library|opset|IR version)\b",
            r"\brequires?\b[^\n]{0,60}\bversion\b[^\n]{0,20}(?:>=|at least|or (?:newer|later|higher))",
        ),
    ),
    # import (python-module-missing).
    (
        c.RUNBOOK_PYTHON_MODULE_MISSING,
        _rx(r"\bModuleNotFoundError\b|\bNo module named\b|\bImportError\b|\bcannot import\b"),
    ),
    # plugin / backend missing (backend-not-found).
    (
        c.RUNBOOK_BACKEND_NOT_FOUND,
        _rx(
            r"\bno such element factory\b",
            r"\b(?:backend|plugin|element|runtime)\b[^\n]{0,40}\b(?:not found|not available|missing|not"
            r" registered|unknown)\b",
            r"\bunknown (?:backend|platform|plugin|runtime)\b",
        ),
    ),
    # shape / dims / datatype.
    (
        c.RUNBOOK_DATATYPE_MISMATCH,
        _rx(
            r"\b(?:data ?type|dtype)s?\b[^\n]{0,60}\b(?:mismatch|does not match|doesn't match|not"
            r" (?:correct|match|compatible)|expected|unexpected|incompatible|invalid|wrong)",
        ),
    ),
    (
        c.RUNBOOK_SHAPE_OR_DIMS_MISMATCH,
        _rx(
            r"\b(?:dims?|dimensions?|shapes?|rank|input-dims)\b[^\n]{0,60}\b(?:mismatch|does not match"
            r"|doesn't match|not (?:correct|match|compatible|equal|valid)|expected|unexpected|incompatible"
            r"|invalid|wrong|missing)",
            r"\b(?:mismatch\w*|incompatible|invalid|wrong|unexpected|missing)\b[^\n]{0,30}\b(?:dims?"
            r"|dimensions?|shapes?|rank)\b",
            # TensorRT's builder: the shapes a dynamic input may take are declared by an optimization profile.
            r"\b(?:no|missing|invalid) optimization profile\b|\boptimization profile\b[^\n]{0,60}\b(?:not"
            r" (?:been )?(?:defined|set|specified)|missing|invalid|out of range)",
        ),
    ),
    # The Python backend's shared memory (boost::interprocess on /dev/shm) refused: the shm volume,
    # whatever the errno, before the permission words below read "Read-only file system" as a file.
    (c.RUNBOOK_SHM_TOO_SMALL, _rx(r"\bboost::interprocess::interprocess_exception\b")),
    # permission, and a directory the process cannot write (a read-only mount, a cache folder).
    (
        c.RUNBOOK_PERMISSION_DENIED,
        _rx(
            r"\bpermission denied\b|\bEACCES\b|\bOperation not permitted\b|\bread-only file ?system\b",
            rf"\b{_NEG}{_S}write{_S}(?:to|in(?:to)?){_S}",
            r"\bproblem when trying to write in\b|\bis not writable\b",
        ),
    ),
    # network / connection to a model store (cloud-repository-access); other connection failures
    # have no page of their own and stay the fallback.
    (
        c.RUNBOOK_CLOUD_REPOSITORY_ACCESS,
        _rx(
            r"\b(?:s3|gs|gcs|azure|blob|bucket|storage)\b[^\n]{0,80}\b(?:connection (?:refused|reset"
            r"|timed? ?out)|timed? ?out|unreachable|could not connect|access denied|forbidden|no such"
            r" bucket)",
            # A model store over HTTP (NVIDIA NIM's NGC download): the request itself failed (Rust
            # reqwest's "error sending request for url"), or the store refused it with a status
            # (reqwest's "HTTP status client error (451 ...) for url", requests' "403 Client Error").
            r"\berror sending request for url\b",
            *HTTP_CLIENT_ERROR,
        ),
    ),
    # a weight file whose size is not what the model's config asks for (model-file-invalid: "the file is
    # where Triton looks, but the backend cannot read it as a model"): TurboMind's and FasterTransformer's
    # weight loaders ("file <path> has <bytes>, but request <bytes>, loading model fails!").
    (
        c.RUNBOOK_MODEL_FILE_INVALID,
        _rx(
            # TensorFlow's record reader (core/lib/io/record_reader.cc) on a file that is no TFRecord
            # (a SavedModel's warm-up data): "Data loss: corrupted record at 0"
            r"\bcorrupted record at \d+",
            # PyTorch's archive reader (caffe2/serialize/inline_container.cc "PytorchStreamReader failed
            # reading zip archive", miniz's "invalid header or archive is corrupted"): no (whole) archive
            r"\bfailed reading zip archive\b|\binvalid header or archive is corrupted\b",
            # a model format's parser that cannot read the file it was given (TensorRT's UffParser "Could not
            # read buffer", an ONNX parser "failed to parse")
            r"\b(?:Uff|Onnx|Caffe)?Parser\b[^\n]{0,30}\b(?:could not|cannot|failed to|unable to)"
            r" (?:read|parse)\b",
            r"\bpars(?:e|ing) (?:the )?(?:onnx|uff|caffe|prototxt|model)(?: (?:file|model))?\b[^\n]{0,10}"
            r"\bfail",
            r"\bfile\b[^\n]{0,300}?\bhas \d+(?: bytes)?,? but (?:request(?:ed|s)?|expect(?:ed|s)?) \d+",
            # A loader handed a file that it then cannot read as a model (llama.cpp's and llama-cpp-python's
            # "Failed to load model from file: <path>"), unless the same line says the file is absent.
            rf"\b{_NEG}{_S}load{_S}(?:the{_S})?model{_S}from{_S}(?:the{_S})?file\b(?![^\n]*\b(?:no such file"
            r"|not found|does not exist|doesn't exist|missing)\b)",
            # llama.cpp's loader naming the file it could not read as a model ("llama_model_loader: failed to
            # load model from <path>", "error loading model: done_getting_tensors: wrong number of tensors")
            r"(?:\b(?:llama_model_loader|llama_load_model_from_file|error loading model)\b[^\n]{0,40}"
            r"(?:failed to load model from|invalid magic)|\bwrong number of tensors)"
            r"(?![^\n]*\b(?:no such file|not found|does not exist|doesn't exist|missing)\b)",
        ),
    ),
    # an LLM engine's tensor-parallel split the model's heads do not divide (llm-backend-config: the engine's
    # settings do not fit the model): vLLM's "must be divisible by tensor parallel size", MLC's
    # "num_kv_heads(8) must be divisible by tensor_parallel_shards"
    (
        c.RUNBOOK_LLM_BACKEND_CONFIG,
        _rx(r"\bmust be divisible by\b[^\n]{0,30}\btensor[_ ]parallel"),
    ),
    # a model's version folders (version-dir-invalid: "no numeric version folder"): OpenVINO Model Server's
    # model manager ("Expected version directory name to be a number greater than 0. Got: 0", "No version
    # found for model in path: ...")
    (
        c.RUNBOOK_VERSION_DIR_INVALID,
        _rx(
            r"\bversion (?:directory|folder|dir)(?: name)?\b[^\n]{0,40}\b(?:number|numeric|integer)\b",
            r"\bno (?:valid )?versions? (?:found|available)\b[^\n]{0,20}\b(?:for|in)\b",
        ),
    ),
    # OpenVINO Model Server's model manager on a model's base_path (its repository) that is not there
    # ("[modelmanager][error][modelmanager.cpp:579] Directory does not exist: /models/m/1"), and its config
    # file refused by the schema ("Given config is invalid according to schema")
    (c.RUNBOOK_REPOSITORY_PATH_INVALID, _rx(r"\[modelmanager\]\[error\][^\n]*?\bDirectory does not exist\b")),
    (c.RUNBOOK_CONFIG_PARSE_ERROR, _rx(r"\bconfig is invalid according to schema\b")),
    # the model repository itself is not where the server looks (repository-path-invalid: "the
    # --model-repository path does not exist or is not a directory"), before a missing file claims it.
    (
        c.RUNBOOK_REPOSITORY_PATH_INVALID,
        _rx(
            r"\bmodel[ _-]?repo(?:sitory)?(?: (?:path|directory|dir|root))?\b[^\n]{0,40}\b(?:does not exist"
            r"|doesn't exist|not found|is not a (?:valid )?directory)",
        ),
    ),
    # missing file / path (model-file-missing).
    # A file the process cannot open FOR WRITING (core's WriteBinaryFile/WriteTextFile "failed to open
    # binary file for write <path>: <strerror>", as it stores a model's files sent with a load request):
    # "No such file or directory" there is the directory it writes into, not a model file that is
    # missing. Permission and disk-full wording were claimed above; no page covers the rest.
    (
        c.RUNBOOK_UNKNOWN_LOAD_FAILURE,
        _rx(r"\bfor writ(?:e|ing)\b[^\n]{0,300}?\bno such file or directory\b"),
    ),
    (
        c.RUNBOOK_MODEL_FILE_MISSING,
        _rx(
            r"\bno such file or directory\b|\bFileNotFoundError\b|\bfile not found\b",
            r"\bmissing (?:the )?(?:model|weights?|checkpoint) files?\b",
            rf"\b{_NEG}{_S}(?:open|find|read|stat|locate){_S}(?:the{_S})?(?:model )?(?:file|path"
            rf"|directory)\b",
            r"\b(?:file|path|directory)\b[^\n]{0,80}\b(?:does not exist|not found|is missing|doesn't exist)",
            # A loader refusing a file it was pointed at by path (FasterTransformer's "[FT][ERROR] Can't
            # load <dir>/config.ini" when the INI reader cannot open it).
            rf"\b{_NEG}{_S}load{_S}['\"`]?/[^\s:'\"`]*/[^\s/:'\"`]+\.\w+\b",
            # A weight loader that cannot open the file it was told to read (FasterTransformer's and
            # TurboMind's "file <path> cannot be opened, loading model fails!").
            rf"\b(?:file|path)\b[^\n]{{0,300}}?\b(?:cannot|can't|could not|couldn't){_S}be{_S}opened\b",
        ),
    ),
)


# GDB's note that it has no source file for the frame it stopped in (gdb/source.c print_source_lines_base:
# "<line>\t<file>: No such file or directory.", the line number peeled by a paste or not), under its
# "received signal" report: the debugger's own lookup of a C/C++/assembly/CUDA source, never a model file.
_GDB_NO_SOURCE = re.compile(
    r"(?m)^[ \t]*(?:\d+[ \t]+(?:in[ \t]+)?)?\S+\.(?:c|cc|cpp|cxx|h|hpp|S|s|cu): "
    r"No such file or directory\.[ \t]*$"
)


def without_debugger_notes(text: str) -> str:
    """``text`` without GDB's no-source notes (`_GDB_NO_SOURCE`), which no rule or class may read."""
    return _GDB_NO_SOURCE.sub("", text) if "No such file or directory." in text else text


def cause_class(text: str) -> str | None:
    """The runbook of the first class whose vocabulary ``text`` uses, if any."""
    text = without_debugger_notes(text)
    for runbook, pattern in CLASSES:
        if pattern.search(text):
            return runbook
    return None


MODEL_SITE: Final = frozenset(
    {c.RUNBOOK_REPOSITORY_PATH_INVALID, c.RUNBOOK_MODEL_FILE_INVALID, c.RUNBOOK_MODEL_FILE_MISSING}
)
"""The classes that place a model's load failure in its own files or repository. A load verdict's
reason that no rule knows is read only by these: a library or platform word inside a load reason
(``unable to load ... .so``) is left to the fallback page, as the labelled corpus decided."""


def model_site_class(text: str) -> str | None:
    """The runbook of ``text``'s cause class when that class is a model-site one (`MODEL_SITE`)."""
    found = cause_class(text)
    return found if found in MODEL_SITE else None


def over_crash(runbook: str | None, text: str) -> str | None:
    """``runbook``, unless it is the crash's page and ``text`` (the crash's own message: a ``what():``
    quoting a file it cannot open) names a cause class: a crash ranks after every cause."""
    if runbook == c.RUNBOOK_SERVER_CRASHED and (named := cause_class(text)) is not None:
        return named
    return runbook
