"""What the bot adds to an LLM alert (pure): the figures to fetch from Prometheus and the
memory-bound vs compute-bound verdict they give.

TTFT p99, KV cache use and waiting requests come from the LLM recording rules; the verdict uses
the threshold the alert carries (annotation `kv_cache_threshold_ratio`, the spec's
`llm.kv_cache_saturated_ratio`), never a constant of its own: a spec with another ratio gets a
verdict that agrees with its alert. Rules generated before the annotation: the alert's own `bound`
label (the rule judged against the spec when it fired).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from triton_sre import conventions as c
from triton_sre.bot.queries import Scope, scope_matchers
from triton_sre.promql import q

LLM_ALERTS = frozenset(c.LLM_ALERT_RUNBOOKS)
TTFT_P99 = "ttft_p99"
KV_CACHE = "kv_cache"
WAITING = "waiting"


def figure_exprs(model: str, version: str = "", scope: Scope = ()) -> dict[str, str]:
    """PromQL per figure for one model (the worst version when the alert names none), in the alert's
    cluster when `scope` names it."""
    sel = f"{c.LABEL_MODEL}={q(model)}" + (f", {c.LABEL_VERSION}={q(version)}" if version else "")
    sel += scope_matchers(scope)
    return {
        TTFT_P99: f'max({c.REC_LLM_TTFT_QUANTILE}{{{sel}, {c.LABEL_QUANTILE}="0.99"}})',
        KV_CACHE: f"max({c.REC_LLM_KV_CACHE}{{{sel}}})",
        WAITING: f"sum({c.REC_LLM_WAITING}{{{sel}}})",
    }


def saturation_threshold(annotations: Mapping[str, str]) -> float | None:
    """The KV cache ratio the alert's rule judged against; None when absent or not a ratio."""
    try:
        value = float(annotations.get(c.ANNOTATION_KV_CACHE_SATURATED_RATIO, ""))
    except ValueError:
        return None
    return value if math.isfinite(value) and 0 < value <= 1 else None


def verdict(figures: Mapping[str, float], threshold: float | None, bound: str = "") -> str:
    """'memory-bound' / 'compute-bound' with the numbers behind it; '' when nothing waits.

    `threshold` is the alert's KV cache ratio (saturation_threshold); without one, the alert's
    `bound` label decides, and with neither there is no verdict."""
    kv, waiting = figures.get(KV_CACHE), figures.get(WAITING)
    if waiting is None or waiting <= 0 or kv is None:
        return ""
    if threshold is not None:
        memory = kv >= threshold
    elif bound in (c.BOUND_MEMORY, c.BOUND_COMPUTE):
        memory = bound == c.BOUND_MEMORY
    else:
        return ""
    if memory:
        return (
            f"{c.BOUND_MEMORY}-bound: KV cache {kv:.0%} full with {waiting:.0f} requests waiting "
            "(more KV memory, shorter max tokens, or another replica)"
        )
    return (
        f"{c.BOUND_COMPUTE}-bound: {waiting:.0f} requests waiting with the KV cache at {kv:.0%} "
        "(raise the scheduler's sequence limit, or add compute)"
    )
