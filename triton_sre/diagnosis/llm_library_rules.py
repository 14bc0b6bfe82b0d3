"""Pure data: the error texts of the Python-level libraries that Triton's LLM and Python backends run
(vLLM, TensorRT-LLM's runtime, Hugging Face transformers / huggingface_hub / tokenizers / safetensors,
protobuf and numpy under a model.py), read from their sources (issue 20 item 1). `library_errors.py`
holds the principle by which a text maps to a page and the table (``library_errors.yaml``, groups
``vllm``, ``tensorrt_llm``, ``transformers``, ``python``); these are the patterns the engine lacked for
them, appended to `library_errors.LIBRARY_RULES`.

By page:

- vLLM's KV cache does not fit the GPU memory left after the weights: ``gpu-out-of-memory``
  (TensorRT-LLM's ``maxTokensInPagedKvCache (N) must be large enough to process at least 1 sequence``
  stays ``llm-backend-config``, its labelled case heldout18/sherpa-688: the budget the config.pbtxt's
  ``kv_cache_free_gpu_mem_fraction`` / ``max_tokens_in_paged_kv_cache`` set is below the engine's one
  sequence);
- the GPU's compute capability is below what a dtype or quantization kernel needs: ``platform-unsupported``;
- an architecture, a config model type, a tokenizer.json format or generated protobuf code newer than the
  installed library: ``library-version-mismatch``;
- engine arguments (vLLM's ``model.json``) the model or the GPUs refuse, or a remote-code model without
  ``trust_remote_code``: ``llm-backend-config``;
- a local model directory without the file transformers asks for: ``model-file-missing``; a config or
  weights file that is not one (a cut download, a Git LFS pointer): ``model-file-invalid``;
- the Hugging Face Hub refusing or not answering a download (gated, private, unreachable):
  ``cloud-repository-access``; a model.py calling from_pretrained on remote code without
  ``trust_remote_code=True``: ``python-model-error``.
"""

from __future__ import annotations

import re
from typing import Final

from triton_sre import conventions as c
from triton_sre.diagnosis.log_layouts import QUIET_WORDS, json_record
from triton_sre.diagnosis.stack_rules import CauseRule, rx

__all__ = [
    "LLM_CONSEQUENCE_RULES",
    "LLM_LIBRARY_RULES",
    "LLM_REFUSALS",
    "VLLM_NO_PLATFORM",
    "not_on_info_line",
]


VLLM_NO_PLATFORM: Final = (
    r"\bFailed to infer device type\b"
    # vLLM 0.8+ (vllm/platforms/__init__.py resolve_current_platform_cls_qualname) when no platform plugin
    # finds a device, printed at INFO; the engine then cannot start.
    r"|\bNo platform detected, vLLM is running on UnspecifiedPlatform\b"
)
"""vLLM finding no device platform: the process sees no GPU. A symptom: where the log also says why in CUDA's
or the loader's words (libcuda.so.1 not found, NVML's library missing), that is the page (settle.py)."""


