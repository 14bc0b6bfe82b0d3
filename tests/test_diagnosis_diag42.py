"""Page boundaries where blind labels and the engine disagreed, decided from the wordings' sources (diag42,
issue 20; docs/diagnosis-boundaries.md). Each case quotes the wording as its source prints it; the corpus logs
are not read here (their labels stay as collected).

Changed by this round:

- ``No module named 'model'`` is the Python backend's stub importing ``model`` from the backend's own folder
  (python_backend ``src/python_be.cc`` sets ``runtime_modeldir`` whenever the backend's location is not
  ``<backend-directory>/python`` spelt exactly; ``src/pb_stub.cc`` ``ModelContext::Init`` then takes the
  model for a Python-based backend's): model.py is not where the stub looks, model-file-missing.
- A shared library the loader cannot find (glibc's ``error while loading shared libraries: <lib>: cannot open
  shared object file``) inside TensorRT-LLM's error is library-version-mismatch, as it is everywhere else; the
  driver's own libraries stay cuda-driver-mismatch.

Kept, now written into both pages' Meaning (the engine already agreed):

- a GraphDef with no ``Placeholder``: ``model provides at most 0`` is model-io-unsupported, a count short of
  the config's but above zero stays tensor-name-mismatch;
- core's ``Unable to set NUMA memory policy: <strerror>`` (``src/numa_utils.cc``, ``set_mempolicy``) with
  EPERM is permission-denied (the container's missing CAP_SYS_NICE);
- a custom backend's library in a cloud repository's model folder, dlopened by its URL (core
  ``src/backend_model.cc``, ``src/shared_library.cc``) is backend-not-found;
- a dead Python stub with nothing else said is python-model-error; a shared-memory error or a kill beside it
  decides;
- CUDA's own error text is cuda-driver-mismatch, the container runtime's own refusal gpu-container-runtime;
- TensorRT-LLM's ``maxTokensInPagedKvCache (N) must be large enough`` (two numbers of the configuration) is
  llm-backend-config, vLLM's KV refusals that name the memory gpu-out-of-memory;
- relayed and bare wordings: ``no version is available`` (version-dir-invalid), ``unable to load plan file``
  (trt-engine-incompatible), ``KIND_GPU but no GPUs are available`` (instance-group-invalid), ``model not
  found in any model repository`` (model-file-missing).
"""

# ruff: noqa: E501 - quoted log lines are test data

from __future__ import annotations

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text


def _first(text: str) -> str | None:
    findings = diagnose_events(parse_text(text)).findings
    return findings[0].runbook if findings else None


def _load_failed(model: str, reason: str) -> str:
    # core model_lifecycle.cc's line for a failed load, as 2.51 prints it (quoted message).
    return (
        f"E1207 10:00:00.000000 1 model_lifecycle.cc:642] \"failed to load '{model}' version 1: {reason}\"\n"
    )


# -- `No module named 'model'`: the stub looking for model.py in the backend's folder --------------------


@pytest.mark.parametrize(
    "text",
    [
        # server#7410's status cell, core's model table.
        "| add_sub        | 1       | UNAVAILABLE: Internal: ModuleNotFoundError: No module named 'model' |\n",
        _load_failed("add_sub", "Internal: ModuleNotFoundError: No module named 'model'"),
        # python_backend's fix commit quoting the error alone (a trailing slash in --backend-directory).
        "ModuleNotFoundError: No module named 'model'\n",
    ],
)
def test_no_module_named_model_is_the_model_file_not_where_the_stub_looks(text: str) -> None:
    assert _first(text) == c.RUNBOOK_MODEL_FILE_MISSING


@pytest.mark.parametrize(
    ("module", "page"),
    [
        # A package the stub's interpreter lacks: the import's page.
        ("models", c.RUNBOOK_PYTHON_MODULE_MISSING),
        ("transformers", c.RUNBOOK_PYTHON_MODULE_MISSING),
        ("model_utils", c.RUNBOOK_PYTHON_MODULE_MISSING),
        # A package that imported without its submodule: another release of it (MISSING_SUBMODULE).
        ("model.layers", c.RUNBOOK_LIBRARY_VERSION_MISMATCH),
        # The stub's own import of the version folder's file as `<version>.model`: the path is no Python file.
        ("1.model", c.RUNBOOK_MODEL_FILE_INVALID),
    ],
)
def test_other_module_names_keep_their_pages(module: str, page: str) -> None:
    assert _first(_load_failed("m", f"Internal: ModuleNotFoundError: No module named '{module}'")) == page


# -- a library the loader cannot find: library-version-mismatch whatever prints it ---------------------


