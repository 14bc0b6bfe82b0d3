"""Pure: an ensemble's request time split by its steps (ensembles29).

Measured on the real Triton 2.51 (bench/bench_ensemble_steps.py, figures in bench/RESULTS.md): an
ensemble's own counters give its queue as the hand-off to its first step only, add its steps' compute
durations to its compute counters, and leave its steps' queue time in what the request duration leaves
over ("other"); its pending-requests gauge stays 0 while its steps queue. Which step queues is only in
the steps' own counters. So each step of an ensemble gets the step's own seconds per request in each
stage (queue, compute input/infer/output, other), times the number of times the ensemble's
`ensemble_scheduling` names it. A step shared with other callers (direct requests, another ensemble)
gives the average of all its requests: Triton does not count an ensemble's share apart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from triton_sre.exporter.snapshot import ModelConfigSummary, ModelKey

StageSeconds = Mapping[str, float]


def _step_key(keys: Sequence[ModelKey], name: str, version: int, namespace: str) -> ModelKey | None:
    """The version of step `name` an ensemble in `namespace` calls: the one its config names, else
    (model_version -1) the highest numeric version with a split, as Triton picks the latest."""
    candidates = [k for k in keys if k[0] == name and (k[2] if len(k) > 2 else "") == namespace]
    if version >= 0:
        return next((k for k in candidates if k[1] == str(version)), None)
    numeric = [k for k in candidates if k[1].isdigit()]
    return max(numeric, key=lambda k: int(k[1]), default=None)


def step_splits(
    ensemble: ModelKey, config: ModelConfigSummary, splits: Mapping[ModelKey, StageSeconds]
) -> dict[str, dict[str, float]]:
    """step model -> stage -> seconds per request of `ensemble` spent there; a step with no split
    in the window (no request succeeded, its counters missing) is absent."""
    namespace = ensemble[2] if len(ensemble) > 2 else ""
    keys = list(splits)
    out: dict[str, dict[str, float]] = {}
    for name, version in config.steps:
        key = _step_key(keys, name, version, namespace)
        if key is None:
            continue
        seen = out.setdefault(name, dict.fromkeys(splits[key], 0.0))
        for stage, seconds in splits[key].items():
            seen[stage] += seconds
    return out
