"""The demo: a sample Triton model repository (healthy and broken models) and a traffic driver.

``SAMPLE_REPOSITORY`` is shipped as package data, so it works from a wheel as well as from the
source tree. The constants below say what each model is for; tests and the demo rely on them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

SAMPLE_REPOSITORY: Final = Path(__file__).resolve().parent / "models"

# Healthy models.
VECTOR_SCALE: Final = "vector_scale"  # FP32 [8] -> 2x, dynamic batching, fixed cost per execution
TEXT_ECHO: Final = "text_echo"  # TYPE_STRING -> upper-cased, dynamic batching
SLOW_MODEL: Final = "slow_model"  # 0.1 s per request, no batching, one instance: requests queue
# LLM-shaped decoupled models (streamed tokens, a bounded KV cache), one per backend's metric families.
LLM_VLLM: Final = "llm_vllm"  # reports the vLLM backend's vllm:* families
LLM_TRTLLM: Final = "llm_trtllm"  # reports the TensorRT-LLM backend's nv_trt_llm_* / nv_llm_* families
LLM_MODELS: Final = (LLM_VLLM, LLM_TRTLLM)
SLOW_LOADING: Final = "slow_loading"  # initialize() takes SLOW_LOADING_SECONDS: a load to measure
SLOW_LOADING_SECONDS: Final = 1.5
TAIL_MODEL: Final = "tail_model"  # 60 ms per request, every 20th 600 ms: average fine, p99 not
HEALTHY_MODELS: Final = (VECTOR_SCALE, TEXT_ECHO, SLOW_MODEL, TAIL_MODEL, SLOW_LOADING, *LLM_MODELS)

# Broken models, each failing to load for a different reason.
BROKEN_MISSING_MODULE: Final = "broken_missing_module"
BROKEN_VERSION_DIR: Final = "broken_version_dir"
BROKEN_INIT: Final = "broken_init"
BROKEN_MODELS: Final = (BROKEN_MISSING_MODULE, BROKEN_VERSION_DIR, BROKEN_INIT)


# Tensor names shared by every sample model.
INPUT_NAME: Final = "INPUT"
OUTPUT_NAME: Final = "OUTPUT"
VECTOR_SCALE_DIMS: Final = 8
VECTOR_SCALE_FACTOR: Final = 2.0
SLOW_MODEL_DIMS: Final = 4
# The LLM models' tensors (as the vLLM backend names them; HTTP generate_stream maps JSON fields
# to them) and their KV cache: LLM_MAX_NUM_SEQS x LLM_MAX_MODEL_LEN tokens (config.pbtxt).
LLM_TEXT_INPUT: Final = "text_input"
LLM_MAX_TOKENS: Final = "max_tokens"
LLM_MAX_NUM_SEQS: Final = 8
LLM_MAX_MODEL_LEN: Final = 256

__all__ = [
    "BROKEN_CAUSES",
    "BROKEN_INIT",
    "BROKEN_IN_INDEX",
    "BROKEN_MISSING_MODULE",
    "BROKEN_MODELS",
    "BROKEN_ONLY_IN_LOG",
    "BROKEN_RUNBOOKS",
    "BROKEN_VERSION_DIR",
    "HEALTHY_MODELS",
    "INPUT_NAME",
    "LLM_MAX_MODEL_LEN",
    "LLM_MAX_NUM_SEQS",
    "LLM_MAX_TOKENS",
    "LLM_MODELS",
    "LLM_TEXT_INPUT",
    "LLM_TRTLLM",
    "LLM_VLLM",
    "OUTPUT_NAME",
    "SAMPLE_REPOSITORY",
    "SLOW_LOADING",
    "SLOW_LOADING_SECONDS",
    "SLOW_MODEL",
    "SLOW_MODEL_DIMS",
    "TAIL_MODEL",
    "TEXT_ECHO",
    "VECTOR_SCALE",
    "VECTOR_SCALE_DIMS",
    "VECTOR_SCALE_FACTOR",
]