@pytest.mark.parametrize(
    ("text", "page"),
    [
        # glibc's ld.so before main, inside TensorRT-LLM's error (changed: was llm-backend-config).
        (
            "[TensorRT-LLM][ERROR] executorWorker: error while loading shared libraries: libnvinfer.so.10: cannot "
            "open shared object file: No such file or directory\n",
            c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
        ),
        (
            "/usr/bin/python3: error while loading shared libraries: libtritonserver.so: cannot open shared object "
            "file: No such file or directory\n",
            c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
        ),
        # glibc elf/rtld.c: "ERROR: ld.so: object '%s' from %s cannot be preloaded (%s): ignored."
        (
            "ERROR: ld.so: object '/plugins/libmmdeploy_tensorrt_ops.so' from LD_PRELOAD cannot be preloaded "
            "(cannot open shared object file): ignored.\n",
            c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
        ),
        # The driver's own library keeps the driver's page, inside the LLM backend's error too.
        (
            "[TensorRT-LLM][ERROR] executorWorker: error while loading shared libraries: libcuda.so.1: cannot open "
            "shared object file: No such file or directory\n",
            c.RUNBOOK_CUDA_DRIVER_MISMATCH,
        ),
        # A Python extension's libpython: its own page.
        (
            "ImportError: libpython3.10.so.1.0: cannot open shared object file: No such file or directory\n",
            c.RUNBOOK_PYTHON_SHARED_LIBRARY_MISSING,
        ),
    ],
)
def test_a_library_the_loader_cannot_find(text: str, page: str) -> None:
    assert _first(text) == page


# -- kept boundaries, pinned ----------------------------------------------------------------------------


def test_a_graphdef_without_a_placeholder_is_an_input_the_backend_cannot_serve() -> None:
    # tensorflow_backend's I/O check (TRTIS's before it): the graph's inputs are its Placeholder nodes.
    zero = "Invalid argument: unable to load model 'face_graphdef', configuration expects 1 inputs, model provides at most 0"
    short = "Invalid argument: unable to load model 'ssd', configuration expects 2 inputs, model provides at most 1"
    assert _first(_load_failed("face_graphdef", zero)) == c.RUNBOOK_MODEL_IO_UNSUPPORTED
    assert _first(_load_failed("ssd", short)) == c.RUNBOOK_TENSOR_NAME_MISMATCH


def test_a_numa_policy_the_container_may_not_set_is_a_permission() -> None:
    # core src/numa_utils.cc SetNumaMemoryPolicy: "Unable to set NUMA memory policy: " + strerror(errno).
    reason = "Internal: Unable to set NUMA memory policy: Operation not permitted"
    assert _first(_load_failed("resnet", reason)) == c.RUNBOOK_PERMISSION_DENIED


def test_a_custom_backend_library_in_a_cloud_model_folder_is_not_found_by_the_loader() -> None:
    # core src/shared_library.cc OpenLibraryHandle: "unable to load shared library: " + dlerror(); the path is
    # the model folder's URL (src/backend_model.cc GetBackendLibrarySearchPaths), which dlopen cannot open.
    reason = (
        "Not found: unable to load shared library: s3://https://minio.example:9010/models/vosk/1/libtriton_vosk.so: "
        "cannot open shared object file: No such file or directory"
    )
    assert _first(_load_failed("vosk", reason)) == c.RUNBOOK_BACKEND_NOT_FOUND


_UNHEALTHY = _load_failed("m", "Internal: Stub process 'm_0' is not healthy.")


@pytest.mark.parametrize(
    ("before", "page"),
    [
        # Nothing else said: the dead stub's page, whose steps look for the kill and /dev/shm.
        ("", c.RUNBOOK_PYTHON_MODEL_ERROR),
        # python_backend src/shm_manager.cc: the region could not be created.
        (
            "E1207 09:59:59.000000 1 pb_stub.cc:400] Unable to initialize shared memory key "
            "'triton_python_backend_shm_region_1' to requested size (1048576 bytes). If you are running Triton "
            "inside docker, use '--shm-size' flag to control the shared memory region size. Each Python backend "
            "model instance requires at least 1 MB of shared memory. Error: No space left on device\n",
            c.RUNBOOK_SHM_TOO_SMALL,
        ),
        # The kernel's OOM killer (mm/oom_kill.c) ending the stub.
        (
            "[ 8123.456789] Out of memory: Killed process 4242 (triton_python_) total-vm:9123456kB, "
            "anon-rss:8123456kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:16000kB oom_score_adj:0\n",
            c.RUNBOOK_HOST_RESOURCE_EXHAUSTED,
        ),
    ],
)
def test_a_dead_stub_goes_where_the_log_says_why(before: str, page: str) -> None:
    assert _first(before + _UNHEALTHY) == page


