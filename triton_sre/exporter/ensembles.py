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

from collections.abc import Iterable, Mapping, Sequence

from triton_sre.exporter.snapshot import ModelConfigSummary, ModelKey

StageSeconds = Mapping[str, float]


StepIndex = Mapping[tuple[str, str], Sequence[ModelKey]]


def step_index(keys: Iterable[ModelKey]) -> dict[tuple[str, str], list[ModelKey]]:
    """(model, namespace) -> its versions' keys: built once a poll, so each step of each ensemble is
    found without scanning every model of the fleet."""
    index: dict[tuple[str, str], list[ModelKey]] = {}
    for key in keys:
        index.setdefault((key[0], key[2] if len(key) > 2 else ""), []).append(key)
    return index


def _step_key(candidates: Sequence[ModelKey], version: int) -> ModelKey | None:
    """The version of a step an ensemble calls: the one its config names, else (model_version -1)
    the highest numeric version with a split, as Triton picks the latest."""
    if version >= 0:
        return next((k for k in candidates if k[1] == str(version)), None)
    numeric = [k for k in candidates if k[1].isdigit()]
    return max(numeric, key=lambda k: int(k[1]), default=None)


def step_splits(
    ensemble: ModelKey,
    config: ModelConfigSummary,
    splits: Mapping[ModelKey, StageSeconds],
    index: StepIndex | None = None,
) -> dict[str, dict[str, float]]:
    """step model -> stage -> seconds per request of `ensemble` spent there; a step with no split
    in the window (no request succeeded, its counters missing) is absent. `index`: `step_index(splits)`."""
    namespace = ensemble[2] if len(ensemble) > 2 else ""
    index = step_index(splits) if index is None else index
    out: dict[str, dict[str, float]] = {}
    for name, version in config.steps:
        key = _step_key(index.get((name, namespace), ()), version)
        if key is None:
            continue
        seen = out.setdefault(name, dict.fromkeys(splits[key], 0.0))
        for stage, seconds in splits[key].items():
            seen[stage] += seconds
    return out
