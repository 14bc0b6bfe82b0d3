"""Alerts, SLOs, runbooks and severities: what the generated rules fire, the runbook page each
finding or alert links to, and the Alertmanager names the bot reads.

Every runbook id is one Markdown page under runbooks/<id>.md.
"""

from __future__ import annotations

from typing import Final

from triton_sre.conventions import autoscaling as _a
from triton_sre.conventions import exported as _x
from triton_sre.conventions import triton as _t
from triton_sre.conventions.autoscaling import ALERT_AUTOSCALER_LAGGING, RUNBOOK_AUTOSCALER_LAGGING
from triton_sre.conventions.triton import (
    VLLM_TPOT_BUCKETS,
    VLLM_TPOT_SECONDS,
    VLLM_TTFT_BUCKETS,
    VLLM_TTFT_SECONDS,
)

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
# --- diagnosis: the stack around Triton (the image's platform, the orchestrator) ---
RUNBOOK_PLATFORM_UNSUPPORTED: Final = "platform-unsupported"
RUNBOOK_GPU_CONTAINER_RUNTIME: Final = "gpu-container-runtime"
RUNBOOK_POD_UNSCHEDULABLE: Final = "pod-unschedulable"
RUNBOOK_IMAGE_PULL_FAILED: Final = "image-pull-failed"
RUNBOOK_POD_START_FAILED: Final = "pod-start-failed"
RUNBOOK_POD_PROBE_FAILED: Final = "pod-probe-failed"
RUNBOOK_POD_CRASH_LOOPING: Final = "pod-crash-looping"
# --- diagnosis: the orchestrator took the pod away, refused it, or gave up on it (diag43) ---
RUNBOOK_POD_DISRUPTED: Final = "pod-disrupted"
RUNBOOK_POD_ADMISSION_REFUSED: Final = "pod-admission-refused"
RUNBOOK_POD_DEADLINE_EXCEEDED: Final = "pod-deadline-exceeded"
# --- diagnosis: the server process (or a backend inside it) died on a fatal signal ---
RUNBOOK_SERVER_CRASHED: Final = "server-crashed"
# --- diagnosis: the server cannot bind its HTTP/GRPC/metrics port (another process holds it) ---
RUNBOOK_SERVER_PORT_IN_USE: Final = "server-port-in-use"
# --- diagnosis: tritonserver refuses a start-up setting (flag, value, cache, tracing, front-end env) ---
RUNBOOK_SERVER_OPTION_INVALID: Final = "server-option-invalid"
# --- diagnosis: a load/unload request refused (the server not in explicit mode, a restricted API) ---
RUNBOOK_MODEL_CONTROL_REFUSED: Final = "model-control-refused"
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
    RUNBOOK_PLATFORM_UNSUPPORTED,
    RUNBOOK_GPU_CONTAINER_RUNTIME,
    RUNBOOK_POD_UNSCHEDULABLE,
    RUNBOOK_IMAGE_PULL_FAILED,
    RUNBOOK_POD_START_FAILED,
    RUNBOOK_POD_PROBE_FAILED,
    RUNBOOK_SERVER_CRASHED,
    RUNBOOK_POD_CRASH_LOOPING,
    RUNBOOK_POD_DISRUPTED,
    RUNBOOK_POD_ADMISSION_REFUSED,
    RUNBOOK_POD_DEADLINE_EXCEEDED,
    RUNBOOK_SERVER_PORT_IN_USE,
    RUNBOOK_SERVER_OPTION_INVALID,
    RUNBOOK_MODEL_CONTROL_REFUSED,
    RUNBOOK_UNKNOWN_LOAD_FAILURE,
)

