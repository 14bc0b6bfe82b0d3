"""heldout83-98's misses, fixed by class from their sources.

heldout84, heldout85, heldout88:
- NIM's profile selector ("Could not find a profile that is currently runnable with the detected hardware")
  decides by the system information it prints below: no free GPU is the GPU's memory, a free GPU with no
  profile is a GPU the image has none for (platform-unsupported).
- A program's own JSON log record (NIM for LLMs' lines) at INFO/WARNING/DEBUG is a quiet line by its level
  field; vLLM's advice "If you are running out of memory, consider ..." is no out-of-memory failure.
- vLLM's and NIM's "Invalid repository ID or local directory specified" (NIM: "Missing HuggingFace
  configuration file named config.json") is the model file missing.
- Windows' "DLL load failed while importing X: The specified module could not be found." (CPython's
  dynload_win.c) is the native-library page; "... procedure could not be found" an export another
  release lacks.
- core's "not unique across all model repositories" after a model name quoted with backticks.
- The TRTIS-era example custom backends' "execution on GPU not supported" (CustomErrorString
  kGpuNotSupported) is an instance group the backend cannot run.

- NVML's return codes as pynvml raises them (nvidia-ml-py pynvml.py): the library missing, the driver not
  loaded, the NVML/RM version mismatch are the host driver's (cuda-driver-mismatch); the table is
  library_errors.yaml, group nvml, and tests/test_diagnosis_library_errors.py wraps each text.
- NCCL's own failure inside TensorRT-LLM's error (NCCLCHECK: ``[TensorRT-LLM][ERROR] Failed, NCCL error
  <file>:<line> '<ncclGetErrorString>'``) is NCCL's, not the backend's configuration; NCCL's texts have no
  page (unknown-load-failure). A crash report pasted under such a line is a crash of its own, and beside a
  server-wide failure no page covers, the crash's page comes first (server-crashed's Meaning: the crash
  that nothing in the log explains).
"""

from __future__ import annotations

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text

NCCL_INTERNAL = (
    "[TensorRT-LLM][ERROR] Failed, NCCL error "
    "/app/tensorrt_llm/cpp/tensorrt_llm/runtime/ncclCommunicator.cpp:122 "
    "'internal error - please report this issue to the NCCL developers'"
)
ABORT = [
    "double free or corruption (fasttop)",
    "[gpu-host:46796] *** Process received signal ***",
    "[gpu-host:46796] Signal: Aborted (6)",
]


def _runbooks(text: str) -> list[str]:
    return [f.runbook for f in diagnose_events(parse_text(text + "\n")).findings]


@pytest.mark.parametrize(
    "error",
    [
        "internal error - please report this issue to the NCCL developers",
        "unhandled system error (run with NCCL_DEBUG=INFO for details)",
        "unhandled cuda error (run with NCCL_DEBUG=INFO for details)",
    ],
)
def test_tensorrt_llms_nccl_check_is_nccls_failure_not_the_backend_config(error: str) -> None:
    line = f"[TensorRT-LLM][ERROR] Failed, NCCL error /app/cpp/tensorrt_llm/common/cudaUtils.h:210 '{error}'"
    assert _runbooks(line)[:1] == [c.RUNBOOK_UNKNOWN_LOAD_FAILURE]


def test_a_tensorrt_llm_config_error_stays_the_backend_config() -> None:
    line = "[TensorRT-LLM][ERROR] [json.exception.out_of_range.403] key 'lora_config' not found"
    assert _runbooks(line)[:1] == [c.RUNBOOK_LLM_BACKEND_CONFIG]


@pytest.mark.parametrize("prefix", ["", "root@node:/workspace# "])
def test_a_crash_pasted_under_an_unleveled_error_line_is_a_crash_of_its_own(prefix: str) -> None:
    found = _runbooks("\n".join([prefix + NCCL_INTERNAL, "", *ABORT]))
    assert found[:1] == [c.RUNBOOK_SERVER_CRASHED]
    assert found[1:] in ([], [c.RUNBOOK_UNKNOWN_LOAD_FAILURE])


def test_the_crash_folded_under_the_error_line_splits_off() -> None:
    assert _runbooks("\n".join([NCCL_INTERNAL, *ABORT])) == [
        c.RUNBOOK_SERVER_CRASHED,
        c.RUNBOOK_UNKNOWN_LOAD_FAILURE,
    ]


