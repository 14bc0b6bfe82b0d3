"""The spec's alert thresholds: its ``operational:`` and ``llm:`` sections -> immutable models.

Errors are `ConfigError`s that `slo.spec_from_mapping` reports as the spec's `SpecError`, with the
file and the field named.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from triton_sre import conventions as c
from triton_sre.checks import ConfigError, check_keys, check_number, check_positive_int
from triton_sre.durations import format_duration, parse_duration
from triton_sre.redact import bounded

__all__ = ["OPERATIONAL_KEYS", "LLMAlerting", "Operational", "parse_llm_alerting", "parse_operational"]


@dataclass(frozen=True)
class Operational:
    """Thresholds of the operational alerts."""

    queue_time_threshold_s: float = 1.0  # TritonQueueTimeHigh for models no latency SLO covers
    min_request_rate: float = 0.1  # requests/s a model needs for queue/batching alerts
    batching_ratio_max: float = 1.1  # TritonBatchingIneffective: inferences per execution below this
    pending_requests: int = 10  # TritonPendingRequestsGrowing: backlog never below this for 10m
    gpu_memory_ratio: float = 0.9  # TritonGPUMemoryNearLimit
    startup_probe_budget_s: float = 120.0  # the startup probe's failureThreshold x periodSeconds
    load_slow_share: float = 0.5  # TritonModelLoadSlow: a load longer than this share of the budget


@dataclass(frozen=True)
class LLMAlerting:
    """Thresholds of the LLM alerts (spec key `llm`)."""

    kv_cache_saturated_ratio: float = c.LLM_KV_SATURATED_RATIO  # TritonLLMKVCacheSaturated ...
    saturated_for: str = c.LLM_SATURATED_FOR  # ... and how long requests must wait (both alerts)


OPERATIONAL_KEYS = {
    "queue_time_threshold",
    "min_request_rate",
    "batching_ratio_max",
    "pending_requests",
    "gpu_memory_ratio",
    "startup_probe_budget",
    "load_slow_share",
}


def parse_operational(raw: Any, where: str) -> Operational:
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: expected a mapping")
    check_keys(where, raw, OPERATIONAL_KEYS)
    d = Operational()

    def seconds(key: str, default: float) -> float:
        return parse_duration(raw[key], f"{where}.{key}") if key in raw else default

    def share(key: str, default: float) -> float:  # a ratio in (0, 1]
        return check_number(f"{where}.{key}", raw.get(key, default), low=0, high=1, low_inclusive=False)

    return Operational(
        queue_time_threshold_s=seconds("queue_time_threshold", d.queue_time_threshold_s),
        min_request_rate=check_number(
            f"{where}.min_request_rate",
            raw.get("min_request_rate", d.min_request_rate),
            low=0,
            high=c.MAX_REQUEST_RATE,
        ),
        batching_ratio_max=check_number(
            f"{where}.batching_ratio_max",
            raw.get("batching_ratio_max", d.batching_ratio_max),
            low=1,
            low_inclusive=False,
        ),
        pending_requests=check_positive_int(
            f"{where}.pending_requests", raw.get("pending_requests", d.pending_requests)
        ),
        gpu_memory_ratio=share("gpu_memory_ratio", d.gpu_memory_ratio),
        startup_probe_budget_s=_at_most_a_day(
            seconds("startup_probe_budget", d.startup_probe_budget_s), raw, where
        ),
        load_slow_share=share("load_slow_share", d.load_slow_share),
    )


def _at_most_a_day(budget_s: float, raw: Mapping[str, Any], where: str) -> float:
    """The startup-probe budget sizes the default model load time (autoscale_spec.py): a day at most."""
    if budget_s > c.MAX_LOAD_TIME_S:
        got = bounded(raw["startup_probe_budget"])
        raise ConfigError(f"{where}.startup_probe_budget: must be at most 1d, got {got}")
    return budget_s


def parse_llm_alerting(raw: Any, where: str) -> LLMAlerting:
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: expected a mapping")
    check_keys(where, raw, {"kv_cache_saturated_ratio", "saturated_for"})
    d = LLMAlerting()
    ratio = check_number(
        f"{where}.kv_cache_saturated_ratio",
        raw.get("kv_cache_saturated_ratio", d.kv_cache_saturated_ratio),
        low=0,
        high=1,
        low_inclusive=False,
    )
    seconds = parse_duration(raw.get("saturated_for", d.saturated_for), f"{where}.saturated_for")
    if seconds % 60:
        got = raw["saturated_for"]
        raise ConfigError(f"{where}.saturated_for: must be a whole number of minutes, got {bounded(got)}")
    return LLMAlerting(kv_cache_saturated_ratio=ratio, saturated_for=format_duration(seconds))
