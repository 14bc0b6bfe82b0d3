"""The figures a canary is judged on: what each measures, which way is worse, how its margin reads.

A leaf of the rollout package: the spec (spec.py, which checks each margin against its figure), the
verdict (model.py) and the generators (generate/rollout.py, k8s.py) read them.
"""

from __future__ import annotations

from dataclasses import dataclass

from triton_sre import conventions as c

__all__ = ["FIGURES", "GUARDED", "HIGHER", "LOWER", "Figure"]

HIGHER, LOWER = "higher", "lower"


@dataclass(frozen=True)
class Figure:
    name: str
    unit: str
    worse: str  # HIGHER or LOWER
    relative: bool  # margin relative to the baseline (else absolute)


FIGURES: tuple[Figure, ...] = (
    Figure(c.ROLLOUT_FIG_ERROR_RATIO, "ratio", HIGHER, False),
    Figure(c.ROLLOUT_FIG_LATENCY_P99, "s", HIGHER, True),
    Figure(c.ROLLOUT_FIG_LATENCY_P50, "s", HIGHER, True),
    Figure(c.ROLLOUT_FIG_QUEUE_SHARE, "ratio", HIGHER, False),
    Figure(c.ROLLOUT_FIG_COMPUTE_PER_INFERENCE, "s", HIGHER, True),
    Figure(c.ROLLOUT_FIG_BATCHING_RATIO, "x", LOWER, True),
    Figure(c.ROLLOUT_FIG_TTFT_P99, "s", HIGHER, True),
    Figure(c.ROLLOUT_FIG_TPOT_P99, "s", HIGHER, True),
)

# The figures every Triton model has (no LLM backend needed): what the continuous guard and the
# progressive-delivery templates judge; `rollout check` judges all of FIGURES that have data.
GUARDED: tuple[str, ...] = (
    c.ROLLOUT_FIG_ERROR_RATIO,
    c.ROLLOUT_FIG_LATENCY_P99,
    c.ROLLOUT_FIG_QUEUE_SHARE,
    c.ROLLOUT_FIG_COMPUTE_PER_INFERENCE,
    c.ROLLOUT_FIG_BATCHING_RATIO,
)