def test_the_crash_comes_after_a_cause_that_has_a_page() -> None:
    oom = "[TensorRT-LLM][ERROR] CUDA runtime error in cudaMalloc(ptr, n): out of memory"
    assert _runbooks("\n".join([oom, *ABORT]))[:1] == [c.RUNBOOK_GPU_OUT_OF_MEMORY]


def test_a_crash_under_a_line_that_says_no_failure_stays_with_it() -> None:
    # A bare line of no level and no failure wording (a program's own print) keeps the abort in its message:
    # one event, one finding, as before.
    assert len(_runbooks("\n".join(["Remove feature extractor!", "free(): invalid pointer"]))) == 1


# --- heldout84, heldout85, heldout88 ------------------------------------------------------------------------
NIM_NO_PROFILE = (
    "ERROR 06-23 15:41:21.19 utils.py:21] Could not find a profile that is currently runnable with the"
    " detected hardware. Please check the system information below and make sure you have enough free GPUs."
)


def test_nims_profile_selector_with_no_free_gpu_is_the_gpus_memory() -> None:
    text = "\n".join(
        [
            NIM_NO_PROFILE,
            "SYSTEM INFO",
            "- Free GPUs: <None>",
            "- Non-free GPUs:",
            "  -  [2684:10de] (0) NVIDIA GeForce RTX 4090 [current utilization: 7%]",
        ]
    )
    assert _runbooks(text)[:1] == [c.RUNBOOK_GPU_OUT_OF_MEMORY]


def test_nims_profile_selector_with_a_free_gpu_is_a_gpu_without_a_profile() -> None:
    text = "\n".join(
        [
            "INFO 11-12 22:55:02.833 ngc_profile.py:224] Detected 0 compatible profile(s).",
            NIM_NO_PROFILE,
            "SYSTEM INFO",
            "- Free GPUs:",
            "  -  [2321:10de] (0) NVIDIA H100 NVL [current utilization: 0%]",
        ]
    )
    assert _runbooks(text)[:1] == [c.RUNBOOK_PLATFORM_UNSUPPORTED]


def test_nims_low_free_memory_note_is_the_gpus_memory() -> None:
    text = "\n".join(
        [
            "INFO 07-26 09:44:00.18 ngc_profile.py:226] Detected additional 1 compatible profile(s) that are"
            " currently not runnable due to low free GPU memory.",
            NIM_NO_PROFILE,
        ]
    )
    assert _runbooks(text)[:1] == [c.RUNBOOK_GPU_OUT_OF_MEMORY]


def test_nims_json_info_records_naming_vllm_are_no_failure() -> None:
    record = (
        '{"level": "INFO", "time": "02-20 21:46:27.898", "file_path": '
        '"/usr/local/lib/python3.10/dist-packages/vllm_nvext/hub/ngc_injector.py", "line_number": "106", '
        '"message": "Valid profile: 8835c317 (vllm-bf16-tp1) on GPUs [0]", "exc_info": "None", '
        '"stack_info": "None"}'
    )
    advice = (
        "INFO 02-20 21:47:29 model_runner.py:977] CUDA graphs can take additional 1~3 GiB memory per GPU. If"
        " you are running out of memory, consider decreasing `gpu_memory_utilization` or enforcing eager"
        " mode."
    )
    report = diagnose_events(parse_text("\n".join(["$ kubectl logs nim-0", record, "", advice]) + "\n"))
    assert not report.has_failure, [f.runbook for f in report.findings]


def test_a_json_error_record_naming_vllm_still_counts() -> None:
    record = '{"level": "ERROR", "message": "vllm engine failed: gpu_memory_utilization must be at most 1"}'
    assert _runbooks(record)


@pytest.mark.parametrize(
    "line",
    [
        "ValueError: Invalid repository ID or local directory specified: /models/llama3-8b-instruct/. Missing"
        " HuggingFace configuration file named config.json.",
        "ValueError: Invalid repository ID or local directory specified: '/models/x'. Please verify the"
        " following requirements:",
    ],
)
def test_a_model_folder_without_config_json_is_the_file_missing(line: str) -> None:
    assert _runbooks(line)[:1] == [c.RUNBOOK_MODEL_FILE_MISSING]


