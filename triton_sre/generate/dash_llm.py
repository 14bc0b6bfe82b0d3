"""The "Triton / LLM" dashboard (uid triton-sre-llm): tokens per second, TTFT and time per output
token quantiles (with the thresholds of any `ttft` / `time_per_output_token` SLOs), running and
waiting requests, KV cache use, cost per million tokens, prompt and output length distributions."""

from __future__ import annotations

from typing import Any

from triton_sre import conventions as c
from triton_sre import promql as pq
from triton_sre.generate.panels import (
    RATE,
    Layout,
    Matchers,
    dashboard,
    exporter_matchers,
    model_level_matchers,
    target,
    timeseries,
    triton_matchers,
    variables,
)
from triton_sre.promql import GUARD_NONE, histogram_quantile
from triton_sre.slo import Spec

FILE = "triton-llm.json"
_LENGTHS = (
    (c.DIRECTION_INPUT, "Prompt length", c.VLLM_REQUEST_PROMPT_TOKENS, c.TRT_INPUT_TOKEN_LEN),
    (c.DIRECTION_OUTPUT, "Output length", c.VLLM_REQUEST_GENERATION_TOKENS, c.TRT_OUTPUT_TOKEN_LEN),
)


def _slo_thresholds(spec: Spec, slo_type: str) -> list[Any]:
    """A constant line per SLO of `slo_type` (its threshold in seconds), for the quantile panels."""
    return [
        target(f"vector({pq.num(slo.threshold_s)})", f"SLO {slo.name} threshold")
        for slo in spec.slos
        if slo.type == slo_type
    ]


def _length_quantile(quantile: str, vllm: str, trt: str, triton: Matchers) -> str:
    def one(family: str) -> str:
        return histogram_quantile(family, triton, quantile, RATE, (c.LABEL_MODEL,), guard=GUARD_NONE)

    return f"{one(vllm)}\nor {one(trt)}"


def llm(spec: Spec) -> dict[str, Any]:
    exporter = exporter_matchers(spec)
    triton = triton_matchers(spec)
    per_model = model_level_matchers(spec)  # the LLM recording rules are per model, not per instance
    layout = Layout()
    tokens = pq.selector(c.M_LLM_TOKENS_PER_SECOND, exporter)
    layout.row(
        "Tokens and cost",
        [
            timeseries(
                "Tokens per second",
                "Input (prompt) and output (generated) tokens per second, from the exporter's window.",
                "short",
                [target(f"sum by (model, direction) ({tokens})", "{{model}} {{direction}}")],
            ),
            timeseries(
                "Tokens per second (5m rate)",
                "The recording rule on Triton's LLM families, summed over instances.",
                "short",
                [
                    target(
                        f"sum by (model, direction) ({pq.selector(c.REC_LLM_TOKENS_RATE, per_model)})",
                        "{{model}} {{direction}}",
                    )
                ],
            ),
            timeseries(
                "Cost per 1M tokens",
                "The model's attributed cost over the window per million tokens of each direction.",
                "currencyUSD",
                [target(pq.selector(c.M_COST_PER_1M_TOKENS, exporter), "{{model}} {{direction}}")],
            ),
        ],
    )
    quantiles = [
        (c.REC_LLM_TTFT_QUANTILE, c.M_LLM_TTFT_SECONDS, "Time to first token", c.SLO_TTFT),
        (c.REC_LLM_TPOT_QUANTILE, c.M_LLM_TPOT_SECONDS, "Time per output token", c.SLO_TPOT),
    ]
    panels = []
    for record, average, title, slo_type in quantiles:
        panels.append(
            timeseries(
                title,
                f"{title}: p50, p95 and p99 over 5 minutes from the backend's histogram, the "
                "exporter's window average, and the thresholds of matching SLOs.",
                "s",
                [
                    target(
                        f"max by (model, quantile) ({pq.selector(record, per_model)})",
                        "{{model}} p{{quantile}}",
                    ),
                    target(f"max by (model) ({pq.selector(average, exporter)})", "{{model}} average"),
                    *_slo_thresholds(spec, slo_type),
                ],
            )
        )
    layout.row("Latency", panels)
    requests = pq.selector(c.M_LLM_REQUESTS, exporter)
    layout.row(
        "Capacity: memory-bound or compute-bound?",
        [
            timeseries(
                "Running and waiting requests",
                "Requests the backend runs and has waiting. Waiting with the KV cache full: "
                "memory-bound; waiting with room in the cache: compute- or scheduler-bound.",
                "short",
                [target(f"sum by (model, state) ({requests})", "{{model}} {{state}}")],
            ),
            timeseries(
                "KV cache use",
                f"Share of the KV cache in use; TritonLLMKVCacheSaturated fires at "
                f"{pq.num(spec.llm.kv_cache_saturated_ratio * 100)}% with requests waiting for "
                f"{spec.llm.saturated_for}.",
                "percentunit",
                [
                    target(pq.selector(c.M_LLM_KV_CACHE_UTILIZATION, exporter), "{{model}}"),
                    target(f"vector({pq.num(spec.llm.kv_cache_saturated_ratio)})", "saturation threshold"),
                ],
            ),
        ],
    )
    layout.row(
        "Prompt and output lengths",
        [
            timeseries(
                f"{title} (tokens)",
                f"{title} per request: p50 and p95 over the rate interval, from "
                f"{vllm} (vLLM) or {trt} (TensorRT-LLM).",
                "short",
                [
                    target(_length_quantile(q, vllm, trt, triton), f"{{{{model}}}} p{q}")
                    for q in ("0.5", "0.95")
                ],
            )
            for _, title, vllm, trt in _LENGTHS
        ],
    )
    templating = variables(spec, multi_model=True)
    return dashboard(
        "Triton / LLM",
        c.UID_LLM_DASHBOARD,
        "LLM serving on Triton (vLLM and TensorRT-LLM backends): tokens, latency per token, "
        "KV cache pressure and cost per million tokens.",
        templating,
        layout,
    )
