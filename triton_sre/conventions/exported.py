"""Names triton-sre exports: the exporter's and the bot's metrics, their labels and label values,
recording-rule names, and the Grafana dashboard uids.

These are our names: dashboards, alerts and users' queries depend on them.
"""

from __future__ import annotations

from typing import Final

from triton_sre.conventions.triton import (
    NV_COMPUTE_INFER_DURATION_US,
    NV_COMPUTE_INPUT_DURATION_US,
    NV_COMPUTE_OUTPUT_DURATION_US,
    NV_FIRST_RESPONSE_HISTOGRAM_MS,
    NV_QUEUE_DURATION_US,
    NV_QUEUE_SUMMARY_US,
    NV_REQUEST_SUMMARY_US,
)

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
M_MODEL_MAX_QUEUE_DELAY: Final = "triton_sre_model_max_queue_delay_seconds"  # dynamic_batching, config
M_MODEL_ENSEMBLE: Final = "triton_sre_model_ensemble"  # 1 per model whose config's platform is ensemble
# an ensemble's request time by step (label `step`, its step model) and stage: the step's own seconds per
# request in each stage, times its occurrences in the ensemble's ensemble_scheduling (exporter/ensembles.py)
M_ENSEMBLE_STEP_SECONDS: Final = "triton_sre_ensemble_step_seconds"
# an ensemble's steps from its config's ensemble_scheduling: the times it names each step model at each
# model_version (label `step_version`; -1 = the latest), what the report weighs the steps' counters by
M_ENSEMBLE_STEP_CALLS: Final = "triton_sre_ensemble_step_calls"
M_WINDOW_SECONDS: Final = "triton_sre_window_seconds"
M_POLL_DURATION: Final = "triton_sre_poll_duration_seconds"
M_POLL_ERRORS: Final = "triton_sre_poll_errors_total"
M_LAST_SUCCESS: Final = "triton_sre_last_success_timestamp_seconds"
M_BUILD_INFO: Final = "triton_sre_build_info"
# 1 per model version whose batching ratio and stage split came from /v2/models/stats (label `source`)
# because the window holds no /metrics counters for it; absent for the usual source, /metrics.
M_DERIVATION_SOURCE: Final = "triton_sre_derivation_source"
# Both services (exporter and bot): accepts that failed for want of a file descriptor (EMFILE/ENFILE);
# each closed the oldest waiting connection to make room (httpserve.py)
M_HTTP_DESCRIPTOR_SHORTAGES: Final = "triton_sre_http_descriptor_shortages_total"

# Labels on triton-sre's metrics (besides Triton's model and version: conventions.triton).
L_STAGE: Final = "stage"
L_STEP: Final = "step"  # an ensemble's step model (triton_sre_ensemble_step_seconds)
L_STEP_VERSION: Final = "step_version"  # the step's model_version in ensemble_scheduling (-1: latest)
L_STATE: Final = "state"
L_RUNBOOK: Final = "runbook"
L_REASON: Final = "reason"
L_CURRENCY: Final = "currency"
L_BATCH_SIZE: Final = "batch_size"
L_TARGET: Final = "target"
L_KIND: Final = "kind"
L_DEVICE_KIND: Final = "device_kind"
L_SOURCE: Final = "source"

# Values of `source` on triton_sre_derivation_source.
SOURCE_METRICS: Final = "metrics"  # Triton's Prometheus counters (the usual source)
SOURCE_STATS: Final = "stats"  # /v2/models/stats: the fallback while /metrics is not read

# Poll targets (label `target` of triton_sre_poll_errors_total).
TARGET_METRICS: Final = "metrics"
TARGET_INDEX: Final = "repository_index"
TARGET_STATS: Final = "stats"
TARGET_CONFIG: Final = "config"
TARGET_EXPORTER: Final = "exporter"  # the exporter's own poll code (a bug, not Triton)
POLL_TARGETS: Final = (TARGET_METRICS, TARGET_INDEX, TARGET_STATS, TARGET_CONFIG)
# GET /v2: the release, read by live triage and by the exporter at start and when Triton comes back
# (not every poll; exporter/release.py)
TARGET_SERVER: Final = "server_metadata"

