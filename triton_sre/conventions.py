"""Every name other code and documents rely on, defined once.

Metric names, label names, model states, request stages, runbook ids, default ports and
environment variables live here. The exporter, the generators, the tests and the docs import
them; a metric name or runbook id written as a literal anywhere else is a bug.
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

# Triton's label names.
LABEL_MODEL: Final = "model"
LABEL_VERSION: Final = "version"
LABEL_GPU_UUID: Final = "gpu_uuid"
LABEL_REASON: Final = "reason"

# ---------------------------------------------------------------------------
# Request stages: the four Triton measures plus what is left of the request time.
# ---------------------------------------------------------------------------
STAGE_QUEUE: Final = "queue"
STAGE_COMPUTE_INPUT: Final = "compute_input"
STAGE_COMPUTE_INFER: Final = "compute_infer"
STAGE_COMPUTE_OUTPUT: Final = "compute_output"
STAGE_OTHER: Final = "other"
# stage -> Triton counter it comes from (other = request duration minus the rest)
STAGE_COUNTERS: Final = {
    STAGE_QUEUE: NV_QUEUE_DURATION_US,
    STAGE_COMPUTE_INPUT: NV_COMPUTE_INPUT_DURATION_US,
    STAGE_COMPUTE_INFER: NV_COMPUTE_INFER_DURATION_US,
    STAGE_COMPUTE_OUTPUT: NV_COMPUTE_OUTPUT_DURATION_US,
}
STAGES: Final = (*STAGE_COUNTERS, STAGE_OTHER)

# ---------------------------------------------------------------------------
# Model states as Triton's repository index reports them.
# ---------------------------------------------------------------------------
STATE_UNKNOWN: Final = "UNKNOWN"
STATE_READY: Final = "READY"
STATE_UNAVAILABLE: Final = "UNAVAILABLE"
STATE_LOADING: Final = "LOADING"
STATE_UNLOADING: Final = "UNLOADING"
MODEL_STATES: Final = (STATE_UNKNOWN, STATE_READY, STATE_UNAVAILABLE, STATE_LOADING, STATE_UNLOADING)

# ---------------------------------------------------------------------------
# Metrics triton-sre exports (port 8003 by default).
# ---------------------------------------------------------------------------
M_UP: Final = "triton_sre_up"
M_BATCHING_RATIO: Final = "triton_sre_batching_ratio"
M_BATCH_FILL_RATIO: Final = "triton_sre_batch_fill_ratio"
M_REQUEST_STAGE_SECONDS: Final = "triton_sre_request_stage_seconds"
M_REQUEST_STAGE_FRACTION: Final = "triton_sre_request_stage_fraction"
M_COST_PER_HOUR: Final = "triton_sre_cost_per_hour"
M_COST_PER_1K: Final = "triton_sre_cost_per_1k_inferences"
M_SERVER_COST_PER_HOUR: Final = "triton_sre_server_cost_per_hour"
M_IDLE_COST_FRACTION: Final = "triton_sre_idle_cost_fraction"
M_COST_DEVICES: Final = "triton_sre_cost_devices"
M_MODEL_STATE: Final = "triton_sre_model_state"
M_MODEL_UNAVAILABLE: Final = "triton_sre_model_unavailable"
M_MODEL_UNAVAILABLE_INFO: Final = "triton_sre_model_unavailable_reason_info"
M_EXECUTIONS_BY_BATCH_SIZE: Final = "triton_sre_executions_by_batch_size_total"
M_MODEL_DYNAMIC_BATCHING: Final = "triton_sre_model_dynamic_batching"  # from the model config
M_MODEL_MAX_BATCH_SIZE: Final = "triton_sre_model_max_batch_size"  # from the model config
M_WINDOW_SECONDS: Final = "triton_sre_window_seconds"
M_POLL_DURATION: Final = "triton_sre_poll_duration_seconds"
M_POLL_ERRORS: Final = "triton_sre_poll_errors_total"
M_LAST_SUCCESS: Final = "triton_sre_last_success_timestamp_seconds"
M_BUILD_INFO: Final = "triton_sre_build_info"

# Labels on triton-sre's metrics.
L_MODEL: Final = LABEL_MODEL
L_VERSION: Final = LABEL_VERSION
L_STAGE: Final = "stage"
L_STATE: Final = "state"
L_RUNBOOK: Final = "runbook"
L_REASON: Final = "reason"
L_CURRENCY: Final = "currency"
L_BATCH_SIZE: Final = "batch_size"
L_TARGET: Final = "target"
L_KIND: Final = "kind"
L_DEVICE_KIND: Final = "device_kind"

# Poll targets (label `target` of triton_sre_poll_errors_total).
TARGET_METRICS: Final = "metrics"
TARGET_INDEX: Final = "repository_index"
TARGET_STATS: Final = "stats"
TARGET_CONFIG: Final = "config"
TARGET_EXPORTER: Final = "exporter"  # the exporter's own poll code (a bug, not Triton)
POLL_TARGETS: Final = (TARGET_METRICS, TARGET_INDEX, TARGET_STATS, TARGET_CONFIG)

# Fault kinds (label `kind` of triton_sre_poll_errors_total).
FAULT_CONNECTION: Final = "connection"
FAULT_TIMEOUT: Final = "timeout"
FAULT_HTTP_STATUS: Final = "http_status"
FAULT_TOO_LARGE: Final = "too_large"
FAULT_PARSE: Final = "parse"
FAULT_INTERNAL: Final = "internal"
FAULT_KINDS: Final = (FAULT_CONNECTION, FAULT_TIMEOUT, FAULT_HTTP_STATUS, FAULT_TOO_LARGE, FAULT_PARSE)

# The longest raw UNAVAILABLE reason exposed in a label value (the full text is on /debug/models).
MAX_REASON_LABEL_CHARS: Final = 120

# ---------------------------------------------------------------------------
# Runbook ids: one Markdown page each under runbooks/<id>.md.
# ---------------------------------------------------------------------------
# Why a model failed to load (the diagnosis engine's answers).
RUNBOOK_MODEL_FILE_MISSING: Final = "model-file-missing"
RUNBOOK_VERSION_DIR_INVALID: Final = "version-dir-invalid"
RUNBOOK_CONFIG_NAME_MISMATCH: Final = "config-name-mismatch"
RUNBOOK_CONFIG_PARSE_ERROR: Final = "config-parse-error"
RUNBOOK_BACKEND_NOT_FOUND: Final = "backend-not-found"
RUNBOOK_TENSOR_NAME_MISMATCH: Final = "tensor-name-mismatch"
RUNBOOK_SHAPE_OR_DIMS_MISMATCH: Final = "shape-or-dims-mismatch"
RUNBOOK_MAX_BATCH_SIZE_UNSUPPORTED: Final = "max-batch-size-unsupported"
RUNBOOK_DATATYPE_MISMATCH: Final = "datatype-mismatch"
RUNBOOK_TRT_ENGINE_INCOMPATIBLE: Final = "trt-engine-incompatible"
RUNBOOK_CUDA_DRIVER_MISMATCH: Final = "cuda-driver-mismatch"
RUNBOOK_GPU_OUT_OF_MEMORY: Final = "gpu-out-of-memory"
RUNBOOK_PYTHON_MODULE_MISSING: Final = "python-module-missing"
RUNBOOK_PYTHON_MODEL_ERROR: Final = "python-model-error"
RUNBOOK_SHM_TOO_SMALL: Final = "shm-too-small"
RUNBOOK_ENSEMBLE_DEPENDENCY: Final = "ensemble-dependency"
RUNBOOK_PERMISSION_DENIED: Final = "permission-denied"
RUNBOOK_CLOUD_REPOSITORY_ACCESS: Final = "cloud-repository-access"
RUNBOOK_LLM_BACKEND_CONFIG: Final = "llm-backend-config"
RUNBOOK_LIBRARY_VERSION_MISMATCH: Final = "library-version-mismatch"
RUNBOOK_UNKNOWN_LOAD_FAILURE: Final = "unknown-load-failure"  # the fallback
# --- diagnosis: classes found by the message inventory (issue 14) ---
RUNBOOK_BATCHING_CONFIG_INVALID: Final = "batching-config-invalid"
RUNBOOK_BACKEND_PLATFORM_MISMATCH: Final = "backend-platform-mismatch"
RUNBOOK_ENSEMBLE_STEP_VERSION: Final = "ensemble-step-version"
RUNBOOK_PYTHON_SHARED_LIBRARY_MISSING: Final = "python-shared-library-missing"
RUNBOOK_MODEL_FILE_INVALID: Final = "model-file-invalid"
RUNBOOK_MODEL_IO_UNSUPPORTED: Final = "model-io-unsupported"
RUNBOOK_INSTANCE_GROUP_INVALID: Final = "instance-group-invalid"
RUNBOOK_REPOSITORY_PATH_INVALID: Final = "repository-path-invalid"
# --- diagnosis: operating-system resource errors (disk full, host RAM, open files, OOM killer) ---
RUNBOOK_HOST_RESOURCE_EXHAUSTED: Final = "host-resource-exhausted"
LOAD_FAILURE_RUNBOOKS: Final = (
    RUNBOOK_MODEL_FILE_MISSING,
    RUNBOOK_VERSION_DIR_INVALID,
    RUNBOOK_CONFIG_NAME_MISMATCH,
    RUNBOOK_CONFIG_PARSE_ERROR,
    RUNBOOK_BACKEND_NOT_FOUND,
    RUNBOOK_TENSOR_NAME_MISMATCH,
    RUNBOOK_SHAPE_OR_DIMS_MISMATCH,
    RUNBOOK_MAX_BATCH_SIZE_UNSUPPORTED,
    RUNBOOK_DATATYPE_MISMATCH,
    RUNBOOK_TRT_ENGINE_INCOMPATIBLE,
    RUNBOOK_CUDA_DRIVER_MISMATCH,
    RUNBOOK_GPU_OUT_OF_MEMORY,
    RUNBOOK_PYTHON_MODULE_MISSING,
    RUNBOOK_PYTHON_MODEL_ERROR,
    RUNBOOK_SHM_TOO_SMALL,
    RUNBOOK_ENSEMBLE_DEPENDENCY,
    RUNBOOK_PERMISSION_DENIED,
    RUNBOOK_CLOUD_REPOSITORY_ACCESS,
    RUNBOOK_LLM_BACKEND_CONFIG,
    RUNBOOK_LIBRARY_VERSION_MISMATCH,
    # Classes the message inventory (triton_sre/diagnosis/inventory.yaml) showed had no page.
    RUNBOOK_BATCHING_CONFIG_INVALID,
    RUNBOOK_BACKEND_PLATFORM_MISMATCH,
    RUNBOOK_ENSEMBLE_STEP_VERSION,
    RUNBOOK_PYTHON_SHARED_LIBRARY_MISSING,
    RUNBOOK_MODEL_FILE_INVALID,
    RUNBOOK_MODEL_IO_UNSUPPORTED,
    RUNBOOK_INSTANCE_GROUP_INVALID,
    RUNBOOK_REPOSITORY_PATH_INVALID,
    RUNBOOK_HOST_RESOURCE_EXHAUSTED,
    RUNBOOK_UNKNOWN_LOAD_FAILURE,
)

# ---------------------------------------------------------------------------
# Alerts the generated rules ship, and the runbook page each links to.
# TritonModelUnavailable links to the load-failure runbook in its `runbook` label instead.
# ---------------------------------------------------------------------------
ALERT_SLO_ERROR_BUDGET_BURN: Final = "TritonSLOErrorBudgetBurn"
ALERT_SLO_LATENCY_BUDGET_BURN: Final = "TritonSLOLatencyBudgetBurn"
ALERT_MODEL_UNAVAILABLE: Final = "TritonModelUnavailable"
ALERT_SERVER_DOWN: Final = "TritonServerDown"
ALERT_EXPORTER_DOWN: Final = "TritonExporterDown"
ALERT_QUEUE_TIME_HIGH: Final = "TritonQueueTimeHigh"
ALERT_BATCHING_INEFFECTIVE: Final = "TritonBatchingIneffective"
ALERT_PENDING_REQUESTS_GROWING: Final = "TritonPendingRequestsGrowing"
ALERT_GPU_MEMORY_NEAR_LIMIT: Final = "TritonGPUMemoryNearLimit"
ALERT_EXPORTER_POLL_FAILING: Final = "TritonExporterPollFailing"
ALERT_MODEL_STUCK_LOADING: Final = "TritonModelStuckLoading"
ALERT_RUNBOOKS: Final = {
    ALERT_SLO_ERROR_BUDGET_BURN: "slo-error-budget-burn",
    ALERT_SLO_LATENCY_BUDGET_BURN: "slo-latency-budget-burn",
    ALERT_SERVER_DOWN: "triton-server-down",
    ALERT_EXPORTER_DOWN: "triton-exporter-down",
    ALERT_QUEUE_TIME_HIGH: "triton-queue-time-high",
    ALERT_BATCHING_INEFFECTIVE: "triton-batching-ineffective",
    ALERT_PENDING_REQUESTS_GROWING: "triton-pending-requests-growing",
    ALERT_GPU_MEMORY_NEAR_LIMIT: "triton-gpu-memory-near-limit",
    ALERT_EXPORTER_POLL_FAILING: "triton-exporter-poll-failing",
    ALERT_MODEL_STUCK_LOADING: "triton-model-stuck-loading",
}

# Alert severities (routing) and finding/runbook severities (impact); critical <-> page.
SEVERITY_PAGE: Final = "page"
SEVERITY_TICKET: Final = "ticket"
IMPACT_CRITICAL: Final = "critical"
IMPACT_WARNING: Final = "warning"
IMPACT_INFO: Final = "info"

# ---------------------------------------------------------------------------
# Ports, defaults, environment variables.
# ---------------------------------------------------------------------------
TRITON_HTTP_PORT: Final = 8000
TRITON_GRPC_PORT: Final = 8001
TRITON_METRICS_PORT: Final = 8002
EXPORTER_PORT: Final = 8003

DEFAULT_TRITON_URL: Final = f"http://localhost:{TRITON_HTTP_PORT}"
DEFAULT_LISTEN: Final = f"0.0.0.0:{EXPORTER_PORT}"
DEFAULT_INTERVAL_SECONDS: Final = 15.0
DEFAULT_WINDOW_SECONDS: Final = 60.0
DEFAULT_TIMEOUT_SECONDS: Final = 5.0
DEFAULT_MAX_RESPONSE_BYTES: Final = 32 * 1024 * 1024

ENV_TRITON_URL: Final = "TRITON_SRE_TRITON_URL"
ENV_METRICS_URL: Final = "TRITON_SRE_METRICS_URL"
ENV_LISTEN: Final = "TRITON_SRE_LISTEN"
ENV_INTERVAL: Final = "TRITON_SRE_INTERVAL"
ENV_WINDOW: Final = "TRITON_SRE_WINDOW"
ENV_CONFIG: Final = "TRITON_SRE_CONFIG"

# Exit codes of every command (triage and lint: 1 means failures were found).
EXIT_OK: Final = 0
EXIT_FAILURE: Final = 1
EXIT_USAGE: Final = 2  # usage, configuration or input error

# Exporter HTTP paths.
PATH_METRICS: Final = "/metrics"
PATH_HEALTHZ: Final = "/healthz"
PATH_READYZ: Final = "/readyz"
PATH_DEBUG_MODELS: Final = "/debug/models"


# ---------------------------------------------------------------------------
# Generators (`triton-sre generate`): more Triton families, scrape jobs, SLO windows, rule names.
# ---------------------------------------------------------------------------
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

# Prometheus' labels and scrape job names the generated rules and dashboards select on.
LABEL_JOB: Final = "job"
LABEL_INSTANCE: Final = "instance"
LABEL_LE: Final = "le"
DEFAULT_TRITON_JOB: Final = "triton"
DEFAULT_EXPORTER_JOB: Final = "triton-sre"
DEFAULT_RUNBOOK_BASE_URL: Final = "runbooks/"

# Labels on generated SLO series and alerts.
L_SLO: Final = "slo"
L_SEVERITY: Final = "severity"
L_WINDOW: Final = "window"

# SLO types, latency SLI sources, and the burn-rate tiers of the Google SRE workbook
# (multi-window, multi-burn-rate): (long window, short window, share of the period's budget, severity).
SLO_AVAILABILITY: Final = "availability"
SLO_LATENCY: Final = "latency"
LATENCY_SLI_AUTO: Final = "auto"
LATENCY_SLI_HISTOGRAM: Final = "histogram"
LATENCY_SLI_TIME_SLICE: Final = "time_slice"
DEFAULT_SLO_PERIOD: Final = "30d"
BURN_TIERS: Final = (
    ("1h", "5m", 0.02, SEVERITY_PAGE),
    ("6h", "30m", 0.05, SEVERITY_PAGE),
    ("1d", "2h", 0.10, SEVERITY_TICKET),
    ("3d", "6h", 0.10, SEVERITY_TICKET),
)

# Recording-rule names (`level:metric:operations`). Levels name the labels kept besides `job`.
REC_LEVEL_INSTANCE: Final = "instance_model_version"
REC_LEVEL_MODEL: Final = "model_version"
REC_LEVELS: Final = (REC_LEVEL_INSTANCE, REC_LEVEL_MODEL)
REC_RATE_WINDOW: Final = "5m"


def rec_rate(level: str, family: str) -> str:
    """Per-second rate of a Triton counter, summed at `level` (no double counting of GPU series)."""
    return f"{level}:{family}:rate{REC_RATE_WINDOW}"


def rec_requests(level: str) -> str:
    """Requests per second (successes + failures of every reason)."""
    return f"{level}:triton_requests:rate{REC_RATE_WINDOW}"


def rec_error_ratio(level: str) -> str:
    """Failed requests / all requests (every failure reason)."""
    return f"{level}:triton_request_errors:ratio_rate{REC_RATE_WINDOW}"


def rec_batching_ratio(level: str) -> str:
    """Inferences per execution: mirrors triton_sre_batching_ratio."""
    return f"{level}:triton_batching_ratio:ratio_rate{REC_RATE_WINDOW}"


def rec_stage_seconds(level: str) -> str:
    """Seconds per successful request by stage: mirrors triton_sre_request_stage_seconds."""
    return f"{level}:triton_request_stage_seconds:ratio_rate{REC_RATE_WINDOW}"


def rec_stage_fraction(level: str) -> str:
    """Each stage's share of request time: mirrors triton_sre_request_stage_fraction."""
    return f"{level}:triton_request_stage_fraction:ratio_rate{REC_RATE_WINDOW}"


