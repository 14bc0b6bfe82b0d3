"""lint's queue-delay budget with a spec of many latency SLOs (fleet34): the tightest SLO covering a
model, as the loop over every SLO in spec order found it, with each SLO's regex compiled once per spec
however many models ask (RE2's own cache holds 128 patterns: past that, every model compiled every
SLO's regex again)."""

from __future__ import annotations

import random
from typing import Any

import pytest
import re2

from triton_sre.lint import batching
from triton_sre.lint.issue import LintOptions


def reference(thresholds: tuple[tuple[str | None, float, float], ...], model: str) -> Any:
    """The spec-order loop the budget was before: the first SLO of the smallest allowance."""
    best = None
    for pattern, threshold, share in thresholds:
        if pattern is not None:
            try:
                if re2.fullmatch(pattern, model) is None:
                    continue
            except re2.error:
                continue
        allowed = threshold * share
        if best is None or allowed < best[1]:
            best = (threshold, allowed)
    return best


def test_the_tightest_covering_slo_in_spec_order_on_ties() -> None:
    thresholds = (
        ("a.*", 0.2, 0.5),  # 0.1 s allowed
        ("ab", 0.4, 0.25),  # 0.1 s too: a later SLO as tight as the first does not replace it
        (None, 1.0, 0.5),  # all models: 0.5 s
        ("(?<=a)b", 0.01, 0.5),  # lookbehind: Python's re reads it, RE2 refuses it, so it covers nothing
        ("b|c", 0.3, 0.1),  # 0.03 s
    )
    options = LintOptions(latency_thresholds=thresholds)
    assert batching.queue_budget(options, "ab") == (0.2, 0.1)
    assert batching.queue_budget(options, "b") == (0.3, pytest.approx(0.03))
    assert batching.queue_budget(options, "zz") == (1.0, 0.5)
    assert batching.queue_budget(LintOptions(latency_thresholds=thresholds[:2]), "zz") is None
    assert batching.queue_budget(LintOptions(), "ab") is None
    for model in ("ab", "b", "zz", "a", "c"):
        assert batching.queue_budget(options, model) == reference(thresholds, model)


def test_many_slos_same_budgets_each_regex_compiled_once(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(34)
    thresholds = tuple(
        (
            rng.choice([f"team{i % 40}_.*", f"m{i}|m{i + 1}", f"team{i % 7}_0.*", "x" if i % 97 else None]),
            rng.choice([0.1, 0.2, 0.5, 1.0]),
            rng.choice([0.25, 0.5]),
        )
        for i in range(300)
    )
    models = [f"team{j % 50}_{j:04d}" for j in range(200)] + [f"m{j}" for j in range(100)]
    expected = [reference(thresholds, m) for m in models]
    compiled: list[str] = []
    real = re2.compile

    def counting(pattern: Any, *args: Any, **kwargs: Any) -> Any:
        compiled.append(pattern)
        return real(pattern, *args, **kwargs)

    monkeypatch.setattr(re2, "compile", counting)
    batching._tightest_first.cache_clear()
    options = LintOptions(latency_thresholds=thresholds)
    assert [batching.queue_budget(options, m) for m in models] == expected
    assert len(set(expected)) > 3  # models of different budgets, not one answer for all
    assert len(compiled) == sum(p is not None for p, _, _ in thresholds)  # once each, not once per model
