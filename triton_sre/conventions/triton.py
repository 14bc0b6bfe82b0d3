"""Names read from Triton: its metric families and labels on port 8002, the LLM backends' families,
model states of the repository index and fields of the statistics API.

These are Triton's names, not ours: they change only when Triton changes them.
"""

from __future__ import annotations

from typing import Final

# ---------------------------------------------------------------------------
# Triton's own Prometheus metric families (what we read on port 8002).
# ---------------------------------------------------------------------------
NV_INFERENCE_COUNT: Final = "nv_inference_count"
NV_EXEC_COUNT: Final = "nv_inference_exec_count"
NV_REQUEST_SUCCESS: Final = "nv_inference_request_success"
NV_REQUEST_FAILURE: Final = "nv_inference_request_failure"
NV_REQUEST_DURATION_US: Final = "nv_inference_request_duration_us"
NV_QUEUE_DURATION_US: Final = "nv_inference_queue_duration_us"
NV_COMPUTE_INPUT_DURATION_US: Final = "nv_inference_compute_input_duration_us"
NV_COMPUTE_INFER_DURATION_US: Final = "nv_inference_compute_infer_duration_us"
NV_COMPUTE_OUTPUT_DURATION_US: Final = "nv_inference_compute_output_duration_us"
NV_PENDING_REQUEST_COUNT: Final = "nv_inference_pending_request_count"
NV_GPU_PREFIX: Final = "nv_gpu_"
NV_GPU_UTILIZATION: Final = "nv_gpu_utilization"

# Per-model counter families the exporter keeps per snapshot.
PER_MODEL_COUNTERS: Final = (
    NV_INFERENCE_COUNT,
    NV_EXEC_COUNT,
    NV_REQUEST_SUCCESS,
    NV_REQUEST_FAILURE,
    NV_REQUEST_DURATION_US,
    NV_QUEUE_DURATION_US,
    NV_COMPUTE_INPUT_DURATION_US,
    NV_COMPUTE_INFER_DURATION_US,
    NV_COMPUTE_OUTPUT_DURATION_US,
)
PER_MODEL_GAUGES: Final = (NV_PENDING_REQUEST_COUNT,)

# A model config's `platform` for an ensemble: it executes nothing itself, and Triton adds its steps'
# compute durations to its own statistics (core ensemble_scheduler.cc, UpdateInferBatchStatsWithDuration).
PLATFORM_ENSEMBLE: Final = "ensemble"

# Triton's label names.
LABEL_MODEL: Final = "model"
LABEL_VERSION: Final = "version"
LABEL_GPU_UUID: Final = "gpu_uuid"
# On every per-model family when Triton runs with --model-namespacing=true (24.05+): the model's
# repository path, as given to --model-repository (core metric_model_reporter.cc). Two repositories may
# then hold models of the same name; the exporter's per-model figures carry it too (docs/exporter.md).
LABEL_NAMESPACE: Final = "namespace"
# Prometheus renames a scraped label that a target label already holds to `exported_<label>` (honor_labels
# off): Triton's `namespace` beside the Prometheus Operator's Kubernetes `namespace` target label.
EXPORTED_LABEL_PREFIX: Final = "exported_"
LABEL_REASON: Final = "reason"

# More families the generated rules and dashboards read.
NV_FIRST_RESPONSE_HISTOGRAM_MS: Final = "nv_inference_first_response_histogram_ms"
NV_GPU_MEMORY_USED_BYTES: Final = "nv_gpu_memory_used_bytes"
NV_GPU_MEMORY_TOTAL_BYTES: Final = "nv_gpu_memory_total_bytes"
NV_CPU_UTILIZATION: Final = "nv_cpu_utilization"
NV_CPU_MEMORY_USED_BYTES: Final = "nv_cpu_memory_used_bytes"
NV_CPU_MEMORY_TOTAL_BYTES: Final = "nv_cpu_memory_total_bytes"

# Values of Triton's `reason` label on nv_inference_request_failure (24.07+).
FAILURE_REASON_OTHER: Final = "OTHER"
FAILURE_REASON_BACKEND: Final = "BACKEND"
FAILURE_REASON_CANCELED: Final = "CANCELED"  # cancelled by the client: not bad by default
FAILURE_REASON_REJECTED: Final = "REJECTED"
FAILURE_REASONS: Final = (
    FAILURE_REASON_OTHER,
    FAILURE_REASON_BACKEND,
    FAILURE_REASON_CANCELED,
    FAILURE_REASON_REJECTED,
)
FAILURE_REASONS_NEVER_EXECUTED: Final = (
    FAILURE_REASON_REJECTED,
    FAILURE_REASON_CANCELED,
    FAILURE_REASON_OTHER,
)
"""Failures that count no execution of the model they fail (triton-inference-server/core, r24.10 and
2026's main alike): REJECTED and CANCELED are answered as the schedulers release a request from the
queue (a queue policy's timeout, a cancellation: dynamic_batch_scheduler.cc,
sequence_batch_scheduler.cc). OTHER is set in two places only: TritonModelInstance::
PrepareRequestsOrRespond (backend_model_instance.cc), when a batch fails its pre-execution checks
(input states, the EXECUTING state) before the backend is called, so before the backend reports the
batch (TRITONBACKEND_ModelInstanceReportBatchStatistics, the only source of a model's execution
count); and an ensemble's failed request (ensemble_scheduler.cc), for which the ensemble adds an
execution only when the request succeeded (UpdateInferBatchStatsWithDuration under status OK). A
backend's own failures (a failed execution or a request it reports failed) are BACKEND."""