# ---------------------------------------------------------------------------
# Alerts the generated rules ship (ALERT_RUNBOOKS, at the end, gives the runbook page of each).
# ---------------------------------------------------------------------------
ALERT_SLO_ERROR_BUDGET_BURN: Final = "TritonSLOErrorBudgetBurn"
ALERT_SLO_LATENCY_BUDGET_BURN: Final = "TritonSLOLatencyBudgetBurn"
ALERT_MODEL_UNAVAILABLE: Final = "TritonModelUnavailable"
ALERT_SERVER_DOWN: Final = "TritonServerDown"
ALERT_SERVER_RESTARTED: Final = "TritonServerRestarted"
# kube-state-metrics' count of restarts: an idle or quick restart too
ALERT_CONTAINER_RESTARTED: Final = "TritonContainerRestarted"
ALERT_EXPORTER_DOWN: Final = "TritonExporterDown"
ALERT_QUEUE_TIME_HIGH: Final = "TritonQueueTimeHigh"
ALERT_BATCHING_INEFFECTIVE: Final = "TritonBatchingIneffective"
ALERT_PENDING_REQUESTS_GROWING: Final = "TritonPendingRequestsGrowing"
ALERT_GPU_MEMORY_NEAR_LIMIT: Final = "TritonGPUMemoryNearLimit"
ALERT_EXPORTER_POLL_FAILING: Final = "TritonExporterPollFailing"
ALERT_MODEL_STUCK_LOADING: Final = "TritonModelStuckLoading"
# A model an SLO names by name (intent: the team expects it served) has no READY version on any
# instance while the exporter reads Triton: a refused config.pbtxt, a model nobody loaded (absent26).
ALERT_SLO_MODEL_NOT_SERVED: Final = "TritonSLOModelNotServed"
# Its `for:` covers a normal (re)start and load: the stack's startup probe budget is 2m, a large model
# loads in minutes; TritonModelStuckLoading tickets a load at 15m.
SLO_MODEL_NOT_SERVED_FOR: Final = "10m"
# With a cluster_label, on the global evaluator: a cluster whose SLO recordings (remote-written by its
# own Prometheus, with its external label) stopped arriving (journey28: a dead cluster Prometheus left
# its last samples for the 5m lookback, then its pages resolved as if healthy). Seen within the spec's
# longest SLO period (generate/cluster_silent.py `seen_window`: an outage pages until its data left every
# budget), none for AFTER (longer than a remote-write flush and a rule interval), held `for:` FOR.
ALERT_CLUSTER_SILENT: Final = "TritonClusterSilent"
CLUSTER_SILENT_AFTER: Final = "2m"
CLUSTER_SILENT_FOR: Final = "1m"
CLUSTER_GROUP: Final = "triton-sre.clusters"

# Alert severities (routing) and finding/runbook severities (impact); critical <-> page.
SEVERITY_PAGE: Final = "page"
SEVERITY_TICKET: Final = "ticket"
IMPACT_CRITICAL: Final = "critical"
IMPACT_WARNING: Final = "warning"
IMPACT_INFO: Final = "info"
# Where an alert's runbook_url points unless `generate --runbook-base-url` says otherwise.
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

# Alertmanager's status of an alert and of a group (webhook payload version 4).
AM_STATUS_FIRING: Final = "firing"
AM_STATUS_RESOLVED: Final = "resolved"
AM_WEBHOOK_VERSION: Final = "4"
LABEL_ALERTNAME: Final = "alertname"
LABEL_ALERTSTATE: Final = "alertstate"  # of the ALERTS series: pending or firing (AM_STATUS_FIRING)
# Annotations every generated alert carries (the bot shows them).
ANNOTATION_SUMMARY: Final = "summary"
ANNOTATION_DESCRIPTION: Final = "description"
ANNOTATION_RUNBOOK_URL: Final = "runbook_url"

# ---------------------------------------------------------------------------
# LLM alerts (issue 11) and LLM SLO types. The LLM SLOs are request-based from the vLLM backend's
# histograms (for time_per_output_token the events are output tokens); an SLO threshold must be
# one of the backend's bucket bounds.
# ---------------------------------------------------------------------------
LLM_KV_SATURATED_RATIO: Final = 0.95  # TritonLLMKVCacheSaturated: cache use at or above this ...
LLM_SATURATED_FOR: Final = "10m"  # ... with requests waiting, for this long
ALERT_LLM_KV_CACHE_SATURATED: Final = "TritonLLMKVCacheSaturated"
ALERT_LLM_REQUESTS_WAITING: Final = "TritonLLMRequestsWaiting"
LLM_ALERT_RUNBOOKS: Final = {
    ALERT_LLM_KV_CACHE_SATURATED: "triton-llm-kv-cache-saturated",
    ALERT_LLM_REQUESTS_WAITING: "triton-llm-requests-waiting",
}
# Label on the LLM alerts: what limits the model, from the KV cache use when requests wait.
L_BOUND: Final = "bound"
BOUND_MEMORY: Final = "memory"  # cache full: more KV memory, shorter max tokens, another replica
BOUND_COMPUTE: Final = "compute"  # cache not full: compute- or scheduler-bound
# Annotation on both LLM alerts: the spec's KV cache ratio the rule judged against, as a plain
# number (issue 25 item 4): the bot's memory/compute verdict reads it, never a constant.
ANNOTATION_KV_CACHE_SATURATED_RATIO: Final = "kv_cache_threshold_ratio"
SLO_TTFT: Final = "ttft"
SLO_TPOT: Final = "time_per_output_token"
LLM_SLO_TYPES: Final = (SLO_TTFT, SLO_TPOT)
LLM_SLO_HISTOGRAMS: Final = {
    SLO_TTFT: (VLLM_TTFT_SECONDS, VLLM_TTFT_BUCKETS),
    SLO_TPOT: (VLLM_TPOT_SECONDS, VLLM_TPOT_BUCKETS),
}

