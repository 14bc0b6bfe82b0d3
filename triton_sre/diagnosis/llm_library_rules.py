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

from typing import Final

from triton_sre import conventions as c
from triton_sre.diagnosis.stack_rules import CauseRule, rx

__all__ = ["LLM_LIBRARY_RULES", "LLM_REFUSALS"]

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
)

LLM_LIBRARY_RULES: Final[tuple[CauseRule, ...]] = (
    CauseRule(
        c.RUNBOOK_GPU_OUT_OF_MEMORY,
        rx(
            r"\bis larger than the maximum number of tokens that can be stored in KV cache\b",
            r"\bKV cache is needed, which is larger than the available KV cache memory\b",
            # TensorRT-LLM's runtime: no execution context for an engine that streams its weights.
            r"\bFailed to allocate memory for weights\. Please try reducing --gpu_weights_percent\b",
        ),
        "vLLM vllm/worker/worker.py raise_if_cache_size_invalid (0.6), v1/core/kv_cache_utils.py (0.8); "
        "TensorRT-LLM cpp/tensorrt_llm/runtime/tllmRuntime.cpp TllmRuntime::addContext",
    ),
    CauseRule(
        c.RUNBOOK_PLATFORM_UNSUPPORTED,
        rx(
            r"\bBfloat16 is only supported on GPUs with compute capability of at least 8\.0\b",
            r"\bThe quantization method [\w-]+ is not supported for the current GPU\. Minimum capability: ",
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
            r"\bModel architectures \[[^\]\n]*\] are not supported for now\b",
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
        ),
        "transformers utils/hub.py cached_file (4.30-4.46); huggingface_hub utils/_http.py "
        "hf_raise_for_status",
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
    CauseRule(
        c.RUNBOOK_MODEL_FILE_MISSING,
        rx(
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