def not_on_info_line(*alternatives: str) -> re.Pattern[str]:
    """Like `rx`, but only on a line that the library itself did not mark INFO or WARNING:
    TensorRT-LLM prints its parameter defaults (``[TensorRT-LLM][WARNING] enable_kv_cache_reuse is
    not specified, will be set to false``, a json.exception about an optional key) on every healthy
    start. Nor on a frame of UCX's crash backtrace (ucs/debug/debug.c, one space and a 16-digit address:
    ``8 0x0000000000127022 tensorrt_llm::runtime::TllmRuntime::TllmRuntime() :0``): where a process
    crashed is no configuration it refused (TensorRT-LLM's own exception trace, ``16      0x7fd112125977
    tensorrt_llm::...``, follows a check that threw, and still counts). Nor on vLLM's own INFO, WARNING
    or DEBUG line (vllm/logger.py: ``INFO 10-01 00:00:10 [file.py:123] msg``, older releases without the
    brackets, a worker's ``(VllmWorkerProcess pid=N) `` before it): ``Killing local vLLM worker
    processes`` is its progress, not a refusal. Nor on a traceback's ``File "..."`` line under vLLM's ERROR
    prefix (its ``logger.exception``): where vLLM raised; the exception's line under it says what (diag40).
    Nor on a JSON record whose level is INFO, WARNING or DEBUG (NIM for LLMs' JSON lines name vLLM's files
    on every start)."""
    body = "|".join(f"(?:{a})" for a in alternatives)
    return re.compile(
        rf"(?m:^(?![^\n]*\[(?:TensorRT-LLM\]\[)?(?:INFO|WARNING|DEBUG|VERBOSE)\])"
        rf"(?!\s*(?:\([^)\n]*pid=\d+[^)\n]*\)\s*)?(?:INFO|WARNING|DEBUG) \d\d-\d\d \d\d:\d\d:\d\d\b)"
        rf"(?!\s*(?:\([^)\n]*pid=\d+[^)\n]*\)\s*)?(?:ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?"
        rf" \[?[\w.-]+:\d+\]\s+File \")"
        rf"(?!\s*\d+ 0x[0-9a-f]{{16}} )(?!{json_record(QUIET_WORDS)})"
        rf"[^\n]*?(?:{body}))",
        re.I,
    )



# vLLM's refusals of its engine arguments (model.json), worded without a failure word ("must be divisible",
# "is greater than", "is smaller than"): a bare paste of one is a failure all the same (through
# `library_errors.LIBRARY_FAILURE_MARKS`, which signals.BACKEND_FAILURE reads).
LLM_REFUSALS: Final[tuple[str, ...]] = (
    r"\bTotal number of (?:attention heads|hidden layers) \(\d+\) must be divisible by (?:tensor|pipeline)"
    r" parallel size\b",
    r"\bplease (?:set tensor_parallel_size|ensure that world_size) \(\d+\) (?:to|is) less than (?:than )?max"
    r" local gpu count\b",
    r"\bThe number of required GPUs exceeds the total number of available GPUs in the placement group\b",
    r"\bUser-specified max_model_len \(\d+\) is greater than the derived max_model_len\b",
    r"\bmax_num_batched_tokens \(\d+\) is smaller than max_model_len\b",
    r"\bGPU memory utilization must be less than 1\.0\b",
    r"\bUnknown quantization method: [\w-]+\. Must be one of\b",
    r"\bQuantization method specified in the model config \(\w+\) does not match the quantization method\b",
    # A model.json key this vLLM's AsyncEngineArgs (a dataclass) lacks: CPython's wording, 3.10+.
    r"\bAsyncEngineArgs\.__init__\(\) got an unexpected keyword argument '",
    # TensorRT-LLM's world: more ranks per node than the GPUs the rank sees (cpp/tensorrt_llm/runtime/
    # worldConfig.cpp, TLLM_CHECK_WITH_INFO: "Detect %d GPUs, the GPU number is incompatible with %d
    # gpusPerNode when MPI size is %d"): the engine's tensor x pipeline parallelism does not fit the host.
    r"\bthe GPU number is incompatible with \d+ gpusPerNode when MPI size is \d+",
    # TensorRT-LLM's executor refusing the engine for the configured batching (batch_manager/
    # trtGptModelInflightBatching.cpp, std::runtime_error): an engine built without the in-flight batching
    # plugins, or whose one sequence the KV budget cannot hold when the config asks to fail fast.
    r"\bTrtGptModelInflightBatching requires GPT attention(?:/Mamba Conv 1d)? plugin with packed input and"
    r" paged KV cache\b",
    r"\bAttention window too large to fit even a single sequence in the KV cache\b",
    # diag40, vLLM's start-up checks: a dtype the checkpoint's quantization kernels refuse (model_loader; a
    # pydantic "Value error, ..." in later releases), a tensor parallel size that splits a quantized weight
    # off its groups (gptq.py / awq.py create_weights), an adapter above max_lora_rank
    # (lora/worker_manager.py), a scheduler budget below max_num_seqs (config.py SchedulerConfig), a Ray
    # placement group without a GPU on the driver's node (ray_gpu_executor.py).
    r"\btorch\.\w+ is not supported for quantization method [\w-]+\. Supported dtypes: ",
    r"\bThe (?:input|output) size is not aligned with the quantized weight shape\b",
    r"\bLoRA rank \d+ is greater than max_lora_rank \d+",
    r"\bmax_num_batched_tokens \(\d+\) must be greater than or equal to max_num_seqs\b",
    r"\bRay does not allocate any GPUs on the driver node\b",
    # TensorRT-LLM's Python runtime (runtime/model_runner_cpp.py ModelRunnerCpp.from_dir) and its LLM API
    # (llmapi/llm_args.py KvCacheConfig): runtime settings the engine or the config refuses.
    r"\bcross_kv_cache_fraction should only be used with enc-dec models\b",
    r"\bLoRA weights are unspecified and also unavailable in the engine_dir\b",
    r"\bkv_cache_config\.free_gpu_memory_fraction must be a float between 0 and 1\b",
    # TensorRT-LLM's LLM API (tensorrt_llm/llmapi/llm_args.py: pydantic models TorchLlmArgs, TrtLlmArgs and
    # AutoDeploy's LlmArgs) refusing the arguments it was built with.
    r"\b\d+ validation errors? for (?:Torch|Trt|_Torch)?LlmArgs\b",
    r"\bThe following arguments are specific to (?:TensorRT|PyTorch) backend\b",
    # vLLM's KV-transfer connector factory (distributed/kv_transfer/kv_connector/factory.py): the
    # kv_transfer_config names a connector this vLLM release (or engine, V0 or V1) does not register.
    r"\bUnsupported connector type: \w",
)

