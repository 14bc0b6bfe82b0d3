"""LLM serving rules (pure): recording rules on the vLLM and TensorRT-LLM backends' families,
the KV cache and waiting-request alerts, and their promtool tests.

One rule file of its own (`triton-llm-rules.yaml`, group `triton-sre.llm`: recording rules, then
the alerts that read them), so the other generators stay as they are. Each rule reads the vLLM
family and falls back to the TensorRT-LLM one (`or`), so one model never gets two series.

Memory-bound vs compute-bound: requests waiting while the KV cache is (nearly) full means the
cache is what limits admission (`TritonLLMKVCacheSaturated`, `bound="memory"`); requests waiting
while it is not full means compute or the scheduler's sequence limit does
(`TritonLLMRequestsWaiting`, `bound="compute"`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from triton_sre import conventions as c
from triton_sre.generate import rules as r
from triton_sre.promql import GUARD_OBSERVED, histogram_quantile, rate
from triton_sre.slo import SLO, Spec, parse_duration

LLM_FILE = "triton-llm-rules.yaml"
LLM_TEST_FILE = "triton-llm-rules.test.yaml"
_BY = (c.LABEL_JOB, c.LABEL_MODEL, c.LABEL_VERSION)
_ON = f"on ({', '.join(_BY)})"
TEST_INSTANCE = "triton-0:8002"


def _sum(expr: str, labels: tuple[str, ...] = _BY, op: str = "sum") -> str:
    return f"{op} {r.by(labels)} ({expr})"


def _rate(family: str, job: list[r.Matcher]) -> str:
    return rate(family, job, c.REC_RATE_WINDOW)


def _quantile(histogram: str, quantile: str, job: list[r.Matcher]) -> str:
    """histogram_quantile over the model's buckets, only while requests were observed (never NaN)."""
    return histogram_quantile(histogram, job, quantile, c.REC_RATE_WINDOW, _BY, guard=GUARD_OBSERVED)


def recording_rules(spec: Spec) -> list[r.Rule]:
    job: list[r.Matcher] = [(c.LABEL_JOB, "=", spec.triton_job)]
    rules: list[r.Rule] = []
    for record, family in (
        (c.REC_LLM_TTFT_QUANTILE, c.VLLM_TTFT_SECONDS),
        (c.REC_LLM_TPOT_QUANTILE, c.VLLM_TPOT_SECONDS),
    ):
        for q in c.LATENCY_QUANTILES:
            rules.append(
                {"record": record, "expr": _quantile(family, q, job), "labels": {c.LABEL_QUANTILE: q}}
            )
    for direction, vllm, trt in (
        (c.DIRECTION_INPUT, c.VLLM_PROMPT_TOKENS, c.TRT_INPUT_TOKEN_LEN),
        (c.DIRECTION_OUTPUT, c.VLLM_GENERATION_TOKENS, c.TRT_OUTPUT_TOKEN_LEN),
    ):
        rules.append(
            {
                "record": c.REC_LLM_TOKENS_RATE,
                "expr": f"{_sum(_rate(vllm, job))}\nor {_sum(_rate(trt + '_sum', job))}",
                "labels": {c.L_DIRECTION: direction},
            }
        )
    trt_kv = r.selector(
        c.TRT_KV_CACHE_BLOCK_METRICS, [*job, (c.TRT_LABEL_KV_CACHE_BLOCK_TYPE, "=", c.TRT_KV_FRACTION)]
    )
    rules.append(
        {
            "record": c.REC_LLM_KV_CACHE,
            "expr": (
                f"clamp({_sum(r.selector(c.VLLM_CACHE_USAGE, job), op='max')}\n"
                f"or {_sum(trt_kv, op='max')}, 0, 1)"
            ),
        }
    )
    for record, vllm, request_type in (
        (c.REC_LLM_WAITING, c.VLLM_NUM_WAITING, c.TRT_REQUEST_WAITING),
        (c.REC_LLM_RUNNING, c.VLLM_NUM_RUNNING, c.TRT_REQUEST_SCHEDULED),
    ):
        trt = r.selector(c.TRT_REQUEST_METRICS, [*job, (c.TRT_LABEL_REQUEST_TYPE, "=", request_type)])
        rules.append(
            {
                "record": record,
                "expr": f"clamp_min({_sum(r.selector(vllm, job))}\nor {_sum(trt)}, 0)",
            }
        )
    return rules


