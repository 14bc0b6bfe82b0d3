"""Batching settings: max_batch_size against dynamic_batching, preferred sizes and the queue delay.

Triton 2.51 fails on a negative max_batch_size and on a preferred batch size above it; it accepts
``dynamic_batching`` on a model with ``max_batch_size: 0`` (nothing ever batches) and any queue
delay, however long: those are warnings with their own runbooks.
"""

from __future__ import annotations

import functools
from typing import Any

import re2

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_reason
from triton_sre.lint.issue import Issue, LintOptions, config_issue
from triton_sre.lint.repository import ModelDir, Repository

__all__ = ["check", "queue_budget"]


def queue_budget(options: LintOptions, model: str) -> tuple[float, float] | None:
    """(latency threshold s, allowed queue seconds) of the tightest latency SLO covering ``model`` (the
    first in the spec among equally tight ones). The SLO's regex is matched by RE2, as Prometheus
    matches it: in linear time, whatever its shape."""
    for matcher, threshold, allowed in _tightest_first(options.latency_thresholds):
        if matcher is None or matcher.fullmatch(model) is not None:
            return threshold, allowed
    return None


@functools.lru_cache(maxsize=4)
def _tightest_first(
    thresholds: tuple[tuple[str | None, float, float], ...],
) -> tuple[tuple[Any, float, float], ...]:
    """(compiled RE2 regex or None for all models, threshold, allowed queue seconds) of each latency SLO,
    the smallest allowance first, in spec order among equal ones; a regex RE2 refuses (Python's re took
    it when the spec was read) matches nothing, as in Prometheus, and is left out. Each regex is compiled
    once per spec: `re2.fullmatch` keeps 128 compiled patterns, so asking every model each SLO's pattern
    compiled it again past 128 SLOs (2,000 models x 2,000 SLOs: 4 million compiles, 68 s)."""
    budgets = []
    for index, (pattern, threshold, share) in enumerate(thresholds):
        try:
            matcher = None if pattern is None else re2.compile(pattern)
        except re2.error:
            continue
        budgets.append((threshold * share, index, matcher, threshold))
    budgets.sort(key=lambda b: (b[0], b[1]))
    return tuple((matcher, threshold, allowed) for allowed, _, matcher, threshold in budgets)


def _model(model: ModelDir, options: LintOptions) -> list[Issue]:
    config = model.config
    if config is None:
        return []
    issues: list[Issue] = []
    mbs = int(config.max_batch_size)
    if mbs < 0:
        # Triton 2.51's words; the runbook is whatever the diagnosis engine makes of them.
        said = f"'max_batch_size' must be non-negative value for {model.name}"
        issues.append(
            config_issue(
                model,
                diagnose_reason(said),
                f"max_batch_size {mbs} is negative (Triton: {said})",
                "max_batch_size: 0 (no batching) or the largest batch the model accepts",
                "max_batch_size",
            )
        )
        return issues
    if not config.HasField("dynamic_batching"):
        return issues
    dyn = config.dynamic_batching
    if mbs == 0:
        issues.append(
            config_issue(
                model,
                c.RUNBOOK_LINT_DYNAMIC_BATCHING_UNUSED,
                "dynamic_batching is set but max_batch_size is 0: Triton accepts it and never batches",
                "set max_batch_size to the largest batch the model takes (and drop the batch dimension "
                "from dims), or remove dynamic_batching",
                "dynamic_batching",
                severity=c.IMPACT_WARNING,
            )
        )
    else:
        too_big = [int(p) for p in dyn.preferred_batch_size if p > mbs]
        if too_big:
            said = f"dynamic batching preferred size must be <= max batch size for {model.name}"
            issues.append(
                config_issue(
                    model,
                    diagnose_reason(said),
                    f"preferred_batch_size {', '.join(map(str, too_big))} > max_batch_size {mbs} "
                    f"(Triton: {said})",
                    f"keep every preferred_batch_size <= {mbs}",
                    "dynamic_batching.preferred_batch_size",
                )
            )
    budget = queue_budget(options, model.name)
    delay_s = int(dyn.max_queue_delay_microseconds) / 1e6
    if budget is not None and delay_s > budget[1]:
        threshold, allowed = budget
        issues.append(
            config_issue(
                model,
                c.RUNBOOK_LINT_QUEUE_DELAY_OVER_SLO,
                f"max_queue_delay_microseconds {int(dyn.max_queue_delay_microseconds)} "
                f"({delay_s * 1000:g} ms) > {allowed * 1000:g} ms allowed for queueing "
                f"(latency SLO threshold {threshold * 1000:g} ms × queue_time_share)",
                f"max_queue_delay_microseconds <= {int(allowed * 1e6)}",
                "dynamic_batching.max_queue_delay_microseconds",
                "dynamic_batching",
                severity=c.IMPACT_WARNING,
            )
        )
    return issues


def check(repo: Repository, options: LintOptions) -> list[Issue]:
    return [issue for model in repo.models.values() for issue in _model(model, options)]