@pytest.mark.parametrize(
    ("line", "runbook"),
    [
        (
            "ImportError: DLL load failed while importing triton_bindings: The specified module could not be"
            " found.",
            c.RUNBOOK_PYTHON_SHARED_LIBRARY_MISSING,
        ),
        (
            "ImportError: DLL load failed while importing _C: The specified procedure could not be found.",
            c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
        ),
    ],
)
def test_windows_dll_load_failures_read_as_the_loaders(line: str, runbook: str) -> None:
    assert _runbooks(line)[:1] == [runbook]


def test_a_model_name_in_two_repositories_quoted_with_backticks() -> None:
    line = "... failed to poll model `add_sub_1`: not unique across all model repositories"
    assert _runbooks(line)[:1] == [c.RUNBOOK_REPOSITORY_PATH_INVALID]


def test_the_help_text_naming_uniqueness_is_no_failure() -> None:
    line = (
        "  --model-repository <string>  Note that if a model is not unique across all model repositories at"
        " any time, the model will not be available."
    )
    assert _runbooks(line) == []


def test_an_example_custom_backend_refusing_a_gpu_instance() -> None:
    line = (
        "E0223 03:21:06.141209 1 sequence_batch_scheduler.cc:896] Initialization failed for Direct"
        " sequence-batch scheduler thread 0: initialize error for 'simple_sequence': (6) execution on GPU not"
        " supported"
    )
    assert _runbooks(line)[:1] == [c.RUNBOOK_INSTANCE_GROUP_INVALID]


# --- heldout89, heldout92 -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "message",
    [
        "archive_write_header() failed with error code = -25 error message is Hard-link target 'lib/x.so'"
        " does not exist.",
        "archive_read_next_header() failed with error code = -30 error message is Truncated tar archive",
        "archive_write_finish_entry() failed with error code = -25 error message is Write failed",
    ],
)
def test_every_libarchive_refusal_unpacking_the_python_environment(message: str) -> None:
    line = f"| add_sub | 3 | UNAVAILABLE: Internal: {message} |"
    assert _runbooks(line)[:1] == [c.RUNBOOK_PYTHON_MODULE_MISSING]


EVICTED = [
    "Events:",
    "  Type     Reason               Age                From     Message",
    "  ----     ------               ----               ----     -------",
    "  Warning  Evicted              12m                kubelet  The node was low on resource:"
    " ephemeral-storage. Threshold quantity: 638834513199, available: 434266920Ki.",
]


@pytest.mark.parametrize(
    "normal",
    [
        "  Normal   Killing              12m                kubelet  Stopping container vllm-lmcache",
        "  Normal   Started              12m                kubelet  Started container vllm",
    ],
)
def test_a_container_named_after_vllm_is_no_vllm_error(normal: str) -> None:
    assert _runbooks("\n".join([*EVICTED, normal]))[:1] == [c.RUNBOOK_HOST_RESOURCE_EXHAUSTED]


def test_vllm_by_name_still_counts() -> None:
    line = "ERROR: the vLLM engine failed to start: gpu_memory_utilization must be at most 1"
    assert _runbooks(line)[:1] == [c.RUNBOOK_LLM_BACKEND_CONFIG]


def test_vllm_finding_no_platform_is_a_container_without_its_gpu() -> None:
    text = "\n".join(
        [
            "~ $ kubectl logs decode-69bbb879cd-45jwg -n llm-d",
            'Defaulted container "vllm" out of: vllm, routing-proxy (init)',
            "INFO 05-20 20:12:25 [__init__.py:252] No platform detected, vLLM is running on"
            " UnspecifiedPlatform",
        ]
    )
    assert _runbooks(text)[:1] == [c.RUNBOOK_GPU_CONTAINER_RUNTIME]


def test_kubectls_defaulted_container_note_is_no_failure() -> None:
    assert _runbooks('Defaulted container "vllm" out of: vllm, routing-proxy (init)') == []


def test_a_line_another_logger_marks_info_starts_an_event_of_its_own() -> None:
    # One program's output under `kubectl logs`: its INFO lines are lines of their own, not more of the pasted
    # block before them, so their words are read at their level.
    text = "\n".join(
        [
            "~ $ kubectl logs nim-0",
            "Some banner line of the container",
            "INFO 02-20 21:47:29 model_runner.py:977] If the model engine fails, try enforce_eager.",
        ]
    )
    events = parse_text(text + "\n")
    assert events[-1].message.startswith("INFO 02-20 21:47:29 model_runner.py:977]")
    assert len(events) == 3


