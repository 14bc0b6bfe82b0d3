"""Which Triton release registers which metric family: names, types, labels and HELP texts as the
sources write them, read with git from every release branch (r20.01-r26.06). The reference page
docs/triton-families.md is rendered from this table (`python -m triton_sre.conventions.triton_releases`)
and tests/test_triton_families.py checks it is current; the same test builds one body per release from
it and runs the exporter's derivation and doctor's checks on it.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from triton_sre.conventions.exported import LABEL_LE
from triton_sre.conventions.triton import (
    LABEL_GPU_UUID,
    LABEL_MODEL,
    LABEL_QUANTILE,
    LABEL_REASON,
    LABEL_VERSION,
    NV_CACHE_UTIL,
    NV_COMPUTE_INFER_DURATION_US,
    NV_COMPUTE_INPUT_DURATION_US,
    NV_COMPUTE_OUTPUT_DURATION_US,
    NV_CPU_MEMORY_TOTAL_BYTES,
    NV_CPU_MEMORY_USED_BYTES,
    NV_CPU_UTILIZATION,
    NV_ENERGY_CONSUMPTION,
    NV_EXEC_COUNT,
    NV_FIRST_RESPONSE_HISTOGRAM_MS,
    NV_GPU_MEMORY_TOTAL_BYTES,
    NV_GPU_MEMORY_USED_BYTES,
    NV_GPU_POWER_LIMIT,
    NV_GPU_POWER_USAGE,
    NV_GPU_UTILIZATION,
    NV_INFERENCE_COUNT,
    NV_MODEL_LOAD_DURATION_SECS,
    NV_PENDING_REQUEST_COUNT,
    NV_QUEUE_DURATION_US,
    NV_QUEUE_SUMMARY_US,
    NV_REQUEST_DURATION_US,
    NV_REQUEST_FAILURE,
    NV_REQUEST_SUCCESS,
    NV_REQUEST_SUMMARY_US,
    TRT_GENERAL_METRICS,
    TRT_INFLIGHT_BATCHER_METRICS,
    TRT_INPUT_TOKEN_LEN,
    TRT_KV_CACHE_BLOCK_METRICS,
    TRT_LABEL_KV_CACHE_BLOCK_TYPE,
    TRT_LABEL_REQUEST_TYPE,
    TRT_OUTPUT_TOKEN_LEN,
    TRT_REQUEST_METRICS,
    TRT_RUNTIME_MEMORY_METRICS,
    VLLM_E2E_SECONDS,
    VLLM_GENERATION_TOKENS,
    VLLM_PROMPT_TOKENS,
    VLLM_REQUEST_GENERATION_TOKENS,
    VLLM_REQUEST_PROMPT_TOKENS,
    VLLM_TPOT_SECONDS,
    VLLM_TTFT_SECONDS,
)

# ---------------------------------------------------------------------------
# Every family Triton and the LLM backends register, by release (docs/triton-families.md is checked
# against this table by tests/test_triton_families.py). Read with git from the release branches:
# triton-inference-server/server src/core/metrics.cc (r20.01-r22.03) and core src/metrics.cc
# (r22.04-r26.06), labels from metric_model_reporter.cc; the response cache's global gauges from core
# (r22.02-r23.02) and then the local cache (triton-inference-server/local_cache src/local_cache.cc, the
# same names, r23.03+); vllm_backend src/utils/metrics.py (r24.08-r26.01, its newest branch);
# tensorrtllm_backend inflight_batcher_llm/src/custom_metrics_reporter (r23.12-r25.05), then NVIDIA/
# TensorRT-LLM triton_backend/ (the same file). Releases are YY.MM; `last` "" while the newest branch
# read (26.06) still registers it. Every per-model family also carries `namespace` when model
# namespacing is on (24.05+) and one `_<tag>` label per config `metric_tags` entry.
# ---------------------------------------------------------------------------
FAMILIES_READ_UP_TO: Final = "26.06"
FAILURE_REASON_SINCE: Final = "24.07"  # `reason` on nv_inference_request_failure (metric_model_reporter.cc)
# Bucket bounds (ms) of nv_inference_first_response_histogram_ms unless the model config's
# model_metrics.metric_control sets its own (metric_model_reporter.h, 24.11+).
FIRST_RESPONSE_BUCKETS_MS: Final = (100.0, 500.0, 2000.0, 5000.0)
# nv_llm_input_token_len / nv_llm_output_token_len bucket bounds (tokens), TensorRT-LLM backend 25.02+:
# 10, 50, 100, 500, 1000.
TRT_DISAGGREGATED_METRICS: Final = "nv_trt_llm_disaggregated_serving_metrics"  # counter, 25.02+
TRT_V1_METRICS: Final = "nv_trt_llm_v1_metrics"  # instead of the inflight batcher's for a V1 model

_CORE: Final = "server src/core/metrics.cc (to 22.03), core src/metrics.cc (22.04+)"
_CACHE: Final = "core src/metrics.cc (22.02-23.02), local_cache src/local_cache.cc (23.03+)"
_VLLM: Final = "vllm_backend src/utils/metrics.py"
_TRTLLM: Final = "tensorrtllm_backend (to 25.05), TensorRT-LLM triton_backend/: custom_metrics_reporter.cc"
_MODEL: Final = (LABEL_MODEL, LABEL_VERSION, LABEL_GPU_UUID)  # gpu_uuid on a GPU instance's series only
_FAILURE: Final = (*_MODEL, LABEL_REASON)  # reason from FAILURE_REASON_SINCE
_SUMMARY: Final = (*_MODEL, LABEL_QUANTILE)
_HISTOGRAM: Final = (*_MODEL, LABEL_LE)
_GPU: Final = (LABEL_GPU_UUID,)
_NONE: Final = ()
_BACKEND: Final = (LABEL_MODEL, LABEL_VERSION)


class TritonFamily(NamedTuple):
    name: str
    kind: str  # counter, gauge, histogram or summary (# TYPE)
    labels: tuple[str, ...]
    first: str  # first release that registers it (YY.MM)
    last: str  # last one; "" while FAMILIES_READ_UP_TO still does
    source: str
    help: tuple[tuple[str, str], ...]  # (from release, # HELP text as the source writes it)

    def in_release(self, release: str) -> bool:
        return self.first <= release and (not self.last or release <= self.last)

    def help_in(self, release: str) -> str:
        return [text for since, text in self.help if since <= release][-1]


def _f(
    name: str, kind: str, labels: tuple[str, ...], first: str, last: str, source: str, *help_: tuple[str, str]
) -> TritonFamily:
    return TritonFamily(name, kind, labels, first, last, source, help_)


# fmt: off
TRITON_FAMILIES: Final = (
    _f(NV_REQUEST_SUCCESS, "counter", _MODEL, "20.01", "", _CORE,
       ("20.01", "Number of successful inference requests, all batch sizes")),
    _f(NV_REQUEST_FAILURE, "counter", _FAILURE, "20.01", "", _CORE,
       ("20.01", "Number of failed inference requests, all batch sizes")),
    _f(NV_INFERENCE_COUNT, "counter", _MODEL, "20.01", "", _CORE,
       ("20.01", "Number of inferences performed"),
       ("22.02", "Number of inferences performed (does not include cached requests)")),
    _f(NV_EXEC_COUNT, "counter", _MODEL, "20.01", "", _CORE,
       ("20.01", "Number of model executions performed"),
       ("22.02", "Number of model executions performed (does not include cached requests)")),
    _f(NV_REQUEST_DURATION_US, "counter", _MODEL, "20.01", "", _CORE,
       ("20.01", "Cummulative inference request duration in microseconds"),
       ("22.02", "Cumulative inference request duration in microseconds (includes cached requests)")),
    _f("nv_inference_compute_duration_us", "counter", _MODEL, "20.01", "20.05", _CORE,
       ("20.01", "Cummulative inference compute duration in microseconds")),
    _f(NV_QUEUE_DURATION_US, "counter", _MODEL, "20.01", "", _CORE,
       ("20.01", "Cummulative inference queuing duration in microseconds"),
       ("22.02", "Cumulative inference queuing duration in microseconds (includes cached requests)")),
    _f(NV_GPU_UTILIZATION, "gauge", _GPU, "20.01", "", _CORE,
       ("20.01", "GPU utilization rate [0.0 - 1.0)")),
    _f(NV_GPU_MEMORY_TOTAL_BYTES, "gauge", _GPU, "20.01", "", _CORE,
       ("20.01", "GPU total memory, in bytes")),
    _f(NV_GPU_MEMORY_USED_BYTES, "gauge", _GPU, "20.01", "", _CORE,
       ("20.01", "GPU used memory, in bytes")),
    _f(NV_GPU_POWER_USAGE, "gauge", _GPU, "20.01", "", _CORE,
       ("20.01", "GPU power usage in watts")),
    _f(NV_GPU_POWER_LIMIT, "gauge", _GPU, "20.01", "", _CORE,
       ("20.01", "GPU power management limit in watts")),
    _f(NV_ENERGY_CONSUMPTION, "counter", _GPU, "20.01", "", _CORE,
       ("20.01", "GPU energy consumption in joules since the trtserver started"),
       ("20.05", "GPU energy consumption in joules since the Triton Server started")),
    _f(NV_COMPUTE_INPUT_DURATION_US, "counter", _MODEL, "20.06", "", _CORE,
       ("20.06", "Cummulative compute input duration in microseconds"),
       ("22.02", "Cumulative compute input duration in microseconds (does not include cached requests)")),
    _f(NV_COMPUTE_INFER_DURATION_US, "counter", _MODEL, "20.06", "", _CORE,
       ("20.06", "Cummulative compute inference duration in microseconds"),
       ("22.02", "Cumulative compute inference duration in microseconds (does not include cached requests)")),
    _f(NV_COMPUTE_OUTPUT_DURATION_US, "counter", _MODEL, "20.06", "", _CORE,
       ("20.06", "Cummulative inference compute output duration in microseconds"),
       ("22.02", "Cumulative inference compute output duration in microseconds (does "
        "not include cached requests)")),
    _f("nv_cache_num_entries", "gauge", _NONE, "22.02", "", _CACHE,
       ("22.02", "Number of responses stored in response cache")),
    _f("nv_cache_num_lookups", "gauge", _NONE, "22.02", "", _CACHE,
       ("22.02", "Number of cache lookups in response cache")),
    _f("nv_cache_num_hits", "gauge", _NONE, "22.02", "", _CACHE,
       ("22.02", "Number of cache hits in response cache")),
    _f("nv_cache_num_misses", "gauge", _NONE, "22.02", "", _CACHE,
       ("22.02", "Number of cache misses in response cache")),
    _f("nv_cache_num_evictions", "gauge", _NONE, "22.02", "", _CACHE,
       ("22.02", "Number of cache evictions in response cache")),
    _f("nv_cache_lookup_duration", "gauge", _NONE, "22.02", "", _CACHE,
       ("22.02", "Total cache lookup duration (hit and miss), in microseconds")),
    _f(NV_CACHE_UTIL, "gauge", _NONE, "22.02", "", _CACHE,
       ("22.02", "Cache utilization [0.0 - 1.0]")),
    _f("nv_cache_num_hits_per_model", "counter", _MODEL, "22.02", "", _CORE,
       ("22.02", "Number of cache hits per model")),
    _f("nv_cache_hit_lookup_duration_per_model", "counter", _MODEL, "22.02", "23.02", _CORE,
       ("22.02", "Total cache hit lookup duration per model, in microseconds")),
    _f("nv_cache_insertion_duration", "gauge", _NONE, "22.03", "", _CACHE,
       ("22.03", "Total cache insertion duration, in microseconds")),
    _f("nv_cache_num_misses_per_model", "counter", _MODEL, "22.03", "", _CORE,
       ("22.03", "Number of cache misses per model")),
    _f("nv_cache_miss_lookup_duration_per_model", "counter", _MODEL, "22.03", "23.02", _CORE,
       ("22.03", "Total cache miss lookup duration per model, in microseconds")),
    _f("nv_cache_miss_insertion_duration_per_model", "counter", _MODEL, "22.03", "23.02", _CORE,
       ("22.03", "Total cache miss insertion duration per model, in microseconds")),
    _f(NV_CPU_UTILIZATION, "gauge", _NONE, "22.09", "", _CORE,
       ("22.09", "CPU utilization rate [0.0 - 1.0]")),
    _f(NV_CPU_MEMORY_TOTAL_BYTES, "gauge", _NONE, "22.09", "", _CORE,
       ("22.09", "CPU total memory (RAM), in bytes")),
    _f(NV_CPU_MEMORY_USED_BYTES, "gauge", _NONE, "22.09", "", _CORE,
       ("22.09", "CPU used memory (RAM), in bytes")),
    _f("nv_cache_hit_duration_per_model", "counter", _MODEL, "23.03", "", _CORE,
       ("23.03", "Total cache hit duration per model, in microseconds")),
    _f("nv_cache_miss_duration_per_model", "counter", _MODEL, "23.03", "", _CORE,
       ("23.03", "Total cache miss (insert+lookup) duration per model, in microseconds")),
    _f(NV_REQUEST_SUMMARY_US, "summary", _SUMMARY, "23.04", "", _CORE,
       ("23.04", "Summary of inference request duration in microseconds (includes cached requests)")),
    _f(NV_QUEUE_SUMMARY_US, "summary", _SUMMARY, "23.04", "", _CORE,
       ("23.04", "Summary of inference queuing duration in microseconds (includes cached requests)")),
    _f("nv_inference_compute_input_summary_us", "summary", _SUMMARY, "23.04", "", _CORE,
       ("23.04", "Cumulative compute input duration in microseconds (does not include cached requests)")),
    _f("nv_inference_compute_infer_summary_us", "summary", _SUMMARY, "23.04", "", _CORE,
       ("23.04", "Cumulative compute inference duration in microseconds (does not include cached requests)")),
    _f("nv_inference_compute_output_summary_us", "summary", _SUMMARY, "23.04", "", _CORE,
       ("23.04", "Cumulative inference compute output duration in microseconds (does "
        "not include cached requests)")),
    _f("nv_cache_hit_summary_per_model", "summary", _SUMMARY, "23.04", "", _CORE,
       ("23.04", "Summary of cache hit counts/durations per model, in microseconds.")),
    _f("nv_cache_miss_summary_per_model", "summary", _SUMMARY, "23.04", "", _CORE,
       ("23.04", "Summary of cache miss counts/durations per model, in microseconds.")),
    _f(NV_PENDING_REQUEST_COUNT, "gauge", _MODEL, "23.09", "", _CORE,
       ("23.09", "Instantaneous number of pending requests awaiting execution per-model.")),
    _f("nv_pinned_memory_pool_total_bytes", "gauge", _NONE, "24.01", "", _CORE,
       ("24.01", "Pinned memory pool total memory size, in bytes")),
    _f("nv_pinned_memory_pool_used_bytes", "gauge", _NONE, "24.01", "", _CORE,
       ("24.01", "Pinned memory pool used memory size, in bytes")),
    _f(NV_MODEL_LOAD_DURATION_SECS, "gauge", _MODEL, "24.11", "", _CORE,
       ("24.11", "Model load time in seconds")),
    _f(NV_FIRST_RESPONSE_HISTOGRAM_MS, "histogram", _HISTOGRAM, "24.11", "", _CORE,
       ("24.11", "Duration from request to first response in milliseconds")),
    _f(VLLM_PROMPT_TOKENS, "counter", _BACKEND, "24.08", "", _VLLM,
       ("24.08", "Number of prefill tokens processed.")),
    _f(VLLM_GENERATION_TOKENS, "counter", _BACKEND, "24.08", "", _VLLM,
       ("24.08", "Number of generation tokens processed.")),
    _f(VLLM_TTFT_SECONDS, "histogram", (*_BACKEND, LABEL_LE), "24.08", "", _VLLM,
       ("24.08", "Histogram of time to first token in seconds.")),
    _f(VLLM_TPOT_SECONDS, "histogram", (*_BACKEND, LABEL_LE), "24.08", "", _VLLM,
       ("24.08", "Histogram of time per output token in seconds.")),
    _f(VLLM_E2E_SECONDS, "histogram", (*_BACKEND, LABEL_LE), "24.09", "", _VLLM,
       ("24.09", "Histogram of end to end request latency in seconds.")),
    _f(VLLM_REQUEST_PROMPT_TOKENS, "histogram", (*_BACKEND, LABEL_LE), "24.09", "", _VLLM,
       ("24.09", "Number of prefill tokens processed.")),
    _f(VLLM_REQUEST_GENERATION_TOKENS, "histogram", (*_BACKEND, LABEL_LE), "24.09", "", _VLLM,
       ("24.09", "Number of generation tokens processed.")),
    _f("vllm:request_params_best_of", "histogram", (*_BACKEND, LABEL_LE), "24.09", "24.12", _VLLM,
       ("24.09", "Histogram of the best_of request parameter.")),
    _f("vllm:request_params_n", "histogram", (*_BACKEND, LABEL_LE), "24.09", "", _VLLM,
       ("24.09", "Histogram of the n request parameter.")),
    _f(TRT_REQUEST_METRICS, "gauge", (*_BACKEND, TRT_LABEL_REQUEST_TYPE), "23.12", "", _TRTLLM,
       ("23.12", "TRT LLM request metrics")),
    _f(TRT_RUNTIME_MEMORY_METRICS, "gauge", (*_BACKEND, "memory_type"), "23.12", "", _TRTLLM,
       ("23.12", "TRT LLM runtime memory metrics")),
    _f(TRT_KV_CACHE_BLOCK_METRICS, "gauge", (*_BACKEND, TRT_LABEL_KV_CACHE_BLOCK_TYPE), "23.12", "", _TRTLLM,
       ("23.12", "TRT LLM KV cache block metrics")),
    _f(TRT_INFLIGHT_BATCHER_METRICS, "gauge", (*_BACKEND, "inflight_batcher_specific_metric"), "23.12", "",
       _TRTLLM,
       ("23.12", "TRT LLM inflight_batcher-specific metrics")),
    _f(TRT_V1_METRICS, "gauge", (*_BACKEND, "v1_specific_metric"), "23.12", "", _TRTLLM,
       ("23.12", "TRT LLM v1-specific metrics")),
    _f(TRT_GENERAL_METRICS, "gauge", (*_BACKEND, "general_type"), "23.12", "", _TRTLLM,
       ("23.12", "General TRT LLM metrics")),
    _f(TRT_DISAGGREGATED_METRICS, "counter", (*_BACKEND, "disaggregated_serving_type"), "25.02", "", _TRTLLM,
       ("25.02", "TRT LLM disaggregated serving metrics")),
    _f(TRT_INPUT_TOKEN_LEN, "histogram", (*_BACKEND, "response_metric_type", LABEL_LE), "25.02", "", _TRTLLM,
       ("25.02", "TRT LLM response metrics")),
    _f(TRT_OUTPUT_TOKEN_LEN, "histogram", (*_BACKEND, "response_metric_type", LABEL_LE), "25.02", "", _TRTLLM,
       ("25.02", "TRT LLM response metrics")),
)
# fmt: on


def families_in(release: str) -> tuple[TritonFamily, ...]:
    """The families a release registers (Triton's and both LLM backends')."""
    return tuple(f for f in TRITON_FAMILIES if f.in_release(release))


def first_release(name: str) -> str:
    """The first release (YY.MM) that registers the family `name`; KeyError for a family not in the table."""
    for family in TRITON_FAMILIES:
        if family.name == name:
            return family.first
    raise KeyError(name)


def render_markdown() -> str:
    """The table of docs/triton-families.md (between its markers)."""
    lines = [
        "| family | type | labels | first | last | source | HELP (from release) |",
        "|---|---|---|---|---|---|---|",
    ]
    for f in TRITON_FAMILIES:
        helps = "<br>".join(f"{since}: {text}".replace("|", "\\|") for since, text in f.help)
        labels = ", ".join(f.labels) or "(none)"
        lines.append(
            f"| `{f.name}` | {f.kind} | {labels} | {f.first} | {f.last or 'still'} | {f.source} | {helps} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render_markdown(), end="")