# Fault kinds (label `kind` of triton_sre_poll_errors_total).
FAULT_CONNECTION: Final = "connection"
FAULT_TIMEOUT: Final = "timeout"
FAULT_HTTP_STATUS: Final = "http_status"
FAULT_TOO_LARGE: Final = "too_large"
FAULT_PARSE: Final = "parse"
# Triton's metrics answered without a single sample (empty, or comments only) while it lists READY
# models, whose request counters Triton always writes: a proxy or another service on the port.
FAULT_EMPTY: Final = "empty"
FAULT_INTERNAL: Final = "internal"
# Triton's metrics body went past one of the exporter's memory budgets (`exporter.metrics_budget`):
# refused whole, as a failed read; which budget and by how much is triton_sre_metrics_over_budget.
FAULT_OVER_BUDGET: Final = "over_budget"
FAULT_KINDS: Final = (
    FAULT_CONNECTION,
    FAULT_TIMEOUT,
    FAULT_HTTP_STATUS,
    FAULT_TOO_LARGE,
    FAULT_PARSE,
    FAULT_EMPTY,
    FAULT_OVER_BUDGET,
)

# The exporter's memory budgets for one Triton /metrics body (label `budget` of
# triton_sre_metrics_over_budget; keys of `exporter.metrics_budget` in the config file), with their
# defaults. Measured on a synthetic 1,000-model x 3-version fleet (bench/RESULTS.md, memguard): at
# most 4 label pairs per sample (3 without model namespacing), label sets of at most 160 characters
# (a 40-character gpu_uuid, namespace paths), 39,003 samples of the families the exporter reads
# (78,009 with a GPU), 3,001 model versions; a 10,000 x 3 fleet, the largest under the default 32 MiB
# response cap, 390,003 samples and 30,001 model versions.
BUDGET_LABEL_PAIRS: Final = "label_pairs"  # label pairs of one sample
BUDGET_LABEL_SET_CHARS: Final = "label_set_chars"  # characters of one sample's label set as written
BUDGET_SAMPLES: Final = "samples"  # samples of the families the exporter reads, in one body
BUDGET_MODEL_VERSIONS: Final = "model_versions"  # distinct (model, version, namespace) in one body
DEFAULT_METRICS_BUDGET: Final = {
    BUDGET_LABEL_PAIRS: 32,
    BUDGET_LABEL_SET_CHARS: 4096,
    BUDGET_SAMPLES: 500_000,
    BUDGET_MODEL_VERSIONS: 50_000,
}
M_METRICS_OVER_BUDGET: Final = "triton_sre_metrics_over_budget"
L_BUDGET: Final = "budget"
L_LIMIT: Final = "limit"

# The longest raw UNAVAILABLE reason exposed in a label value (the full text is on /debug/models).
MAX_REASON_LABEL_CHARS: Final = 120

# Prometheus' labels and scrape job names the generated rules and dashboards select on.
LABEL_JOB: Final = "job"
LABEL_INSTANCE: Final = "instance"
LABEL_LE: Final = "le"
DEFAULT_TRITON_JOB: Final = "triton"
DEFAULT_EXPORTER_JOB: Final = "triton-sre"

# ---------------------------------------------------------------------------
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
# the models of an SLO the exporter's index lists with no version READY (labels slo, model, version, state:
# value 1), from triton_sre_model_state: the SLO dashboard's "Models not served"
REC_SLO_NOT_READY: Final = "slo_model:triton_sre_model_state:not_ready"
# an all/regex SLO's models listed by name alone (state UNKNOWN) while others are served; the value is
# the SLO's rank in the spec (1 first): TritonSLOModelNotServed tickets a model for its lowest rank only
REC_SLO_NAME_ONLY_RANK: Final = "slo_model:triton_sre_model_state:name_only_rank"
# with a cluster_label, on the global evaluator: 1 per cluster whose SLO parts arrived in the last
# CLUSTER_SILENT_AFTER (one series per cluster: TritonClusterSilent reads it over a whole SLO period)
REC_CLUSTER_REPORTING: Final = "cluster:triton_slo_recordings:present"