# NVIDIA NIM's profile selector (its utils.py, NIM for LLMs 1.0 on): "Could not find a profile that is
# currently runnable with the detected hardware. Please check the system information below and make sure you
# have enough free GPUs." then "SYSTEM INFO" listing "- Free GPUs:" and "- Non-free GPUs:". The list decides:
# no free GPU (`<None>`: each held by other processes, or with too little free memory, which the selector also
# says as "not runnable due to low free GPU memory") is the GPU's memory; a GPU free and still no profile is a
# GPU the image has no profile for. The message without its list says neither.
_NIM_NO_PROFILE: Final = r"\bCould not find a profile that is currently runnable with the detected hardware\b"
_PCI_ID_ROW: Final = r"[^\n]*?-\s+\[[0-9a-f]{4}:[0-9a-f]{4}\]"  # "  -  [2321:10de] (0) NVIDIA H100 NVL"
NIM_PROFILE_RULES: Final[tuple[CauseRule, ...]] = (
    CauseRule(
        c.RUNBOOK_GPU_OUT_OF_MEMORY,
        rx(
            rf"{_NIM_NO_PROFILE}[\s\S]{{0,600}}?- Free GPUs: <None>",
            r"\bcompatible profile\(s\) that are currently not\s+runnable due to low free GPU memory\b",
        ),
        "NVIDIA NIM for LLMs' profile selector (utils.py, ngc_profile.py; 1.0 on): no free GPU",
    ),
    CauseRule(
        c.RUNBOOK_PLATFORM_UNSUPPORTED,
        rx(rf"{_NIM_NO_PROFILE}[\s\S]{{0,600}}?- Free GPUs:[ \t]*\n{_PCI_ID_ROW}"),
        "NVIDIA NIM's profile selector (utils.py; 1.0 on): a free GPU the image has no profile for",
    ),
)