# ---------------------------------------------------------------------------
# Model states as Triton's repository index reports them.
# ---------------------------------------------------------------------------
STATE_UNKNOWN: Final = "UNKNOWN"
STATE_READY: Final = "READY"
STATE_UNAVAILABLE: Final = "UNAVAILABLE"
STATE_LOADING: Final = "LOADING"
STATE_UNLOADING: Final = "UNLOADING"
# The repository index's reason for a version unloaded on purpose: a model-control unload, or a version the
# version policy retired when a newer one loaded (`latest: 1`). It serves nothing, and nothing failed.
REASON_UNLOADED: Final = "unloaded"
MODEL_STATES: Final = (STATE_UNKNOWN, STATE_READY, STATE_UNAVAILABLE, STATE_LOADING, STATE_UNLOADING)

# ---------------------------------------------------------------------------
# Latency summaries and histograms (tail latency, issue #10). Triton 2.51 with `--metrics-config
# summary_latencies=true` exports summaries (in µs, sliding window, per instance); 24.11+ with
# `histogram_latencies=true` exports NV_FIRST_RESPONSE_HISTOGRAM_MS (decoupled models until 26.01,
# every model from 26.01), which aggregates across instances.
# ---------------------------------------------------------------------------
NV_REQUEST_SUMMARY_US: Final = "nv_inference_request_summary_us"
NV_QUEUE_SUMMARY_US: Final = "nv_inference_queue_summary_us"
LABEL_QUANTILE: Final = "quantile"
# The quantiles Triton's summaries carry (label `quantile`, written as here).
TRITON_SUMMARY_QUANTILES: Final = ("0.5", "0.9", "0.95", "0.99", "0.999")
# The window a summary quantile covers: core's metric_model_reporter.cc creates each summary with
# its quantiles only, so prometheus-cpp's defaults hold (max_age 60 s in 5 age buckets). Two reads
# less than this apart share observations: they are not independent samples.
TRITON_SUMMARY_MAX_AGE_S: Final = 60.0
# The window a summary quantile is trusted over: only while the summary's own `_count` rose in it.
# The bot calls a model idle (no current latency expected) when it had no request in this window:
# Triton's summary max age plus a scrape interval of up to 60 s. (Until fleet26 it also gated every
# summary quantile; promql.summary_current does that now, without a window.)
SUMMARY_OBSERVED_WINDOW: Final = "2m"

# ---------------------------------------------------------------------------
# LLM serving (issue 11): the LLM backends' families read on port 8002.
# vLLM backend: triton-inference-server/vllm_backend src/utils/metrics.py (labels model, version);
# TensorRT-LLM backend: tensorrtllm_backend's custom_metrics_reporter (labels model, version and
# one category label per family).
# ---------------------------------------------------------------------------
VLLM_PROMPT_TOKENS: Final = "vllm:prompt_tokens_total"  # counter
VLLM_GENERATION_TOKENS: Final = "vllm:generation_tokens_total"  # counter
VLLM_TTFT_SECONDS: Final = "vllm:time_to_first_token_seconds"  # histogram
VLLM_TPOT_SECONDS: Final = "vllm:time_per_output_token_seconds"  # histogram
VLLM_E2E_SECONDS: Final = "vllm:e2e_request_latency_seconds"  # histogram
VLLM_REQUEST_PROMPT_TOKENS: Final = "vllm:request_prompt_tokens"  # histogram
VLLM_REQUEST_GENERATION_TOKENS: Final = "vllm:request_generation_tokens"  # histogram
# Gauges in no vllm_backend release branch (an unmerged change of May 2025): used when present.
VLLM_NUM_RUNNING: Final = "vllm:num_requests_running"
VLLM_NUM_WAITING: Final = "vllm:num_requests_waiting"
VLLM_CACHE_USAGE: Final = "vllm:gpu_cache_usage_perc"  # 0-1 despite the name
# The histogram bucket bounds the vLLM backend uses, in seconds (an LLM SLO threshold is one of them).
VLLM_TTFT_BUCKETS: Final = (
    0.001,
    0.005,
    0.01,
    0.02,
    0.04,
    0.06,
    0.08,
    0.1,
    0.25,
    0.5,
    0.75,
    1.0,
    2.5,
    5.0,
    7.5,
    10.0,
)
VLLM_TPOT_BUCKETS: Final = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5)
TRT_REQUEST_METRICS: Final = "nv_trt_llm_request_metrics"
TRT_KV_CACHE_BLOCK_METRICS: Final = "nv_trt_llm_kv_cache_block_metrics"
TRT_RUNTIME_MEMORY_METRICS: Final = "nv_trt_llm_runtime_memory_metrics"
TRT_INFLIGHT_BATCHER_METRICS: Final = "nv_trt_llm_inflight_batcher_metrics"
TRT_GENERAL_METRICS: Final = "nv_trt_llm_general_metrics"
TRT_INPUT_TOKEN_LEN: Final = "nv_llm_input_token_len"  # histogram, one observation per request
TRT_OUTPUT_TOKEN_LEN: Final = "nv_llm_output_token_len"  # histogram, one observation per request
TRT_LABEL_REQUEST_TYPE: Final = "request_type"
TRT_LABEL_KV_CACHE_BLOCK_TYPE: Final = "kv_cache_block_type"
TRT_REQUEST_SCHEDULED: Final = "scheduled"  # running in the batch this iteration
TRT_REQUEST_WAITING: Final = "waiting"  # the backend reports active - scheduled (25.04+)
# In-flight requests: before 25.04 (tensorrtllm_backend r23.12-r25.03) there is no `waiting` request_type,
# and waiting is read as active - scheduled, what the backend writes from 25.04 (model_instance_state.cc).
TRT_REQUEST_ACTIVE: Final = "active"
TRT_KV_FRACTION: Final = "fraction"  # used / max blocks (25.04+; earlier read as used / max)
TRT_KV_USED: Final = "used"
TRT_KV_MAX: Final = "max"