# Capacity alerts (issue 16).
ALERT_GPU_MEMORY_HEADROOM_LOW: Final = "TritonGPUMemoryHeadroomLow"
ALERT_MODEL_LOAD_SLOW: Final = "TritonModelLoadSlow"

# Tail latency (issue #10): the quantile a latency SLO is judged on by default, the alert asking
# for quantiles, and the annotations of latency burn alerts (what the bot compares the current
# quantile with).
DEFAULT_SLO_QUANTILE: Final = "0.99"
ALERT_LATENCY_QUANTILES_MISSING: Final = "TritonLatencyQuantilesMissing"
ANNOTATION_SLO_QUANTILE: Final = "slo_quantile"
ANNOTATION_THRESHOLD_SECONDS: Final = "threshold_seconds"

# Safe rollouts (issue 22): the figures a canary is judged on, their defaults, the verdicts, the alert.
ALERT_ROLLOUT_REGRESSION: Final = "TritonRolloutRegression"
ROLLOUT_FIG_ERROR_RATIO: Final = "error-ratio"
ROLLOUT_FIG_LATENCY_P99: Final = "p99-latency"
ROLLOUT_FIG_LATENCY_P50: Final = "p50-latency"
ROLLOUT_FIG_QUEUE_SHARE: Final = "queue-share"
ROLLOUT_FIG_COMPUTE_PER_INFERENCE: Final = "compute-per-inference"
ROLLOUT_FIG_BATCHING_RATIO: Final = "batching-ratio"
ROLLOUT_FIG_TTFT_P99: Final = "p99-ttft"
ROLLOUT_FIG_TPOT_P99: Final = "p99-time-per-output-token"
# Not a figure: the Argo/Flagger metric saying whether the batching ratio was judged (1) or not (0).
ROLLOUT_BATCHING_JUDGED: Final = "batching-ratio-judged"
ROLLOUT_PASS: Final = "pass"
ROLLOUT_FAIL: Final = "fail"
ROLLOUT_INCONCLUSIVE: Final = "inconclusive"
# Margins: relative (0.2 = the candidate may be 20 % worse) except the error ratio and the queue
# share (absolute; the error ratio's default is the availability SLO's error budget).
ROLLOUT_DEFAULT_MARGINS: Final = {
    ROLLOUT_FIG_LATENCY_P99: 0.2,
    ROLLOUT_FIG_LATENCY_P50: 0.2,
    ROLLOUT_FIG_QUEUE_SHARE: 0.1,
    ROLLOUT_FIG_COMPUTE_PER_INFERENCE: 0.2,
    ROLLOUT_FIG_BATCHING_RATIO: 0.2,
    ROLLOUT_FIG_TTFT_P99: 0.2,
    ROLLOUT_FIG_TPOT_P99: 0.2,
}
ROLLOUT_DEFAULT_ERROR_MARGIN: Final = 0.001  # without an availability SLO
ROLLOUT_DEFAULT_MIN_REQUEST_RATE: Final = 0.1  # requests/s per side, without an availability SLO
# the largest min_request_rate (requests or tokens per second) of any section: above it the generated
# tests' counters outgrow float64's exact integers and their expected burn rates no longer hold
MAX_REQUEST_RATE: Final = 1e9
ROLLOUT_DEFAULT_MIN_SAMPLES: Final = 5  # intervals with traffic per side
ROLLOUT_DEFAULT_ALPHA: Final = 0.05
ROLLOUT_DEFAULT_WINDOW: Final = "15m"
# Alert labels naming the two sides of a comparison.
LABEL_BASELINE: Final = "baseline"
LABEL_CANDIDATE: Final = "candidate"
LABEL_FIGURE: Final = "figure"

# `triton-sre doctor` (issue 27): an input triton-sre needs is missing (the exporter's
# triton_sre_input_missing{check}). Its rule: generate/input_missing.py, in the operational group.
ALERT_INPUT_MISSING: Final = "TritonSREInputMissing"
RUNBOOK_INPUT_MISSING: Final = "triton-sre-input-missing"

