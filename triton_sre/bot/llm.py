"""What the bot adds to an LLM alert (pure): the figures to fetch from Prometheus and the
memory-bound vs compute-bound verdict they give.

TTFT p99, KV cache use and waiting requests come from the LLM recording rules; the verdict uses
the same threshold as TritonLLMKVCacheSaturated.
"""

from __future__ import annotations

from collections.abc import Mapping

from triton_sre import conventions as c
from triton_sre.promql import q

LLM_ALERTS = frozenset(c.LLM_ALERT_RUNBOOKS)
TTFT_P99 = "ttft_p99"
KV_CACHE = "kv_cache"
WAITING = "waiting"


def figure_exprs(model: str, version: str = "") -> dict[str, str]:
    """PromQL per figure for one model (the worst version when the alert names none)."""
    sel = f"{c.LABEL_MODEL}={q(model)}" + (f", {c.LABEL_VERSION}={q(version)}" if version else "")
    return {
        TTFT_P99: f'max({c.REC_LLM_TTFT_QUANTILE}{{{sel}, {c.LABEL_QUANTILE}="0.99"}})',
        KV_CACHE: f"max({c.REC_LLM_KV_CACHE}{{{sel}}})",
        WAITING: f"sum({c.REC_LLM_WAITING}{{{sel}}})",
    }


def verdict(figures: Mapping[str, float]) -> str:
    """'memory-bound' / 'compute-bound' with the numbers behind it; '' when nothing waits."""
    kv, waiting = figures.get(KV_CACHE), figures.get(WAITING)
    if waiting is None or waiting <= 0 or kv is None:
        return ""
    if kv >= c.LLM_KV_SATURATED_RATIO:
        return (
            f"{c.BOUND_MEMORY}-bound: KV cache {kv:.0%} full with {waiting:.0f} requests waiting "
            "(more KV memory, shorter max tokens, or another replica)"
        )
    return (
        f"{c.BOUND_COMPUTE}-bound: {waiting:.0f} requests waiting with the KV cache at {kv:.0%} "
        "(raise the scheduler's sequence limit, or add compute)"
    )