# ---------------------------------------------------------------------------
# Capacity (issue 16): Triton's families, help texts and JSON field names read from
# triton-inference-server/core (src/metrics.cc, src/tritonserver.cc) and the statistics extension.
# ---------------------------------------------------------------------------
NV_GPU_POWER_USAGE: Final = "nv_gpu_power_usage"  # watts
NV_GPU_POWER_LIMIT: Final = "nv_gpu_power_limit"  # watts
NV_ENERGY_CONSUMPTION: Final = "nv_energy_consumption"  # joules since Triton started (counter)
NV_MODEL_LOAD_DURATION_SECS: Final = "nv_model_load_duration_secs"  # gauge, 24.11+
# GET /v2/models/stats: model_stats[].memory_usage[] = {type, id, byte_size} (23.06+)
STATS_MEMORY_USAGE: Final = "memory_usage"
# GET /v2/models/stats: model_stats[].inference_stats = {<field>: {count, ns}} (statistics extension;
# core infer_stats.cc updates each with the Prometheus counter of the same measure, in ns rather than µs):
# `success` counts every successful request (cache hits included) and its ns is the request duration;
# then the four stages in STAGE_COUNTERS' order. What the exporter derives from when /metrics is not read.
STATS_INFERENCE_STATS: Final = "inference_stats"
STATS_REQUEST_FIELDS: Final = ("success", "queue", "compute_input", "compute_infer", "compute_output")
MEMORY_TYPE_CPU: Final = "CPU"
MEMORY_TYPE_CPU_PINNED: Final = "CPU_PINNED"
MEMORY_TYPE_GPU: Final = "GPU"
MEMORY_TYPES: Final = (MEMORY_TYPE_CPU, MEMORY_TYPE_CPU_PINNED, MEMORY_TYPE_GPU)

# ---------------------------------------------------------------------------
# `triton-sre doctor` (issue 27): more of Triton's families and config keys it looks for.
# ---------------------------------------------------------------------------
# The response cache implementation's own family: exported only when the server has a cache
# (--cache-config). The per-model nv_cache_num_hits_per_model exists for a model with
# response_cache enabled even without one, and stays 0 (measured on 2.51).
NV_CACHE_UTIL: Final = "nv_cache_util"
NV_GPU_METRIC_FAMILIES: Final = (NV_GPU_UTILIZATION, NV_GPU_MEMORY_USED_BYTES, NV_GPU_POWER_USAGE)
NV_CPU_METRIC_FAMILIES: Final = (NV_CPU_UTILIZATION, NV_CPU_MEMORY_USED_BYTES, NV_CPU_MEMORY_TOTAL_BYTES)
# config.pbtxt `parameters` key of the vLLM backend that turns its metrics on (off by default).
PARAM_REPORT_CUSTOM_METRICS: Final = "REPORT_CUSTOM_METRICS"
# The sample LLM models' (python backend) stand-in for the backend they imitate: vllm or trtllm.
PARAM_METRICS_FLAVOR: Final = "METRICS_FLAVOR"
BACKEND_VLLM: Final = "vllm"
BACKEND_TRTLLM: Final = "tensorrtllm"
FLAVOR_TRTLLM: Final = "trtllm"  # METRICS_FLAVOR value of a model imitating the TensorRT-LLM backend
KIND_GPU: Final = "KIND_GPU"  # instance_group kind
