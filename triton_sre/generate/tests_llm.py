"""promtool tests of the LLM rules (llm.py): hand-computed expectations, rates from per-minute
increments, quantiles by interpolation."""

from __future__ import annotations

from typing import Any

from triton_sre import conventions as c
from triton_sre.durations import parse_duration
from triton_sre.generate import llm
from triton_sre.promql import Matcher, num, q, selector
from triton_sre.slo import Spec

LLM_TEST_FILE = "triton-llm-rules.test.yaml"
TEST_INSTANCE = "triton-0:8002"


def _series(name: str, labels: dict[str, str], values: str) -> dict[str, str]:
    body = ", ".join(f"{k}={q(v)}" for k, v in sorted(labels.items()))
    return {"series": f"{name}{{{body}}}", "values": values}


def test_file(spec: Spec, base_url: str) -> dict[str, Any]:
    """Hand-computed expectations: rates from per-minute increments, quantiles by interpolation."""
    job = spec.triton_job

    def labels(model: str, **extra: str) -> dict[str, str]:
        return {
            c.LABEL_JOB: job,
            c.LABEL_INSTANCE: TEST_INSTANCE,
            c.LABEL_MODEL: model,
            c.LABEL_VERSION: "1",
            **extra,
        }

    def out(model: str, **extra: str) -> dict[str, str]:
        return {c.LABEL_JOB: job, c.LABEL_MODEL: model, c.LABEL_VERSION: "1", **extra}

    ttft = c.VLLM_TTFT_SECONDS
    # per minute: 100 first tokens, 50 within 10 ms, 90 within 20 ms, all within 40 ms
    buckets = [("0.01", 50), ("0.02", 90), ("0.04", 100), ("+Inf", 100)]
    recording_series = [
        _series(c.VLLM_PROMPT_TOKENS, labels("chat"), "0+600x20"),  # 10 tokens/s
        _series(c.VLLM_GENERATION_TOKENS, labels("chat"), "0+1200x20"),  # 20 tokens/s
        _series(
            c.TRT_INPUT_TOKEN_LEN + "_sum",
            labels("trt", response_metric_type="total_input_tokens"),
            "0+300x20",
        ),
        *[_series(ttft + "_bucket", labels("chat", le=le), f"0+{n}x20") for le, n in buckets],
        _series(ttft + "_count", labels("chat"), "0+100x20"),
        _series(ttft + "_sum", labels("chat"), "0+1.5x20"),
        _series(c.VLLM_CACHE_USAGE, labels("chat"), "0.5x20"),
        _series(
            c.TRT_KV_CACHE_BLOCK_METRICS, labels("trt", kv_cache_block_type=c.TRT_KV_FRACTION), "0.25x20"
        ),
        _series(c.TRT_KV_CACHE_BLOCK_METRICS, labels("trt", kv_cache_block_type=c.TRT_KV_USED), "64x20"),
        _series(c.TRT_REQUEST_METRICS, labels("trt", request_type=c.TRT_REQUEST_WAITING), "3x20"),
        _series(c.TRT_REQUEST_METRICS, labels("trt", request_type=c.TRT_REQUEST_SCHEDULED), "5x20"),
        # TensorRT-LLM before 25.04: no `fraction` block type, no `waiting` request type
        _series(c.TRT_KV_CACHE_BLOCK_METRICS, labels("trt_old", kv_cache_block_type=c.TRT_KV_USED), "48x20"),
        _series(c.TRT_KV_CACHE_BLOCK_METRICS, labels("trt_old", kv_cache_block_type=c.TRT_KV_MAX), "64x20"),
        _series(c.TRT_REQUEST_METRICS, labels("trt_old", request_type=c.TRT_REQUEST_ACTIVE), "7x20"),
        _series(c.TRT_REQUEST_METRICS, labels("trt_old", request_type=c.TRT_REQUEST_SCHEDULED), "5x20"),
    ]
    recording = {
        "name": "LLM recording rules: token rates, TTFT quantiles, KV cache, waiting requests",
        "interval": "1m",
        "input_series": recording_series,
        "promql_expr_test": [
            {
                "expr": c.REC_LLM_TOKENS_RATE,
                "eval_time": "10m",
                "exp_samples": [
                    {
                        "labels": selector(c.REC_LLM_TOKENS_RATE, _plain(out("chat", direction="input"))),
                        "value": 10,
                    },
                    {
                        "labels": selector(c.REC_LLM_TOKENS_RATE, _plain(out("chat", direction="output"))),
                        "value": 20,
                    },
                    {
                        "labels": selector(c.REC_LLM_TOKENS_RATE, _plain(out("trt", direction="input"))),
                        "value": 5,
                    },
                ],
            },
            {
                # rank 50 of 100 ends the first bucket: 10 ms; rank 95: 20 + 20 x 5/10 ms;
                # rank 99: 20 + 20 x 9/10 ms (in ms, rounded: interpolation is not exact in floats)
                "expr": f"round({c.REC_LLM_TTFT_QUANTILE} * 1000)",
                "eval_time": "10m",
                "exp_samples": [
                    {"labels": selector("", _plain(out("chat", quantile=q))), "value": v}
                    for q, v in (("0.5", 10), ("0.95", 30), ("0.99", 38))
                ],
            },
            {
                "expr": c.REC_LLM_KV_CACHE,
                "eval_time": "10m",
                "exp_samples": [
                    {"labels": selector(c.REC_LLM_KV_CACHE, _plain(out("chat"))), "value": 0.5},
                    {"labels": selector(c.REC_LLM_KV_CACHE, _plain(out("trt"))), "value": 0.25},
                    {"labels": selector(c.REC_LLM_KV_CACHE, _plain(out("trt_old"))), "value": 0.75},
                ],
            },
            {
                "expr": c.REC_LLM_WAITING,
                "eval_time": "10m",
                "exp_samples": [
                    {"labels": selector(c.REC_LLM_WAITING, _plain(out("trt"))), "value": 3},
                    {"labels": selector(c.REC_LLM_WAITING, _plain(out("trt_old"))), "value": 2},
                ],
            },
            {
                "expr": c.REC_LLM_RUNNING,
                "eval_time": "10m",
                "exp_samples": [
                    {"labels": selector(c.REC_LLM_RUNNING, _plain(out("trt"))), "value": 5},
                    {"labels": selector(c.REC_LLM_RUNNING, _plain(out("trt_old"))), "value": 5},
                ],
            },
        ],
    }
    rules = {a["alert"]: a for a in llm.alert_rules(spec, base_url)}

    def expected(alert: str, model: str, value: float) -> dict[str, Any]:
        rule = rules[alert]
        exp_labels = {**out(model), **rule["labels"]}
        annotations = {k: _render(v, exp_labels, value) for k, v in rule["annotations"].items()}
        return {"exp_labels": exp_labels, "exp_annotations": annotations}

    # Times follow spec.llm.saturated_for (W minutes): the KV alert fires W minutes after the cache
    # fills with requests waiting; the waiting alert needs W minutes of waiting, then 5 more.
    w = int(parse_duration(spec.llm.saturated_for, "llm.saturated_for")) // 60
    n = 2 * w + 20  # samples per series
    full = (1 + spec.llm.kv_cache_saturated_ratio) / 2  # above the threshold
    roomy = spec.llm.kv_cache_saturated_ratio / 2  # below it
    alerts_series = [
        # "full": cache above the threshold with a growing backlog -> memory-bound, and never
        # TritonLLMRequestsWaiting (the `unless`)
        _series(c.VLLM_CACHE_USAGE, labels("full"), f"{num(full)}x{n}"),
        _series(c.VLLM_NUM_WAITING, labels("full"), f"4+1x{n}"),
        # "full_idle": cache above the threshold but nothing waits -> no alert
        _series(c.VLLM_CACHE_USAGE, labels("full_idle"), f"{num(full)}x{n}"),
        _series(c.VLLM_NUM_WAITING, labels("full_idle"), f"0x{n}"),
        # "busy": TensorRT-LLM families, cache below the threshold, nothing waits for 5 minutes,
        # then the backlog grows 1, 2, 3, ... from minute 6 -> compute-bound
        _series(
            c.TRT_KV_CACHE_BLOCK_METRICS,
            labels("busy", kv_cache_block_type=c.TRT_KV_FRACTION),
            f"{num(roomy)}x{n}",
        ),
        _series(
            c.TRT_REQUEST_METRICS, labels("busy", request_type=c.TRT_REQUEST_WAITING), f"0x5 1+1x{n - 6}"
        ),
    ]
    alerts = {
        "name": "LLM alerts: KV cache saturated (memory-bound) vs requests waiting (compute-bound)",
        "interval": "1m",
        "input_series": alerts_series,
        "alert_rule_test": [
            {"eval_time": f"{w - 1}m", "alertname": c.ALERT_LLM_KV_CACHE_SATURATED, "exp_alerts": []},
            {
                "eval_time": f"{w + 2}m",
                "alertname": c.ALERT_LLM_KV_CACHE_SATURATED,
                "exp_alerts": [expected(c.ALERT_LLM_KV_CACHE_SATURATED, "full", full)],
            },
            {"eval_time": f"{w + 8}m", "alertname": c.ALERT_LLM_REQUESTS_WAITING, "exp_alerts": []},
            {
                "eval_time": f"{w + 14}m",
                "alertname": c.ALERT_LLM_REQUESTS_WAITING,
                "exp_alerts": [expected(c.ALERT_LLM_REQUESTS_WAITING, "busy", w + 9)],
            },
        ],
    }
    return {"rule_files": [f"../{llm.LLM_FILE}"], "evaluation_interval": "1m", "tests": [recording, alerts]}


def _plain(labels: dict[str, str]) -> list[Matcher]:
    return [(k, "=", v) for k, v in sorted(labels.items())]


def _render(template: str, labels: dict[str, str], value: float) -> str:
    """The annotation Prometheus renders for these labels and value (the templates used above)."""
    text = template
    for key, val in labels.items():
        text = text.replace(f"{{{{ $labels.{key} }}}}", val)
    text = text.replace("{{ $value | humanizePercentage }}", f"{value * 100:g}%")
    return text.replace('{{ $value | printf "%.0f" }}', f"{value:.0f}")


def test_files(spec: Spec, base_url: str) -> dict[str, Any]:
    """Test file name (under alerts/tests/) -> promtool test document."""
    return {LLM_TEST_FILE: test_file(spec, base_url)}