def rec_slo_requests(window: str) -> str:
    """Valid requests per second of an SLO's models over `window` (labels slo, model)."""
    return f"slo_model:triton_slo_requests:rate{window}"


def rec_slo_errors(window: str) -> str:
    """An SLO's bad-event ratio over `window` (labels slo, model); burn rate = this / (1 - objective)."""
    return f"slo_model:triton_slo_errors:ratio_rate{window}"


REC_SLO_SLICE_BAD: Final = "slo_model:triton_slo_time_slice_bad:bool"  # time-slice latency SLI
REC_SLO_OBJECTIVE: Final = "slo:triton_slo_objective:ratio"  # one constant series per SLO
REC_SLO_BUDGET_REMAINING: Final = "slo_model:triton_slo_error_budget_remaining:ratio"


# Where the runbook pages are read from (overrides the packaged/repository `runbooks/`).
ENV_RUNBOOKS_DIR: Final = "TRITON_SRE_RUNBOOKS_DIR"


# ---------------------------------------------------------------------------
# Incident bot (`triton-sre bot`): Alertmanager webhook in, Slack out.
# ---------------------------------------------------------------------------
BOT_PORT: Final = 8004
DEFAULT_BOT_LISTEN: Final = f"0.0.0.0:{BOT_PORT}"
PATH_BOT_ALERTMANAGER: Final = "/alertmanager"
PATH_BOT_SLACK_COMMANDS: Final = "/slack/commands"
ENV_BOT_TOKEN: Final = "TRITON_SRE_BOT_TOKEN"  # bearer token Alertmanager sends (http_config.authorization)
ENV_SLACK_BOT_TOKEN: Final = "SLACK_BOT_TOKEN"
ENV_SLACK_SIGNING_SECRET: Final = "SLACK_SIGNING_SECRET"
ENV_SLACK_API_URL: Final = "SLACK_API_URL"
DEFAULT_SLACK_API_URL: Final = "https://slack.com/api/"
SLASH_COMMAND: Final = "/triton"
# The bot's own metrics (GET /metrics on the bot).
M_BOT_NOTIFICATIONS: Final = "triton_sre_bot_notifications_received_total"
M_BOT_SLACK_CALLS: Final = "triton_sre_bot_slack_calls_total"  # labels method, outcome (ok or Slack's error)
M_BOT_ACTIONS: Final = "triton_sre_bot_messages_total"  # label action: posted, updated, repeat, failed
M_BOT_OUTBOX: Final = "triton_sre_bot_outbox_notifications"  # label state: pending, done, superseded, failed
L_METHOD: Final = "method"
L_OUTCOME: Final = "outcome"
L_ACTION: Final = "action"