def test_a_shell_prompt_with_the_last_exit_status_is_a_prompt() -> None:
    text = "\n".join(
        ["~ [1]$ kubectl logs decode-0 -n llm-d", 'Defaulted container "vllm" out of: vllm, proxy']
    )
    assert _runbooks(text) == []


# --- heldout93 ----------------------------------------------------------------------------------------------
def test_the_hub_not_reachable_is_the_repository_access() -> None:
    line = (
        "requests.exceptions.ConnectionError: (MaxRetryError(\"HTTPSConnectionPool(host='huggingface.co',"
        " port=443): Max retries exceeded with url: /api/models/x/y/revision/main (Caused by"
        " NewConnectionError('<urllib3.connection.HTTPSConnection object>: Failed to establish a new"
        " connection: [Errno 101] Network is unreachable'))\"), '(Request ID: 1)')"
    )
    assert _runbooks(line)[:1] == [c.RUNBOOK_CLOUD_REPOSITORY_ACCESS]


def test_another_hosts_connection_error_is_not_the_hub() -> None:
    line = (
        "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='example.com', port=443): Max retries"
        " exceeded with url: /x"
    )
    assert c.RUNBOOK_CLOUD_REPOSITORY_ACCESS not in _runbooks(line)[:1]


def test_an_llm_package_whose_import_raises_attribute_error_is_another_release() -> None:
    text = "\n".join(
        [
            "(dynamo) (base) root@oq1:~/dynamo/target/debug# ./dynamo-run out=vllm Qwen/Qwen2.5-3B-Instruct",
            "thread 'tokio-runtime-worker' panicked at lib/engines/vllm/src/worker.rs:247:17:",
            "Failed to import python 'vllm' module. Are we running in the correct venv? AttributeError: class"
            " must define a '_type_' attribute",
        ]
    )
    assert _runbooks(text)[:1] == [c.RUNBOOK_LIBRARY_VERSION_MISMATCH]


def test_a_conda_env_before_a_prompt_is_still_a_prompt() -> None:
    assert _runbooks("(dynamo) (base) root@oq1:~/work# ./dynamo-run out=vllm Qwen/Qwen2.5-3B-Instruct") == []


def test_vllms_unsupported_kv_connector_is_the_backend_config() -> None:
    text = "\n".join(
        [
            "ERROR 05-13 08:41:45 [engine.py:598] Unsupported connector type: LMCacheConnectorV1",
            "ERROR 05-13 08:41:45 [engine.py:598] Traceback (most recent call last):",
            'ERROR 05-13 08:41:45 [engine.py:598]   File "/opt/venv/lib/python3.12/site-packages/vllm/engine/'
            'multiprocessing/engine.py", line 586, in run_mp_engine',
        ]
    )
    assert _runbooks(text)[:1] == [c.RUNBOOK_LLM_BACKEND_CONFIG]


# --- heldout94 ----------------------------------------------------------------------------------------------
def test_vllm_finding_no_platform_defers_to_the_loaders_words() -> None:
    text = "\n".join(
        [
            "DEBUG 10-01 12:03:47 [__init__.py:93] CUDA platform is not available because: NVML Shared"
            " Library Not Found",
            "INFO 10-01 13:17:36 [__init__.py:243] No platform detected, vLLM is running on"
            " UnspecifiedPlatform",
            "WARNING 10-01 12:03:47 [_custom_ops.py:21] Failed to import from vllm._C with"
            " ImportError('libcuda.so.1: cannot open shared object file: No such file or directory')",
        ]
    )
    found = diagnose_events(parse_text(text + "\n")).findings
    assert [(f.runbook, f.severity) for f in found] == [(c.RUNBOOK_CUDA_DRIVER_MISMATCH, c.IMPACT_CRITICAL)]


def test_a_cri_runtime_without_the_nvidia_handler() -> None:
    line = (
        "Warning  FailedCreatePodSandBox  2m  kubelet  Failed to create pod sandbox: rpc error: code ="
        ' Unknown desc = RuntimeHandler "nvidia" not supported'
    )
    assert _runbooks(line)[:1] == [c.RUNBOOK_GPU_CONTAINER_RUNTIME]