LLM_LIBRARY_RULES: Final[tuple[CauseRule, ...]] = (
    *NIM_PROFILE_RULES,
    CauseRule(
        c.RUNBOOK_GPU_OUT_OF_MEMORY,
        rx(
            r"\bis larger than the maximum number of tokens that can be stored in KV cache\b",
            r"\bKV cache is needed, which is larger than the available KV cache memory\b",
            # TensorRT-LLM's runtime: no execution context for an engine that streams its weights.
            r"\bFailed to allocate memory for weights\. Please try reducing --gpu_weights_percent\b",
            # vLLM's start-up memory checks (diag40): less free GPU memory than gpu_memory_utilization asks
            # for (v1/worker/gpu_worker.py), and the profile finding the GPU's free memory changed
            # under it, another process on the same GPU (worker.py / v1 gpu_worker.py "Error in memory
            # profiling").
            r"\bon startup is less than desired GPU memory utilization\b",
            r"\bError in memory profiling\b",
        ),
        "vLLM vllm/worker/worker.py raise_if_cache_size_invalid (0.6), v1/core/kv_cache_utils.py (0.8); "
        "TensorRT-LLM cpp/tensorrt_llm/runtime/tllmRuntime.cpp TllmRuntime::addContext",
    ),
    CauseRule(
        c.RUNBOOK_PLATFORM_UNSUPPORTED,
        rx(
            r"\bBfloat16 is only supported on GPUs with compute capability of at least 8\.0\b",
            r"\bThe quantization method [\w-]+ is not supported for the current GPU\. Minimum capability: ",
            # The V1 engine forced (VLLM_USE_V1=1) on a GPU below compute capability 8.0 (arg_utils.py;
            # users' reports with 0.9.2).
            r"\bVLLM_USE_V1=1 is not supported with Compute Capability < \d",
        ),
        "vLLM worker.py _check_if_gpu_supports_dtype, model_loader/loader.py _get_quantization_config "
        "(0.6-0.8)",
    ),
    CauseRule(
        c.RUNBOOK_LLM_BACKEND_CONFIG,
        rx(
            *LLM_REFUSALS,
            # vLLM's hint over transformers' remote-code refusal: model.json lacks "trust_remote_code": true.
            r"\bconsider setting `trust_remote_code=True` in LLM\b",
        ),
        "vLLM vllm/config.py, executor/*.py, transformers_utils/{config,tokenizer}.py (0.6.3-0.8.5); "
        "AsyncEngineArgs (a dataclass: model.json's keys are its keyword arguments); TensorRT-LLM "
        "cpp/tensorrt_llm/runtime/worldConfig.cpp",
    ),
    CauseRule(
        c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
        rx(
            # ... or one whose model file the registry could not import ("failed to be inspected", 0.6.5 on:
            # a dependency missing or of another release than the vLLM build, vLLM's own troubleshooting).
            r"\bModel architectures \[[^\]\n]*\] (?:are not supported for now|failed to be inspected)\b",
            # serde's untagged-enum error on tokenizers' ModelWrapper: tokenizer.json of a newer tokenizers.
            r"\bdata did not match any variant of untagged enum ModelWrapper\b",
            # protobuf >= 4 refusing _pb2.py code generated by protoc < 3.19.
            r"\bDescriptors cannot be created directly\b",
            # numpy 1.x's C API header compiled into an extension imported under numpy 2.
            r"\bnumpy\.core\._multiarray_umath failed to import\b",
        ),
        "vLLM model_executor/models/registry.py; serde_derive via tokenizers ModelWrapper; protobuf 4.21+ "
        "_CheckCalledFromGeneratedFile; numpy 1.x __multiarray_api.h",
    ),
    CauseRule(
        c.RUNBOOK_CLOUD_REPOSITORY_ACCESS,
        rx(
            r"\bYou are trying to access a gated repo\b",
            r"\bCannot access gated repo for url https?://",
            r"\bRepository Not Found for url: https?://",
            r"\bWe couldn't connect to 'https?://[^'\n]+' to load (?:this file|\S+)",
            # The request itself never reaching the Hub (urllib3 connectionpool.py MaxRetryError /
            # ReadTimeoutError under requests' ConnectionError: "HTTPSConnectionPool(host='huggingface.co',
            # port=443): Max retries exceeded with url: ... (Caused by NewConnectionError(...: Network is
            # unreachable))").
            r"\bHTTPSConnectionPool\(host='(?:[\w-]+\.)*(?:huggingface\.co|hf\.co)', port=\d+\): "
            r"(?:Max retries exceeded|Read timed out)",
        ),
        "transformers utils/hub.py cached_file (4.30-4.46); huggingface_hub utils/_http.py "
        "hf_raise_for_status; urllib3 connectionpool.py (MaxRetryError, ReadTimeoutError)",
    ),
    CauseRule(
        c.RUNBOOK_MODEL_FILE_INVALID,
        rx(
            r"\bIt looks like the config file at '[^'\n]+' is not a valid JSON file\b",
            r"\bSafetensorError: Error while deserializing header: (?:HeaderTooLarge|MetadataIncompleteBuffer"
            r"|InvalidHeader\w*)\b",
        ),
        "transformers configuration_utils.py _get_config_dict; safetensors bindings/python/src/lib.rs (0.4)",
    ),
    # vLLM finding no platform to run on (config.py DeviceConfig, device "auto"): the process sees no GPU, a
    # container started without one (no --gpus, no runtime class), gpu-container-runtime's Meaning.
    CauseRule(
        c.RUNBOOK_GPU_CONTAINER_RUNTIME,
        rx(
            VLLM_NO_PLATFORM,
        ),
        "vLLM vllm/config.py DeviceConfig (users' reports from 0.4 on); vllm/platforms/__init__.py (0.8 on)",
    ),
    CauseRule(
        c.RUNBOOK_MODEL_FILE_MISSING,
        rx(
            # vLLM's get_config (transformers_utils/config.py, 0.7 on): the model path is neither a Hub
            # repository nor a local folder holding config.json (or Mistral's params.json). NIM for LLMs
            # (1.1x) words it with the path unquoted and the missing file named.
            r"\bInvalid repository ID or local directory specified: ",
            r"\bMissing HuggingFace configuration file named config\.json\b",
            r"\bdoes not appear to have a file named [\w./-]+\. Checkout 'https?://",
            r"\bCan't load tokenizer for '[^'\n]+'\. If you were trying to load it from\b",
            r"\bError no file named [\w.-]+(?:, [\w.-]+)*(?: or [\w.-]+)? found in directory\b",
            r"\bis not a local folder and is not a valid model identifier\b",
            r"\bCannot find the requested files in the disk cache and outgoing traffic has been disabled\b",
        ),
        "transformers utils/hub.py cached_file, tokenization_utils_base.py, modeling_utils.py (4.30-4.46); "
        "huggingface_hub file_download.py (0.25)",
    ),
    CauseRule(
        c.RUNBOOK_PYTHON_MODEL_ERROR,
        rx(r"\brequires you to execute the configuration file in that repo on your local machine\b"),
        "transformers dynamic_module_utils.py resolve_trust_remote_code (4.40-4.46)",
    ),
)
"""Patterns for the LLM and Python libraries' texts of the table (`library_errors.LIBRARY_RULES` ends with
them; `rules.PRIORITY` orders them by page)."""