# ---------------------------------------------------------------------------
# `triton-sre lint`: problems Triton accepts but that cost money or latency (severity warning).
# Problems Triton fails on use the load-failure runbook ids above.
# ---------------------------------------------------------------------------
RUNBOOK_LINT_DYNAMIC_BATCHING_UNUSED: Final = "lint-dynamic-batching-unused"
RUNBOOK_LINT_QUEUE_DELAY_OVER_SLO: Final = "lint-queue-delay-over-slo"
RUNBOOK_LINT_INSTANCE_GROUP_DEFAULT: Final = "lint-instance-group-default"
RUNBOOK_LINT_STRAY_ENTRY: Final = "lint-stray-entry"
LINT_RUNBOOKS: Final = (
    RUNBOOK_LINT_DYNAMIC_BATCHING_UNUSED,
    RUNBOOK_LINT_QUEUE_DELAY_OVER_SLO,
    RUNBOOK_LINT_INSTANCE_GROUP_DEFAULT,
    RUNBOOK_LINT_STRAY_ENTRY,
)

# Triton's latency summary (with --metrics-config summary_latencies=true), read by `triton-sre report`.
NV_REQUEST_SUMMARY_US: Final = "nv_inference_request_summary_us"
LABEL_QUANTILE: Final = "quantile"
# Alertmanager's status of an alert and of a group (webhook payload version 4).
AM_STATUS_FIRING: Final = "firing"
AM_STATUS_RESOLVED: Final = "resolved"
AM_WEBHOOK_VERSION: Final = "4"
LABEL_ALERTNAME: Final = "alertname"
# Annotations every generated alert carries (the bot shows them).
ANNOTATION_SUMMARY: Final = "summary"
ANNOTATION_DESCRIPTION: Final = "description"
ANNOTATION_RUNBOOK_URL: Final = "runbook_url"