# ---------------------------------------------------------------------------
# The bot's own metrics (GET /metrics on the bot).
# ---------------------------------------------------------------------------
M_BOT_NOTIFICATIONS: Final = "triton_sre_bot_notifications_received_total"
M_BOT_SLACK_CALLS: Final = "triton_sre_bot_slack_calls_total"  # labels method, outcome (ok or Slack's error)
M_BOT_ACTIONS: Final = "triton_sre_bot_messages_total"  # label action: a BOT_ACTION_* below
M_BOT_OUTBOX: Final = "triton_sre_bot_outbox_notifications"  # label state: a BOT_OUTBOX_* below
M_BOT_OUTBOX_UNSAVED: Final = "triton_sre_bot_outbox_unsaved_records"  # delivery state the disk refused
M_BOT_OUTBOX_USABLE: Final = "triton_sre_bot_outbox_usable"  # 1, or 0 when the file vanished or writes fail
M_BOT_SLACK_TOKEN_USABLE: Final = "triton_sre_bot_slack_token_usable"  # 0 once Slack refused the token
M_BOT_REFUSED: Final = "triton_sre_bot_requests_refused_total"  # label code: the 4xx/5xx the bot answered
# Reads of Alertmanager's silences (/triton status, thread replies) (label outcome: a BOT_OUTCOME_* below).
M_BOT_ALERTMANAGER_READS: Final = "triton_sre_bot_alertmanager_reads_total"
# The stored silence state (announced silences, the message as rendered) that could not be read or stored.
M_BOT_SILENCE_STATE_ERRORS: Final = "triton_sre_bot_silence_state_errors_total"
# The delivery loop's reads of posted SLO pages' 5m burn (recovery line) (label outcome: ok or error).
M_BOT_PROMETHEUS_READS: Final = "triton_sre_bot_prometheus_reads_total"
BOT_OUTCOME_ERROR: Final = "error"  # Prometheus unreachable, slow or refusing the query
BOT_OUTCOME_OK: Final = "ok"
BOT_OUTCOME_NETWORK: Final = "network"  # refused, unreachable, or no whole answer in time
BOT_OUTCOME_HTTP_ERROR: Final = "http_error"  # an HTTP status other than 200
BOT_OUTCOME_INVALID_RESPONSE: Final = "invalid_response"  # not the JSON the API answers (Slack, Alertmanager)
L_CODE: Final = "code"
L_METHOD: Final = "method"
L_OUTCOME: Final = "outcome"
L_ACTION: Final = "action"
# What the bot did with a notification (label `action` of triton_sre_bot_messages_total).
# A notification's states in the outbox (M_BOT_OUTBOX's state label, the outbox table's state column).
BOT_OUTBOX_PENDING: Final = "pending"  # not delivered yet (new, or waiting for a retry)
BOT_OUTBOX_DONE: Final = "done"
BOT_OUTBOX_SUPERSEDED: Final = "superseded"  # a newer notification of its group replaced it before delivery
BOT_OUTBOX_FAILED: Final = "failed"  # given up after the retries
BOT_ACTION_POSTED: Final = "posted"
BOT_ACTION_UPDATED: Final = "updated"
BOT_ACTION_REPEAT: Final = "repeat"
BOT_ACTION_STALE: Final = "stale"  # older than what the message shows (delivered out of order): skipped
BOT_ACTION_FAILED: Final = "failed"

# ---------------------------------------------------------------------------
# LLM serving (issue 11): what triton-sre exports for LLM models (per model and version, when the
# backend's families are present).
# ---------------------------------------------------------------------------
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
# `direction`). Rules on Triton's raw LLM families, not the exporter's.
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
UID_LLM_DASHBOARD: Final = "triton-sre-llm"

# ---------------------------------------------------------------------------
# Capacity (issue 16): per-model memory, load time, GPU headroom, models that fit, energy.
# ---------------------------------------------------------------------------
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

# ---------------------------------------------------------------------------
# Tail latency (issue #10): quantile recording rules.
# ---------------------------------------------------------------------------
# The quantiles recorded, drawn on dashboards and reported.
LATENCY_QUANTILES: Final = ("0.5", "0.95", "0.99")
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


# --- Grafana dashboard uids (issue 15: the bot links to them without importing grafanalib) ---
UID_OVERVIEW_DASHBOARD: Final = "triton-sre-overview"
UID_MODEL_DASHBOARD: Final = "triton-sre-model"
UID_SLO_DASHBOARD: Final = "triton-sre-slo"
UID_CAPACITY_DASHBOARD: Final = "triton-sre-capacity"

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