@pytest.mark.parametrize(
    "text",
    [
        "Stub process 'REGIS_0' is not healthy.\n",
        # a client's view of the same death (python_be.cc: "Stub process is not healthy.")
        "tritonclient.utils.InferenceServerException: [StatusCode.INTERNAL] Failed to process the request(s) "
        "for model instance 'damage_0', message: Stub process is not healthy.\n",
    ],
)
def test_a_bare_dead_stub_is_the_python_models_page(text: str) -> None:
    assert _first(text) == c.RUNBOOK_PYTHON_MODEL_ERROR


@pytest.mark.parametrize(
    ("text", "page"),
    [
        # CUDA's own texts (cudaGetErrorString) as the reason a call failed: cuda-driver-mismatch, whose first
        # step (nvidia-smi inside the container) tells a container without the driver from an old driver.
        (
            "terminate called after throwing an instance of 'std::runtime_error'\n"
            "  what():  [FT][ERROR] CUDA runtime error: CUDA driver version is insufficient for CUDA runtime version "
            "/workspace/src/fastertransformer/models/multi_gpu_gpt/gpt_gemm.cc:74\n",
            c.RUNBOOK_CUDA_DRIVER_MISMATCH,
        ),
        (
            "failed to get CUDA device count: no CUDA-capable device is detected\n",
            c.RUNBOOK_CUDA_DRIVER_MISMATCH,
        ),
        (
            "/opt/tritonserver/bin/tritonserver: error while loading shared libraries: libcuda.so.1: cannot open "
            "shared object file: No such file or directory\n",
            c.RUNBOOK_CUDA_DRIVER_MISMATCH,
        ),
        # The container runtime's own refusal (moby daemon/errors.go): gpu-container-runtime.
        (
            'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].\n',
            c.RUNBOOK_GPU_CONTAINER_RUNTIME,
        ),
        # -- relayed and bare wordings whose page the Meaning now names
        # core model_repository_manager.cc's answer to a load request: no version of the model at all.
        (
            "tritonclient.utils.InferenceServerException: failed to load 'sid-minibert-onnx', no version is available\n",
            c.RUNBOOK_VERSION_DIR_INVALID,
        ),
        # tensorrt_backend AutoCompleteConfigHelper: TensorRT could not deserialize the plan.
        (
            _load_failed(
                "classnet",
                "Internal: unable to load plan file to auto complete config: /models/classnet/1/model.plan",
            ),
            c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE,
        ),
        # core model_config_utils.cc: no GPU at or above --min-supported-compute-capability.
        (
            _load_failed(
                "peoplenet",
                "Invalid argument: instance group peoplenet_0 of model peoplenet has kind KIND_GPU but no GPUs are available",
            ),
            c.RUNBOOK_INSTANCE_GROUP_INVALID,
        ),
        # core: a model named to load that no repository holds.
        (
            "E1207 10:00:00.000000 1 model_repository_manager.cc:1307] \"failed to poll model 'pipe': model not "
            'found in any model repository."\n',
            c.RUNBOOK_MODEL_FILE_MISSING,
        ),
    ],
)
def test_cuda_runtime_relayed_and_bare_wordings_keep_the_page_their_meaning_names(
    text: str, page: str
) -> None:
    assert _first(text) == page


# -- an LLM's KV cache smaller than one sequence ---------------------------------------------------------


@pytest.mark.parametrize(
    ("reason", "page"),
    [
        # TensorRT-LLM batch_manager/kvCacheManager.cpp (TLLM_CHECK_WITH_INFO) through the C++ backend: the KV
        # budget config.pbtxt sets against one sequence of the engine's maximum length.
        (
            "Internal: unexpected error when creating modelInstanceState: maxTokensInPagedKvCache (29184) must be "
            "large enough to process at least 1 sequence to completion (i.e. must be larger than beam_width (1) * "
            "tokensPerBlock (128) * maxBlocksPerSeq (272))",
            c.RUNBOOK_LLM_BACKEND_CONFIG,
        ),
        # vLLM worker.py raise_if_cache_size_invalid: the memory the weights leave.
        (
            "Internal: ValueError: The model's max seq len (32768) is larger than the maximum number of tokens "
            "that can be stored in KV cache (9584). Try increasing `gpu_memory_utilization` or decreasing "
            "`max_model_len` when initializing the engine.",
            c.RUNBOOK_GPU_OUT_OF_MEMORY,
        ),
        (
            "Internal: ValueError: No available memory for the cache blocks. Try increasing "
            "`gpu_memory_utilization` when initializing the engine.",
            c.RUNBOOK_GPU_OUT_OF_MEMORY,
        ),
    ],
)
def test_a_kv_cache_too_small_for_one_sequence(reason: str, page: str) -> None:
    assert _first(_load_failed("tensorrt_llm", reason)) == page