# ---------------------------------------------------------------------------
# The sidecar stack (`triton-sre stack`, docker-compose.yml, deploy/): images, ports, paths.
# ---------------------------------------------------------------------------
# Triton server version -> NGC release of the image carrying it; the tests run 2.51 (nvidia-pytriton).
TRITON_SERVER_RELEASES: Final = {"2.51": "24.10"}
TRITON_TESTED_VERSION: Final = "2.51"
TRITON_IMAGE: Final = f"nvcr.io/nvidia/tritonserver:{TRITON_SERVER_RELEASES[TRITON_TESTED_VERSION]}-py3"
PROMETHEUS_PORT: Final = 9090
ALERTMANAGER_PORT: Final = 9093
GRAFANA_PORT: Final = 3000
AM_RECEIVER_BOT: Final = "triton-sre-bot"  # Alertmanager receiver posting to the bot's webhook
DEPLOY_DIR: Final = "deploy"


# ---------------------------------------------------------------------------
# LLM serving (issue 11): the LLM backends' families read on port 8002, and what triton-sre
# derives from them. vLLM backend: triton-inference-server/vllm_backend src/utils/metrics.py
# (labels model, version); TensorRT-LLM backend: tensorrtllm_backend's custom_metrics_reporter
# (labels model, version and one category label per family).
# ---------------------------------------------------------------------------
VLLM_PROMPT_TOKENS: Final = "vllm:prompt_tokens_total"  # counter
VLLM_GENERATION_TOKENS: Final = "vllm:generation_tokens_total"  # counter
VLLM_TTFT_SECONDS: Final = "vllm:time_to_first_token_seconds"  # histogram
VLLM_TPOT_SECONDS: Final = "vllm:time_per_output_token_seconds"  # histogram
VLLM_E2E_SECONDS: Final = "vllm:e2e_request_latency_seconds"  # histogram
VLLM_REQUEST_PROMPT_TOKENS: Final = "vllm:request_prompt_tokens"  # histogram
VLLM_REQUEST_GENERATION_TOKENS: Final = "vllm:request_generation_tokens"  # histogram
# Gauges of the backend's earlier releases: used when present, never required.
VLLM_NUM_RUNNING: Final = "vllm:num_requests_running"
VLLM_NUM_WAITING: Final = "vllm:num_requests_waiting"
VLLM_CACHE_USAGE: Final = "vllm:gpu_cache_usage_perc"  # 0-1 despite the name
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
TRT_REQUEST_WAITING: Final = "waiting"  # the backend reports active - scheduled
TRT_KV_FRACTION: Final = "fraction"  # used / max blocks
TRT_KV_USED: Final = "used"
TRT_KV_MAX: Final = "max"