# vLLM's V1 API process after its EngineCore died (v1/engine/utils.py wait_for_engine_startup: "Engine core
# initialization failed. See root cause above.", "Failed core proc(s): {...}" appended in later releases): a
# consequence, whose cause the EngineCore's traceback above names. Read where no other exception line is in
# the same text (the cause cut off, or only in lines of its own, which then decide by `rules.RANK`), no page
# says why: not the configuration's the vLLM paths of its frames would read, nor the model's own code the
# stub's frames would (diag40).
_OTHER_EXCEPTION_LINE: Final = (
    r"^[ \t]*(?:\([^)\n]*pid=\d+[^)\n]*\)[ \t]*)?(?!RuntimeError: Engine core initialization failed\b)"
    r"(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception): "
)
LLM_CONSEQUENCE_RULES: Final[tuple[CauseRule, ...]] = (
    CauseRule(
        c.RUNBOOK_UNKNOWN_LOAD_FAILURE,
        re.compile(
            rf"\A(?![\s\S]*?{_OTHER_EXCEPTION_LINE})[\s\S]*?"
            r"\bEngine core initialization failed\. See root cause above\b",
            re.M,
        ),
        "vLLM vllm/v1/engine/utils.py wait_for_engine_startup (V1 engine): a consequence of the EngineCore's "
        "failure",
    ),
)
"""Placed before every other rule by `rules._build` (as `library_errors.CUDA_FRAME_RULES`)."""