# --- heldout95, heldout96 -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("line", "runbook"),
    [
        (
            "ERROR args.parse_args: --override-engine-args and --trtllm.* dynamic flags are mutually"
            " exclusive. Use one or the other.",
            c.RUNBOOK_SERVER_OPTION_INVALID,
        ),
        (
            "serve.py: error: argument --model-path: not allowed with argument --model-name",
            c.RUNBOOK_SERVER_OPTION_INVALID,
        ),
        (
            'Error: task 20 panicked with message "could not bind to address: 0.0.0.0:8000"',
            c.RUNBOOK_SERVER_PORT_IN_USE,
        ),
        (
            "/root/venv/lib/python3.12/site-packages/dynamo/sdk/cli/bin/dynamo-run: error while loading"
            " shared libraries: libpython3.12.so.1.0: cannot open shared object file: No such file or"
            " directory",
            c.RUNBOOK_PYTHON_SHARED_LIBRARY_MISSING,
        ),
        (
            "ERROR engine.get_llm_engine: Error in engine context: 2 validation errors for LlmArgs",
            c.RUNBOOK_LLM_BACKEND_CONFIG,
        ),
        (
            "ValueError: The following arguments are specific to TensorRT backend and cannot be used with"
            " PyTorch backend: ['build_config'].",
            c.RUNBOOK_LLM_BACKEND_CONFIG,
        ),
        ("via-server-1  | cuInit(0) failed with error 802", c.RUNBOOK_CUDA_DRIVER_MISMATCH),
    ],
)
def test_launchers_and_engines_in_their_own_words(line: str, runbook: str) -> None:
    assert _runbooks(line)[:1] == [runbook]


def test_cuinit_finding_no_device_on_a_cpu_host_is_no_failure() -> None:
    assert _runbooks("cuInit(0) failed with error 100") == []


# --- heldout97 ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("line", "runbook"),
    [
        (
            "pod-5c86:1:1 [0] misc/shmutils.cc:72 NCCL WARN Error: failed to extend /dev/shm/nccl-H1dBqY to"
            " 9637892 bytes",
            c.RUNBOOK_SHM_TOO_SMALL,
        ),
        (
            "pod-5c86:1:1 [0] misc/shmutils.cc:113 NCCL WARN Error while creating shared memory segment"
            " /dev/shm/nccl-H1dBqY (size 9637888)",
            c.RUNBOOK_SHM_TOO_SMALL,
        ),
        (
            "Getting `could not select device driver with capabilities: [[gpu]]`",
            c.RUNBOOK_GPU_CONTAINER_RUNTIME,
        ),
        (
            "dlerr: /usr/lib64/libcuda.so.418.74: undefined symbol: cuCtxCreate_v3",
            c.RUNBOOK_CUDA_DRIVER_MISMATCH,
        ),
        ("cudaGetDeviceCount() ... Error 802: system not yet initialized", c.RUNBOOK_CUDA_DRIVER_MISMATCH),
        (
            "Could not start backend: Runtime compute cap 52 is not compatible with compile time compute"
            " cap 75",
            c.RUNBOOK_PLATFORM_UNSUPPORTED,
        ),
    ],
)
def test_gpu_servers_platform_in_their_own_words(line: str, runbook: str) -> None:
    assert _runbooks(line)[:1] == [runbook]


def test_another_librarys_undefined_symbol_stays_a_version_mismatch() -> None:
    line = "ImportError: /opt/conda/lib/libtorch_cuda.so: undefined symbol: cudaGraphInstantiateWithFlags"
    assert _runbooks(line)[:1] == [c.RUNBOOK_LIBRARY_VERSION_MISMATCH]


# --- heldout98 ----------------------------------------------------------------------------------------------
def test_rays_small_dev_shm_warning_is_a_warning_of_the_shm_page() -> None:
    line = (
        "2023-11-18 03:39:16,283 WARNING services.py:1996 -- WARNING: The object store is using /tmp instead"
        " of /dev/shm because /dev/shm has only 67108864 bytes available. This will harm performance!"
    )
    report = diagnose_events(parse_text(line + "\n"))
    assert [(f.runbook, f.severity) for f in report.findings] == [(c.RUNBOOK_SHM_TOO_SMALL, c.IMPACT_WARNING)]
    assert not report.has_failure


def test_torchserves_gpu_discovery_assertion_is_no_usable_gpu() -> None:
    text = "\n".join(
        [
            "java.lang.AssertionError: Unexpected nvidia-smi response.",
            "\tat org.pytorch.serve.util.ConfigManager.getAvailableGpu(ConfigManager.java:740)",
        ]
    )
    assert _runbooks(text)[:1] == [c.RUNBOOK_CUDA_DRIVER_MISMATCH]