# -- rule groups and their cross-group reads (issue 13) ---------------------------------------------
# Prometheus evaluates each group on its own timer: a rule reading a series recorded by ANOTHER
# group sees that group's latest evaluation (this interval's or the previous one's). The generators
# compute which group reads which (generate/rulefile.py `group_reads`), the promtool tests fix the order
# (`group_eval_order`, dependencies first) and tests/test_rules_promtool.py also runs them reversed.
GROUP_RECORDING_REQUESTS: Final = "triton-sre.recording.requests"  # raw per-request totals' rates
GROUP_RECORDING_STAGES: Final = "triton-sre.recording.stages"  # raw stage-duration rates, stage split
GROUP_RECORDING_MODELS: Final = "triton-sre.recording.models"  # per-model-version sums and ratios
GROUP_LATENCY_QUANTILES: Final = "triton-sre.latency-quantiles"
GROUP_OPERATIONAL: Final = "triton-sre.operational"
GROUP_CAPACITY: Final = "triton-sre.capacity"
GROUP_LLM: Final = "triton-sre.llm"
GROUP_SLO_PREFIX: Final = "triton-sre.slo."
# the all/regex SLOs' TritonSLOModelNotServed tickets: each reads every SLO group's name-only record
GROUP_SLO_NOT_SERVED: Final = "triton-sre.slo-not-served"
GROUP_ROLLOUT: Final = "triton-sre.rollout"


# -- the continuous rollout guard (issue 22) ---------------------------------------------------------
def rec_rollout_requests(window: str) -> str:
    """Requests/s of each model version over the rollout window."""
    return f"{REC_LEVEL_MODEL}:triton_rollout_requests:rate{window}"


def rec_rollout_figure(window: str) -> str:
    """Each rollout figure (label `figure`) of each model version over the rollout window."""
    return f"{REC_LEVEL_MODEL}:triton_rollout_figure:{window}"


def rec_rollout_baseline(window: str) -> str:
    """The baseline's figures per model (labels figure, baseline = its version): the busiest version."""
    return f"model:triton_rollout_baseline_figure:{window}"


def slo_group(slo_name: str) -> str:
    """The rule group of one SLO (its parts, windows, budget and burn alerts)."""
    return f"{GROUP_SLO_PREFIX}{slo_name}"


# -- `triton-sre doctor` (issue 27): the inputs triton-sre needs from Triton and Prometheus ----------
M_INPUT_MISSING: Final = "triton_sre_input_missing"  # 1 when a needed input is missing (label check)
L_CHECK: Final = "check"
# The release a missing input first appears in when this server predates it (YY.MM: only an upgrade
# fixes it), "" when this release has it (a flag, a config or a scrape fixes it) or the version is unknown
L_NEEDS_RELEASE: Final = "needs_release"
# 1, label version (LABEL_VERSION: Triton's server version, e.g. 2.51.0) from GET /v2; none while unread
M_TRITON_INFO: Final = "triton_sre_triton_info"
# Restarts of Triton the exporter saw between two polls that read its metrics: every counted model's
# counters (or a GPU's energy counter) went down (exporter/restarts.py)
M_TRITON_RESTARTS: Final = "triton_sre_triton_restarts_total"
CHECK_LATENCY_QUANTILES: Final = "latency-quantiles"
CHECK_GPU_METRICS: Final = "gpu-metrics"
CHECK_CPU_METRICS: Final = "cpu-metrics"
CHECK_PENDING_REQUESTS: Final = "pending-requests"
CHECK_LOAD_DURATION: Final = "load-duration"
CHECK_MODEL_MEMORY: Final = "model-memory"
CHECK_LLM_METRICS: Final = "llm-metrics"
CHECK_RESPONSE_CACHE: Final = "response-cache"
TRITON_CHECKS: Final = (
    CHECK_LATENCY_QUANTILES,
    CHECK_GPU_METRICS,
    CHECK_CPU_METRICS,
    CHECK_PENDING_REQUESTS,
    CHECK_LOAD_DURATION,
    CHECK_MODEL_MEMORY,
    CHECK_LLM_METRICS,
    CHECK_RESPONSE_CACHE,
)
CHECK_PROMETHEUS_JOBS: Final = "prometheus-jobs"
CHECK_SCRAPE_INTERVAL: Final = "scrape-interval"
CHECK_RULES_LOADED: Final = "rules-loaded"
CHECK_ALERTMANAGER: Final = "alertmanager"
CHECK_RETENTION: Final = "retention"
PROMETHEUS_CHECKS: Final = (
    CHECK_PROMETHEUS_JOBS,
    CHECK_SCRAPE_INTERVAL,
    CHECK_RULES_LOADED,
    CHECK_ALERTMANAGER,
    CHECK_RETENTION,
)