def alert_rules(spec: Spec, base_url: str) -> list[r.Rule]:
    job: list[r.Matcher] = [(c.LABEL_JOB, "=", spec.triton_job)]
    kv = r.selector(c.REC_LLM_KV_CACHE, job)
    waiting = r.selector(c.REC_LLM_WAITING, job)
    full = r.num(spec.llm.kv_cache_saturated_ratio)
    percent = r.num(spec.llm.kv_cache_saturated_ratio * 100)
    window = spec.llm.saturated_for

    def url(alert: str) -> str:
        return r.runbook_url(base_url, c.ALERT_RUNBOOKS[alert])

    saturated = r._alert(
        c.ALERT_LLM_KV_CACHE_SATURATED,
        f"{kv} >= {full}\nand {_ON} {waiting} > 0",
        window,
        c.SEVERITY_TICKET,
        "LLM model {{ $labels.model }} is memory-bound: KV cache full and requests waiting",
        "Model {{ $labels.model }} version {{ $labels.version }} has used "
        "{{ $value | humanizePercentage }} of its KV cache, at or above "
        f"{percent}% with requests waiting, for {window}: the cache limits how many sequences run. "
        "Memory-bound: give the cache more memory, cap max tokens, or add a replica.",
        url(c.ALERT_LLM_KV_CACHE_SATURATED),
    )
    saturated["labels"][c.L_BOUND] = c.BOUND_MEMORY
    growing = r._alert(
        c.ALERT_LLM_REQUESTS_WAITING,
        f"{waiting} > 0\nand {_ON} min_over_time({waiting}[{window}]) > 0\n"
        f"and {_ON} deriv({waiting}[{window}]) > 0\nunless {_ON} {kv} >= {full}",
        "5m",
        c.SEVERITY_TICKET,
        "Requests to LLM model {{ $labels.model }} keep waiting while its KV cache has room",
        "Model {{ $labels.model }} version {{ $labels.version }} has had requests waiting for "
        f'{window} and the backlog still grows (now {{{{ $value | printf "%.0f" }}}}) while its KV '
        f"cache is below {percent}%: compute-bound or limited by the scheduler's sequence limit, "
        "not by cache memory.",
        url(c.ALERT_LLM_REQUESTS_WAITING),
    )
    growing["labels"][c.L_BOUND] = c.BOUND_COMPUTE
    return [saturated, growing]


def rule_file(spec: Spec, base_url: str) -> r.RuleFile:
    # One group: Prometheus evaluates a group's rules in order, so the alerts read this evaluation's
    # recorded series. Across two groups they would read the previous evaluation's or this one's,
    # whichever group ran first (promtool showed both).
    return {
        "groups": [{"name": c.GROUP_LLM, "rules": [*recording_rules(spec), *alert_rules(spec, base_url)]}]
    }


