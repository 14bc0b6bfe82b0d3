"""LLM serving rules (pure): recording rules on the vLLM and TensorRT-LLM backends' families,
the KV cache and waiting-request alerts (promtool tests: tests_llm.py).

One rule file of its own (`triton-llm-rules.yaml`, group `triton-sre.llm`: recording rules, then
the alerts that read them), so the other generators stay as they are. Each rule reads the vLLM
family and falls back to the TensorRT-LLM one (`or`), so one model never gets two series.

Memory-bound vs compute-bound: requests waiting while the KV cache is (nearly) full means the
cache is what limits admission (`TritonLLMKVCacheSaturated`, `bound="memory"`); requests waiting
while it is not full means compute or the scheduler's sequence limit does
(`TritonLLMRequestsWaiting`, `bound="compute"`).
"""

from __future__ import annotations

from triton_sre import conventions as c
from triton_sre.generate.rulefile import Rule, RuleFile, alert, runbook_url
from triton_sre.promql import (
    GUARD_OBSERVED,
    Matcher,
    by,
    histogram_quantile,
    label_sets,
    num,
    on,
    one_of,
    rate,
    selector,
)
from triton_sre.slo import Spec

LLM_FILE = "triton-llm-rules.yaml"


def _by(spec: Spec) -> tuple[str, ...]:
    """The model-version level every LLM rule keeps (the cluster label too, when the spec sets it)."""
    return label_sets(spec.cluster_label).model


def _sum(spec: Spec, expr: str, op: str = "sum") -> str:
    return f"{op} {by(_by(spec))} ({expr})"


def _rate(family: str, job: list[Matcher]) -> str:
    return rate(family, job, c.REC_RATE_WINDOW)


def _quantile(spec: Spec, histogram: str, quantile: str, job: list[Matcher]) -> str:
    """histogram_quantile over the model's buckets, only while requests were observed (never NaN)."""
    return histogram_quantile(histogram, job, quantile, c.REC_RATE_WINDOW, _by(spec), guard=GUARD_OBSERVED)


def recording_rules(spec: Spec) -> list[Rule]:
    """Per model, for every job an autoscaling entry reads (its LLM signals are made of these)."""
    job: list[Matcher] = [one_of(c.LABEL_JOB, spec.signal_jobs)]
    rules: list[Rule] = []
    for record, family in (
        (c.REC_LLM_TTFT_QUANTILE, c.VLLM_TTFT_SECONDS),
        (c.REC_LLM_TPOT_QUANTILE, c.VLLM_TPOT_SECONDS),
    ):
        for q in c.LATENCY_QUANTILES:
            rules.append(
                {"record": record, "expr": _quantile(spec, family, q, job), "labels": {c.LABEL_QUANTILE: q}}
            )
    for direction, vllm, trt in (
        (c.DIRECTION_INPUT, c.VLLM_PROMPT_TOKENS, c.TRT_INPUT_TOKEN_LEN),
        (c.DIRECTION_OUTPUT, c.VLLM_GENERATION_TOKENS, c.TRT_OUTPUT_TOKEN_LEN),
    ):
        rules.append(
            {
                "record": c.REC_LLM_TOKENS_RATE,
                "expr": f"{_sum(spec, _rate(vllm, job))}\nor {_sum(spec, _rate(trt + '_sum', job))}",
                "labels": {c.L_DIRECTION: direction},
            }
        )

    def trt_kv(block_type: str) -> str:
        block = (c.TRT_LABEL_KV_CACHE_BLOCK_TYPE, "=", block_type)
        return selector(c.TRT_KV_CACHE_BLOCK_METRICS, [*job, block])

    def trt_requests(request_type: str) -> str:
        return selector(c.TRT_REQUEST_METRICS, [*job, (c.TRT_LABEL_REQUEST_TYPE, "=", request_type)])

    # TensorRT-LLM writes the `fraction` block type and the `waiting` request type from 25.04 only;
    # before, the same figures are used / max and active - scheduled, per series (what it writes since).
    kv_block = f"ignoring({c.TRT_LABEL_KV_CACHE_BLOCK_TYPE})"
    used_share = f"{trt_kv(c.TRT_KV_USED)} / {kv_block} ({trt_kv(c.TRT_KV_MAX)} > 0)"
    rules.append(
        {
            "record": c.REC_LLM_KV_CACHE,
            "expr": (
                f"clamp({_sum(spec, selector(c.VLLM_CACHE_USAGE, job), op='max')}\n"
                f"or {_sum(spec, trt_kv(c.TRT_KV_FRACTION), op='max')}\n"
                f"or {_sum(spec, used_share, op='max')}, 0, 1)"
            ),
        }
    )
    request_type = f"ignoring({c.TRT_LABEL_REQUEST_TYPE})"
    active_less_scheduled = (
        f"{trt_requests(c.TRT_REQUEST_ACTIVE)} - {request_type} {trt_requests(c.TRT_REQUEST_SCHEDULED)}"
    )
    for record, vllm, trt in (
        (
            c.REC_LLM_WAITING,
            c.VLLM_NUM_WAITING,
            f"{_sum(spec, trt_requests(c.TRT_REQUEST_WAITING))}\nor {_sum(spec, active_less_scheduled)}",
        ),
        (c.REC_LLM_RUNNING, c.VLLM_NUM_RUNNING, _sum(spec, trt_requests(c.TRT_REQUEST_SCHEDULED))),
    ):
        rules.append({"record": record, "expr": f"clamp_min({_sum(spec, selector(vllm, job))}\nor {trt}, 0)"})
    return rules


def alert_rules(spec: Spec, base_url: str) -> list[Rule]:
    job: list[Matcher] = [(c.LABEL_JOB, "=", spec.triton_job)]
    kv = selector(c.REC_LLM_KV_CACHE, job)
    waiting = selector(c.REC_LLM_WAITING, job)
    full = num(spec.llm.kv_cache_saturated_ratio)
    percent = num(spec.llm.kv_cache_saturated_ratio * 100)
    window = spec.llm.saturated_for
    on_model = on(_by(spec))

    def url(alert: str) -> str:
        return runbook_url(base_url, c.ALERT_RUNBOOKS[alert])

    saturated = alert(
        c.ALERT_LLM_KV_CACHE_SATURATED,
        f"{kv} >= {full}\nand {on_model} {waiting} > 0",
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
    growing = alert(
        c.ALERT_LLM_REQUESTS_WAITING,
        f"{waiting} > 0\nand {on_model} min_over_time({waiting}[{window}]) > 0\n"
        f"and {on_model} deriv({waiting}[{window}]) > 0\nunless {on_model} {kv} >= {full}",
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
    for rule in (saturated, growing):  # the bot's verdict reads the threshold from here
        rule["annotations"][c.ANNOTATION_KV_CACHE_SATURATED_RATIO] = full
    return [saturated, growing]


def rule_file(spec: Spec, base_url: str) -> RuleFile:
    # One group: Prometheus evaluates a group's rules in order, so the alerts read this evaluation's
    # recorded series. Across two groups they would read the previous evaluation's or this one's,
    # whichever group ran first (promtool showed both).
    return {
        "groups": [{"name": c.GROUP_LLM, "rules": [*recording_rules(spec), *alert_rules(spec, base_url)]}]
    }
