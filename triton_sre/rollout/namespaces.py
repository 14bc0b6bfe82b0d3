"""A side of a rollout comparison that sums several values of Triton's `namespace` label.

With `--model-namespacing=true` every per-model series carries `namespace="<repository path>"`
(tests/data/namespacing_2.51): two repositories holding a model of one name are two different models
with the same `model` and `version` labels. The continuous guard keeps the label (its rules sum
`by (…, namespace)`), but a side built from `--model M --baseline-version 1` (or a selector naming no
namespace) sums both models: a canary was judged against another repository's failing model and
passed (round sixteen, docs/failure-behaviour.md). `rollout check` reads which namespaces each side
served requests in and never passes a side that sums two; the bot's `/triton rollout <model>` judges
each namespace the model serves in on its own (live.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from triton_sre import conventions as c
from triton_sre.durations import format_duration
from triton_sre.prom import Prometheus
from triton_sre.promql import Matcher, counter_rate
from triton_sre.redact import printable
from triton_sre.rollout.model import Verdict
from triton_sre.rollout.sides import Side

__all__ = ["mixed_namespaces_note", "serving_namespaces", "side_namespaces", "with_namespaces"]


def serving_namespaces(prom: Prometheus, matchers: Sequence[Matcher], window_s: float) -> list[str]:
    """The values of `namespace` whose series `matchers` select served requests in the last `window_s`,
    sorted (none without model namespacing: the label is absent)."""
    rates = counter_rate(
        c.NV_REQUEST_SUCCESS, list(matchers), format_duration(window_s), (c.LABEL_NAMESPACE,)
    )
    names = {labels.get(c.LABEL_NAMESPACE, "") for labels, rate in prom.vector(rates) if rate > 0}
    return sorted(name for name in names if name)


def side_namespaces(prom: Prometheus, sides: tuple[Side, Side], window_s: float) -> tuple[list[str], ...]:
    """`serving_namespaces` of each side."""
    return tuple(serving_namespaces(prom, side.matchers, window_s) for side in sides)


def mixed_namespaces_note(verdict: Verdict, namespaces: Sequence[Sequence[str]]) -> str:
    """What to say of the sides that sum several namespaces ('' when none does)."""
    mixed = [
        f"{printable(side.label)} sums {len(names)} namespaces ({c.LABEL_NAMESPACE}: "
        f"{printable(', '.join(names))})"
        for side, names in zip((verdict.baseline, verdict.candidate), namespaces, strict=True)
        if len(names) > 1
    ]
    if not mixed:
        return ""
    return (
        f"{' and '.join(mixed)}: different models of one name (Triton's model namespacing), summed; "
        f'judge one with --baseline-selector and --candidate-selector naming {c.LABEL_NAMESPACE}="…"'
    )


def with_namespaces(verdict: Verdict, namespaces: Sequence[Sequence[str]]) -> Verdict:
    """The verdict with the note added to its reason; a pass on a side that sums several namespaces is
    inconclusive (its figures mix another model's), a fail stays a fail (rolling back is the safe side)."""
    note = mixed_namespaces_note(verdict, namespaces)
    if not note:
        return verdict
    judged = c.ROLLOUT_INCONCLUSIVE if verdict.verdict == c.ROLLOUT_PASS else verdict.verdict
    return dataclasses.replace(verdict, verdict=judged, reason=f"{verdict.reason}; {note}")