# -- promtool tests ------------------------------------------------------------------------------
def _series(name: str, labels: dict[str, str], values: str) -> dict[str, str]:
    body = ", ".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
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
                        "labels": r.selector(c.REC_LLM_TOKENS_RATE, _plain(out("chat", direction="input"))),
                        "value": 10,
                    },
                    {
                        "labels": r.selector(c.REC_LLM_TOKENS_RATE, _plain(out("chat", direction="output"))),
                        "value": 20,
                    },
                    {
                        "labels": r.selector(c.REC_LLM_TOKENS_RATE, _plain(out("trt", direction="input"))),
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
                    {"labels": r.selector("", _plain(out("chat", quantile=q))), "value": v}
                    for q, v in (("0.5", 10), ("0.95", 30), ("0.99", 38))
                ],
            },
            {
                "expr": c.REC_LLM_KV_CACHE,
                "eval_time": "10m",
                "exp_samples": [
                    {"labels": r.selector(c.REC_LLM_KV_CACHE, _plain(out("chat"))), "value": 0.5},
                    {"labels": r.selector(c.REC_LLM_KV_CACHE, _plain(out("trt"))), "value": 0.25},
                ],
            },
            {
                "expr": c.REC_LLM_WAITING,
                "eval_time": "10m",
                "exp_samples": [{"labels": r.selector(c.REC_LLM_WAITING, _plain(out("trt"))), "value": 3}],
            },
            {
                "expr": c.REC_LLM_RUNNING,
                "eval_time": "10m",
                "exp_samples": [{"labels": r.selector(c.REC_LLM_RUNNING, _plain(out("trt"))), "value": 5}],
            },
        ],
    }
    rules = {a["alert"]: a for a in alert_rules(spec, base_url)}

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
        _series(c.VLLM_CACHE_USAGE, labels("full"), f"{r.num(full)}x{n}"),
        _series(c.VLLM_NUM_WAITING, labels("full"), f"4+1x{n}"),
        # "full_idle": cache above the threshold but nothing waits -> no alert
        _series(c.VLLM_CACHE_USAGE, labels("full_idle"), f"{r.num(full)}x{n}"),
        _series(c.VLLM_NUM_WAITING, labels("full_idle"), f"0x{n}"),
        # "busy": TensorRT-LLM families, cache below the threshold, nothing waits for 5 minutes,
        # then the backlog grows 1, 2, 3, ... from minute 6 -> compute-bound
        _series(
            c.TRT_KV_CACHE_BLOCK_METRICS,
            labels("busy", kv_cache_block_type=c.TRT_KV_FRACTION),
            f"{r.num(roomy)}x{n}",
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
    return {"rule_files": [f"../{LLM_FILE}"], "evaluation_interval": "1m", "tests": [recording, alerts]}


def _plain(labels: dict[str, str]) -> list[r.Matcher]:
    return [(k, "=", v) for k, v in sorted(labels.items())]


def _render(template: str, labels: dict[str, str], value: float) -> str:
    """The annotation Prometheus renders for these labels and value (the templates used above)."""
    text = template
    for key, val in labels.items():
        text = text.replace(f"{{{{ $labels.{key} }}}}", val)
    text = text.replace("{{ $value | humanizePercentage }}", f"{value * 100:g}%")
    return text.replace('{{ $value | printf "%.0f" }}', f"{value:.0f}")


# -- SLO types ttft / time_per_output_token (parsed in slo.py, wired in rules.py and promtests.py) --
def le_regex_seconds(bound: float) -> str:
    """A bucket bound in seconds however it is written: `0.25`, `1` / `1.0`, `10` / `10.0`."""
    text = repr(float(bound))
    if text.endswith(".0"):
        return f"{re.escape(text[:-2])}(\\.0+)?"
    return f"{re.escape(text)}0*"


def _slo_matchers(spec: Spec, slo: SLO) -> list[r.Matcher]:
    return [(c.LABEL_JOB, "=", spec.triton_job), *r.model_matchers(slo)]


def slo_parts(spec: Spec, slo: SLO) -> dict[str, str]:
    """The SLI's parts per model at REC_RATE_WINDOW, recorded like the other SLOs' (rules.py
    `_part`): events per second (first tokens for ttft, output-token gaps for time_per_output_token)
    and, of those, the ones within the threshold (its bucket). Longer windows average them."""
    family = c.LLM_SLO_HISTOGRAMS[slo.type][0]
    ms = _slo_matchers(spec, slo)
    le = (c.LABEL_LE, "=~", le_regex_seconds(slo.threshold_s))
    return {
        c.SLO_PART_TOTAL: _sum(_rate(family + "_count", ms), (c.LABEL_MODEL,)),
        c.SLO_PART_GOOD: _sum(_rate(family + "_bucket", [*ms, le]), (c.LABEL_MODEL,)),
    }


def slo_sli_text(slo: SLO) -> str:
    what = "requests whose first token took" if slo.type == c.SLO_TTFT else "output tokens that took"
    return f"{what} longer than {r.num(slo.threshold_s * 1000)} ms"


def slo_track_series(
    slo: SLO, labels: Callable[[Mapping[str, str]], str], total: str, good: str
) -> list[dict[str, str]]:
    """promtool input series of one model's events for an LLM SLO: the histogram's count and the
    threshold's bucket (promtests.py computes the expected alerts as for any histogram SLI)."""
    family = c.LLM_SLO_HISTOGRAMS[slo.type][0]
    le = repr(float(slo.threshold_s))
    return [
        {"series": f"{family}_count" + labels({}), "values": total},
        {"series": f"{family}_bucket" + labels({c.LABEL_LE: le}), "values": good},
    ]