# What triton-sre exports for LLM models (per model and version, when the families are present).
M_LLM_TOKENS_PER_SECOND: Final = "triton_sre_llm_tokens_per_second"
M_LLM_REQUESTS: Final = "triton_sre_llm_requests"
M_LLM_KV_CACHE_UTILIZATION: Final = "triton_sre_llm_kv_cache_utilization_ratio"
M_LLM_TTFT_SECONDS: Final = "triton_sre_llm_time_to_first_token_seconds"
M_LLM_TPOT_SECONDS: Final = "triton_sre_llm_time_per_output_token_seconds"
M_COST_PER_1M_TOKENS: Final = "triton_sre_cost_per_1m_tokens"
M_LLM_PARSE_PROBLEMS: Final = "triton_sre_llm_parse_problems"  # samples ignored in the last poll
L_DIRECTION: Final = "direction"
L_PROBLEM: Final = "problem"
DIRECTION_INPUT: Final = "input"
DIRECTION_OUTPUT: Final = "output"
LLM_STATE_RUNNING: Final = "running"
LLM_STATE_WAITING: Final = "waiting"
# Why an LLM sample was ignored (label `problem` of triton_sre_llm_parse_problems).
LLM_PROBLEM_NO_MODEL: Final = "missing_model_label"
LLM_PROBLEM_UNKNOWN_LABEL: Final = "unknown_label_value"
LLM_PROBLEM_NOT_FINITE: Final = "not_finite"
LLM_PROBLEM_NEGATIVE: Final = "negative_value"
LLM_PROBLEM_NO_INF_BUCKET: Final = "histogram_without_inf"
LLM_PROBLEMS: Final = (
    LLM_PROBLEM_NO_MODEL,
    LLM_PROBLEM_UNKNOWN_LABEL,
    LLM_PROBLEM_NOT_FINITE,
    LLM_PROBLEM_NEGATIVE,
    LLM_PROBLEM_NO_INF_BUCKET,
)