# One map of alert -> runbook for the generators and the bot.
# TritonModelUnavailable links to the load-failure runbook in its `runbook` label instead.
ALERT_RUNBOOKS: Final = {
    ALERT_SLO_ERROR_BUDGET_BURN: "slo-error-budget-burn",
    ALERT_SLO_LATENCY_BUDGET_BURN: "slo-latency-budget-burn",
    ALERT_SERVER_DOWN: "triton-server-down",
    ALERT_SERVER_RESTARTED: "triton-server-restarted",
    ALERT_CONTAINER_RESTARTED: "triton-server-restarted",
    ALERT_EXPORTER_DOWN: "triton-exporter-down",
    ALERT_QUEUE_TIME_HIGH: "triton-queue-time-high",
    ALERT_BATCHING_INEFFECTIVE: "triton-batching-ineffective",
    ALERT_PENDING_REQUESTS_GROWING: "triton-pending-requests-growing",
    ALERT_GPU_MEMORY_NEAR_LIMIT: "triton-gpu-memory-near-limit",
    ALERT_EXPORTER_POLL_FAILING: "triton-exporter-poll-failing",
    ALERT_MODEL_STUCK_LOADING: "triton-model-stuck-loading",
    ALERT_SLO_MODEL_NOT_SERVED: "triton-slo-model-not-served",
    ALERT_CLUSTER_SILENT: "triton-cluster-silent",
    **LLM_ALERT_RUNBOOKS,
    ALERT_GPU_MEMORY_HEADROOM_LOW: "triton-gpu-memory-headroom-low",
    ALERT_MODEL_LOAD_SLOW: "triton-model-load-slow",
    ALERT_LATENCY_QUANTILES_MISSING: "triton-latency-quantiles-missing",
    ALERT_AUTOSCALER_LAGGING: RUNBOOK_AUTOSCALER_LAGGING,
    ALERT_ROLLOUT_REGRESSION: "triton-rollout-regression",
    ALERT_INPUT_MISSING: RUNBOOK_INPUT_MISSING,
}
# Every runbook id there is a page for (runbooks/<id>.md): the bot links only these; any other value
# of a `runbook` label is shown as text, never made the path of a link on the runbook host.
RUNBOOK_IDS: Final = (
    frozenset(LOAD_FAILURE_RUNBOOKS) | frozenset(LINT_RUNBOOKS) | frozenset(ALERT_RUNBOOKS.values())
)

# -- explicit alert contracts (issue 15, section 4): what the bot reads from an alert ----------------
# The burn rate of an SLO burn alert as a plain number (the long window's, when the rule fired), so
# the bot never parses it out of the description. Rules generated before this annotation existed
# carry the figure only in their description ("... is 15.2x (threshold ..."); the bot still reads
# that text when the annotation is absent (bot/enrich.py, `legacy_burn_from_description`).
ANNOTATION_BURN_RATE: Final = "burn_rate"

# -- multi-cluster (issue 24) ------------------------------------------------------------------------
# The conventional cluster label (slos.yaml `cluster_label`; each cluster's Prometheus sets it as an
# external label). The spec may name another; these labels it may not be (the rules use them).
LABEL_CLUSTER: Final = "cluster"
RESERVED_LABELS: Final = frozenset(
    {_x.LABEL_JOB, _x.LABEL_INSTANCE, _x.LABEL_LE, _x.L_STAGE, _x.L_STATE, _x.L_RUNBOOK, _x.L_DIRECTION}
    | {_x.L_LATENCY_SOURCE, _t.LABEL_MODEL, _t.LABEL_VERSION, _t.LABEL_GPU_UUID, _t.LABEL_REASON}
    | {_t.LABEL_QUANTILE, LABEL_ALERTNAME, L_SLO, L_SEVERITY, L_WINDOW, L_BOUND, _x.L_CHECK}
    | {_x.L_NEEDS_RELEASE}  # the missing-input alert matches it (version32)
    # the rollout guard's alert labels, the model namespacing and TensorRT-LLM labels the rules keep, and
    # kube-state-metrics' labels the container-restart and autoscaling rules group by (round eighteen)
    | {LABEL_BASELINE, LABEL_CANDIDATE, LABEL_FIGURE, _t.LABEL_NAMESPACE}
    | {_t.TRT_LABEL_REQUEST_TYPE, _t.TRT_LABEL_KV_CACHE_BLOCK_TYPE}
    | {_a.KSM_LABEL_NAMESPACE, _a.KSM_LABEL_POD, _a.KSM_LABEL_CONTAINER, _a.KSM_LABEL_DEPLOYMENT}
    | {_a.L_DEPLOYMENT}
)
ALERTS_SERIES: Final = "ALERTS"  # Prometheus's (and vmalert's) series of pending and firing alerts