# LLM recording rules (labels job, model, version; quantile rules add `quantile`, token rates
# `direction`), alerts and runbooks. Rules on Triton's raw LLM families, not the exporter's.
REC_LLM_TTFT_QUANTILE: Final = (
    f"{REC_LEVEL_MODEL}:triton_llm_time_to_first_token_seconds:histogram_quantile{REC_RATE_WINDOW}"
)
REC_LLM_TPOT_QUANTILE: Final = (
    f"{REC_LEVEL_MODEL}:triton_llm_time_per_output_token_seconds:histogram_quantile{REC_RATE_WINDOW}"
)
REC_LLM_TOKENS_RATE: Final = f"{REC_LEVEL_MODEL}:triton_llm_tokens:rate{REC_RATE_WINDOW}"
REC_LLM_KV_CACHE: Final = f"{REC_LEVEL_MODEL}:triton_llm_kv_cache_utilization:ratio"
REC_LLM_WAITING: Final = f"{REC_LEVEL_MODEL}:triton_llm_requests_waiting:sum"
REC_LLM_RUNNING: Final = f"{REC_LEVEL_MODEL}:triton_llm_requests_running:sum"
LLM_QUANTILES: Final = ("0.5", "0.95", "0.99")
LLM_KV_SATURATED_RATIO: Final = 0.95  # TritonLLMKVCacheSaturated: cache use at or above this ...
LLM_SATURATED_FOR: Final = "10m"  # ... with requests waiting, for this long
ALERT_LLM_KV_CACHE_SATURATED: Final = "TritonLLMKVCacheSaturated"
ALERT_LLM_REQUESTS_WAITING: Final = "TritonLLMRequestsWaiting"
LLM_ALERT_RUNBOOKS: Final = {
    ALERT_LLM_KV_CACHE_SATURATED: "triton-llm-kv-cache-saturated",
    ALERT_LLM_REQUESTS_WAITING: "triton-llm-requests-waiting",
}
ALERT_RUNBOOKS.update(LLM_ALERT_RUNBOOKS)  # one map of alert -> runbook for the generators and the bot
# Label on the LLM alerts: what limits the model, from the KV cache use when requests wait.
L_BOUND: Final = "bound"
BOUND_MEMORY: Final = "memory"  # cache full: more KV memory, shorter max tokens, another replica
BOUND_COMPUTE: Final = "compute"  # cache not full: compute- or scheduler-bound
UID_LLM_DASHBOARD: Final = "triton-sre-llm"
# LLM SLO types (request-based from the vLLM backend's histograms; for time_per_output_token the
# events are output tokens) and the histogram bucket bounds the backend uses, in seconds
# (vllm_backend src/utils/metrics.py): an SLO threshold must be one of them.
SLO_TTFT: Final = "ttft"
SLO_TPOT: Final = "time_per_output_token"
LLM_SLO_TYPES: Final = (SLO_TTFT, SLO_TPOT)
VLLM_TTFT_BUCKETS: Final = (
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
)
VLLM_TPOT_BUCKETS: Final = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5)
LLM_SLO_HISTOGRAMS: Final = {
    SLO_TTFT: (VLLM_TTFT_SECONDS, VLLM_TTFT_BUCKETS),
    SLO_TPOT: (VLLM_TPOT_SECONDS, VLLM_TPOT_BUCKETS),
}
# Capacity (issue 16): per-model memory, load time, GPU headroom, models that fit, energy.
# Triton's families, help texts and JSON field names read from triton-inference-server/core
# (src/metrics.cc, src/tritonserver.cc) and the statistics extension document.
# ---------------------------------------------------------------------------
NV_GPU_POWER_USAGE: Final = "nv_gpu_power_usage"  # watts
NV_GPU_POWER_LIMIT: Final = "nv_gpu_power_limit"  # watts
NV_ENERGY_CONSUMPTION: Final = "nv_energy_consumption"  # joules since Triton started (counter)
NV_MODEL_LOAD_DURATION_SECS: Final = "nv_model_load_duration_secs"  # gauge, 24.11+
# GET /v2/models/stats: model_stats[].memory_usage[] = {type, id, byte_size} (23.06+)
STATS_MEMORY_USAGE: Final = "memory_usage"
MEMORY_TYPE_CPU: Final = "CPU"
MEMORY_TYPE_CPU_PINNED: Final = "CPU_PINNED"
MEMORY_TYPE_GPU: Final = "GPU"
MEMORY_TYPES: Final = (MEMORY_TYPE_CPU, MEMORY_TYPE_CPU_PINNED, MEMORY_TYPE_GPU)

M_MODEL_MEMORY_BYTES: Final = "triton_sre_model_memory_bytes"
M_MODEL_LOAD_SECONDS: Final = "triton_sre_model_load_seconds"
M_GPU_MEMORY_HEADROOM_BYTES: Final = "triton_sre_gpu_memory_headroom_bytes"
M_GPU_MODELS_THAT_FIT: Final = "triton_sre_gpu_models_that_fit"
M_GPU_LARGEST_MODEL_BYTES: Final = "triton_sre_gpu_largest_model_bytes"
M_ENERGY_COST_PER_HOUR: Final = "triton_sre_energy_cost_per_hour"
M_MODEL_ENERGY_COST_PER_HOUR: Final = "triton_sre_model_energy_cost_per_hour"
M_GPU_METRICS_MISSING: Final = "triton_sre_gpu_metrics_missing"
L_DEVICE: Final = "device"  # GPU uuid when known, else Triton's memory type id
M_HOST_MEMORY_HEADROOM_BYTES: Final = "triton_sre_host_memory_headroom_bytes"
M_HOST_MODELS_THAT_FIT: Final = "triton_sre_host_models_that_fit"
DEVICE_HOST: Final = "host"  # the device label of CPU and CPU_PINNED memory

ALERT_GPU_MEMORY_HEADROOM_LOW: Final = "TritonGPUMemoryHeadroomLow"
ALERT_MODEL_LOAD_SLOW: Final = "TritonModelLoadSlow"
ALERT_RUNBOOKS[ALERT_GPU_MEMORY_HEADROOM_LOW] = "triton-gpu-memory-headroom-low"
ALERT_RUNBOOKS[ALERT_MODEL_LOAD_SLOW] = "triton-model-load-slow"
# ---------------------------------------------------------------------------
# Tail latency (issue #10): quantile recording rules, latency SLOs judged on a quantile, and the
# alert asking for quantiles. Triton 2.51 with `--metrics-config summary_latencies=true` exports
# summaries (NV_REQUEST_SUMMARY_US above, in µs, sliding window, per instance); 24.11+ with
# `histogram_latencies=true` exports NV_FIRST_RESPONSE_HISTOGRAM_MS (decoupled models until 26.01,
# every model from 26.01), which aggregates across instances.
# ---------------------------------------------------------------------------
NV_QUEUE_SUMMARY_US: Final = "nv_inference_queue_summary_us"
# The quantiles Triton's summaries carry (label `quantile`, written as here).
TRITON_SUMMARY_QUANTILES: Final = ("0.5", "0.9", "0.95", "0.99", "0.999")
# The quantiles recorded, drawn on dashboards and reported.
LATENCY_QUANTILES: Final = ("0.5", "0.95", "0.99")
DEFAULT_SLO_QUANTILE: Final = "0.99"
# Latency measures -> (Triton summary family in µs, Triton histogram family in ms or None).
LATENCY_REQUEST: Final = "request"
LATENCY_QUEUE: Final = "queue"
LATENCY_FAMILIES: Final = {
    LATENCY_REQUEST: (NV_REQUEST_SUMMARY_US, NV_FIRST_RESPONSE_HISTOGRAM_MS),
    LATENCY_QUEUE: (NV_QUEUE_SUMMARY_US, None),
}
# Where a latency figure comes from (label `latency_source` on quantile series and SLO time slices);
# also the values of slos.yaml `scrape.latency_metrics` (what the Triton servers are started with).
L_LATENCY_SOURCE: Final = "latency_source"
LATENCY_SOURCE_SUMMARY: Final = "summary"
LATENCY_SOURCE_HISTOGRAM: Final = "histogram"
LATENCY_SOURCE_AVERAGE: Final = "average"  # neither: Δduration / Δrequests
LATENCY_METRICS: Final = (LATENCY_SOURCE_SUMMARY, LATENCY_SOURCE_HISTOGRAM)
_LATENCY_REC_METRICS: Final = {
    LATENCY_REQUEST: "triton_request_latency_seconds",
    LATENCY_QUEUE: "triton_queue_time_seconds",
}


def rec_latency_quantile(level: str, measure: str) -> str:
    """Seconds at each recorded quantile (label `quantile`) of a latency measure, at `level`.

    Instance level: Triton's own summary (or the histogram over 5m). Model level: the histogram
    aggregated across instances, else the worst instance's summary quantile.
    """
    return f"{level}:{_LATENCY_REC_METRICS[measure]}:quantile"


def quantile_name(quantile: str) -> str:
    """`0.99` -> `p99`, `0.5` -> `p50`, `0.999` -> `p99.9` (panel legends, report columns)."""
    return "p" + format(float(quantile) * 100, "g")


ALERT_LATENCY_QUANTILES_MISSING: Final = "TritonLatencyQuantilesMissing"
ALERT_RUNBOOKS[ALERT_LATENCY_QUANTILES_MISSING] = "triton-latency-quantiles-missing"
# Annotations of latency burn alerts: what the bot compares the current quantile with.
ANNOTATION_SLO_QUANTILE: Final = "slo_quantile"
ANNOTATION_THRESHOLD_SECONDS: Final = "threshold_seconds"

# --- Grafana dashboard uids (issue 15: the bot links to them without importing grafanalib) ---
UID_OVERVIEW_DASHBOARD: Final = "triton-sre-overview"
UID_MODEL_DASHBOARD: Final = "triton-sre-model"
UID_SLO_DASHBOARD: Final = "triton-sre-slo"

# -- fleet-sized SLO rules (issue 13) ----------------------------------------------------------------
# Each SLO reads Triton's raw counters once, at REC_RATE_WINDOW, into per-model "part" rates; every
# longer window (burn windows, the period) averages those recorded series (avg_over_time), so no
# rule ever computes a raw rate over hours or days of every series (SRE workbook, chapter 5).
SLO_PART_SUCCESS: Final = "success"  # valid requests that succeeded
SLO_PART_FAILURE: Final = "failure"  # valid requests that failed (any reason)
SLO_PART_BAD: Final = "bad"  # events counted against the SLO (failures with a bad reason, slow requests)
SLO_PART_TOTAL: Final = "total"  # events the histogram SLI judges (its _count)
SLO_PART_GOOD: Final = "good"  # of those, within the threshold (the threshold's bucket)


def rec_slo_part(part: str) -> str:
    """Per-second rate over REC_RATE_WINDOW of one part of an SLO's SLI (labels slo, model)."""
    return f"slo_model:triton_slo_{part}:rate{REC_RATE_WINDOW}"

# -- explicit alert contracts (issue 15, section 4): what the bot reads from an alert ----------------
# The burn rate of an SLO burn alert as a plain number (the long window's, when the rule fired), so
# the bot never parses it out of the description. Rules generated before this annotation existed
# carry the figure only in their description ("... is 15.2x (threshold ..."); the bot still reads
# that text when the annotation is absent (bot/enrich.py, `legacy_burn_from_description`).
ANNOTATION_BURN_RATE: Final = "burn_rate"
