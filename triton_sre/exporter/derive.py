"""Pure derivations over a window of snapshots: batching, stage split, cost, model states.

Everything here is a function of the snapshots alone, so the exported values do not depend on
when or how often Prometheus scrapes the exporter. Counter increases are computed as
Prometheus' `increase()` computes them, without extrapolation: over consecutive observations, a
value lower than the previous one is a counter reset (Triton restarted) and counts from zero.

Whatever the inputs, no derived value is NaN, infinite or negative, and every fraction is in
[0, 1]: an observation that is NaN, infinite or negative is skipped, and a result that is not a
finite non-negative number is not exported (None).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from triton_sre import conventions as c
from triton_sre.config import CapacitySettings
from triton_sre.diagnosis.reasons import failed_to_load
from triton_sre.exporter.capacity import Capacity, capacity_from, gpu_watts
from triton_sre.exporter.ensembles import step_index, step_splits
from triton_sre.exporter.llm import LLMDerivation, derive_llm_window
from triton_sre.exporter.snapshot import (
    IndexEntry,
    ModelConfigSummary,
    ModelKey,
    Snapshot,
)
from triton_sre.exporter.statsfallback import increases_of as fallback_increases
from triton_sre.exporter.statsfallback import source_keys
from triton_sre.exporter.window import Window
from triton_sre.pricing import Pricing

# Positions in window.COUNTED_FIELDS.
_INFERENCES, _EXECUTIONS, _REQUEST_US, _SUCCESS = range(4)
_STAGE_FIELDS = {stage: 4 + i for i, stage in enumerate(c.STAGE_COUNTERS)}


@dataclass(frozen=True, slots=True)
class ModelDerivation:
    model: str
    version: str
    batching_ratio: float | None = None
    batch_fill_ratio: float | None = None
    stage_seconds: Mapping[str, float] | None = None
    stage_fraction: Mapping[str, float] | None = None
    cost_per_hour: float | None = None
    cost_per_1k: float | None = None
    # where the batching ratio and the stage split came from: Triton's /metrics counters, or
    # /v2/models/stats while the window holds no metrics for the version (exporter/statsfallback.py)
    source: str = c.SOURCE_METRICS
    # Triton's model namespace (its `namespace` label, the repository path) when it runs with model
    # namespacing, "" without: two namespaces' models of one name are two derivations
    namespace: str = ""
    # an ensemble's: step model -> stage -> seconds per request spent in that step (exporter/ensembles.py)
    step_seconds: Mapping[str, Mapping[str, float]] | None = None


@dataclass(frozen=True, slots=True)
class ModelState:
    model: str
    version: str
    state: str
    runbook: str | None  # set for UNAVAILABLE models (not for a version unloaded on purpose)
    reason: str


@dataclass(frozen=True, slots=True)
class Derivation:
    window_seconds: float  # span actually covered: newest minus oldest snapshot used
    models: Sequence[ModelDerivation] = ()
    states: Sequence[ModelState] = ()
    executions_by_batch_size: Mapping[ModelKey, Mapping[int, float]] = field(default_factory=dict)
    configs: Mapping[str, ModelConfigSummary] = field(default_factory=dict)  # by model name
    currency: str = "USD"
    device_kind: str = "cpu"
    devices: int = 0
    server_cost_per_hour: float | None = None
    idle_fraction: float | None = None
    llm: Sequence[LLMDerivation] = ()  # LLM models (exporter/llm.py)
    llm_problems: Mapping[str, int] = field(default_factory=dict)  # LLM samples ignored, latest poll
    compute_seconds: Mapping[ModelKey, float] = field(default_factory=dict)  # execution time in window
    capacity: Capacity | None = None  # filled by the service (exporter/capacity.py)


def _finite(value: float | None) -> float | None:
    """`value` if it is a finite number >= 0, else None (not exported)."""
    return value if value is not None and 0.0 <= value < math.inf else None


def _fraction(value: float | None) -> float | None:
    """A share, clamped to [0, 1]; None when it is not a number."""
    return min(1.0, value) if _finite(value) is not None else None  # type: ignore[type-var]


def _ratio(numerator: float, denominator: float) -> float | None:
    if not denominator > 0 or not numerator >= 0:
        return None
    return _finite(numerator / denominator)


def stage_splits(
    deltas: np.ndarray, request_us: np.ndarray, success: np.ndarray
) -> list[tuple[dict, dict] | None]:
    """Average seconds per successful request in each stage, and each stage's share, of many
    model versions at once. `deltas` has one row per model version: Δ duration in µs of the stages
    of `c.STAGE_COUNTERS`, in order; `request_us` and `success` one value each. `other` is what the
    request duration leaves over, floored at 0. None for a row where no request succeeded or the
    figures are not finite (a tiny success count or huge durations: nothing meaningful to export),
    or where a stage or the request duration is NaN (not exported).
    Sums add left to right (tests/test_derive.py holds the one-row reference it equals bit for bit)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        seconds = np.where(deltas > 0.0, deltas, 0.0) / 1e6 / success[:, None]
        measured = seconds[:, 0]
        for column in range(1, seconds.shape[1]):
            measured = measured + seconds[:, column]
        other = request_us / 1e6 / success - measured
        seconds = np.column_stack((seconds, np.where(other > 0.0, other, 0.0)))
        total = seconds[:, 0]
        for column in range(1, seconds.shape[1]):
            total = total + seconds[:, column]
        fractions = np.where(total[:, None] > 0, np.minimum(1.0, seconds / total[:, None]), 0.0)
    usable = (
        (success > 0)
        & np.all((seconds >= 0.0) & (seconds < math.inf), axis=1)
        & (total < math.inf)
        & ~np.isnan(deltas).any(axis=1)  # a stage Triton did not export: no split, not a 0 share
        & ~np.isnan(request_us)
    )
    return [
        (dict(zip(c.STAGES, row, strict=True)), dict(zip(c.STAGES, shares, strict=True))) if ok else None
        for ok, row, shares in zip(usable.tolist(), seconds.tolist(), fractions.tolist(), strict=True)
    ]


def server_price(pricing: Pricing, gpus: int) -> float | None:
    """The server's price per hour: GPU-hour × GPUs seen, or the node-hour price on a CPU host."""
    if gpus > 0 and pricing.gpu_hour is not None:
        return pricing.gpu_hour * gpus
    if gpus == 0 and pricing.node_hour is not None:
        return pricing.node_hour
    return None


def derive(
    snapshots: Sequence[Snapshot],
    pricing: Pricing,
    diagnose: Callable[[str], str],
) -> Derivation:
    """All derived values over `snapshots` (oldest first; the caller chooses the window)."""
    window = Window()
    for snapshot in snapshots:
        window.add(snapshot)
    return derive_window(window, pricing, diagnose)


@dataclass(frozen=True, slots=True)
class CapacityInputs:
    """What the capacity figures need beyond the window: the `capacity:` settings and the load
    times measured from repository-index transitions (`capacity.LoadTimer`)."""

    settings: CapacitySettings
    measured_loads: Mapping[ModelKey, float] = field(default_factory=dict)


def derive_window(
    window: Window,
    pricing: Pricing,
    diagnose: Callable[[str], str],
    capacity: CapacityInputs | None = None,
) -> Derivation:
    """All derived values over the polls `window` holds; the capacity figures too when
    `capacity` is given (else `Derivation.capacity` is None)."""
    derivation = _derive_core(window, pricing, diagnose)
    if capacity is None:
        return derivation
    stats = window.latest_stats.stats if window.latest_stats is not None else None
    reading = window.latest_reading
    return replace(
        derivation,
        capacity=capacity_from(
            reading,
            stats,
            gpu_watts(window.energy, sorted(reading.gpus)) if reading is not None else {},
            capacity.settings,
            capacity.measured_loads,
            kwh_price=pricing.kwh,
            currency=pricing.currency,
            compute_seconds=derivation.compute_seconds if pricing.energy_by_model else None,
        ),
    )


def _derive_core(window: Window, pricing: Pricing, diagnose: Callable[[str], str]) -> Derivation:
    """Everything but capacity: batching, stages, cost, idle share, states, LLM figures."""
    counted = window.counters
    latest_metrics = window.latest_metrics
    latest_index = window.latest_index
    latest_stats = window.latest_stats
    newest = window.newest()
    configs: Mapping[str, ModelConfigSummary] = newest.configs if newest is not None else {}

    span = counted.span()
    gpu_uuids = latest_metrics.gpu_uuids if latest_metrics else None
    gpus = len(gpu_uuids or ())
    devices = gpus if gpus else pricing.cpu_execution_slots
    price = server_price(pricing, gpus)

    # Execution compute time per model (from /stats: a batch counted once). An ensemble's is its
    # steps' time again (Triton adds the steps' durations to the ensemble's statistics): left out,
    # or the same GPU time would be charged twice and the idle share would shrink.
    stats_span = window.compute.span()
    compute_s: dict[ModelKey, float] = {}
    if len(window.compute) >= 2 and latest_stats is not None and latest_stats.stats is not None:
        keys = list(latest_stats.stats)
        compute_s = dict(zip(keys, (window.compute.increases_of(keys)[:, 0] / 1e9).tolist(), strict=True))
        for key in [k for k in compute_s if (config := configs.get(k[0])) is not None and config.ensemble]:
            del compute_s[key]
    total_compute = sum(compute_s.values())
    idle = None
    if stats_span > 0 and devices > 0 and total_compute < math.inf:
        idle = _fraction(1.0 - min(1.0, total_compute / (stats_span * devices)))

    models: list[ModelDerivation] = []
    window_cost: dict[ModelKey, float] = {}  # attributed cost over the window, for LLM models
    metrics_keys = (latest_metrics.counters or {}) if latest_metrics else {}
    stats_keys = list(latest_stats.stats or ()) if latest_stats else []
    from_stats = source_keys(window.fallback, stats_keys, metrics_keys, len(counted))
    keys = sorted(metrics_keys)
    if from_stats:
        moved = set(from_stats)
        keys = [key for key in keys if key not in moved]
    # A family the body never carried in the window (an excerpt, an older release, a backend that
    # skips it) has no increase: NaN, so nothing derived from it is made up as 0.
    parts = [(keys, counted.increases_of(keys, unseen=math.nan), c.SOURCE_METRICS)]
    if from_stats:
        parts.append((from_stats, fallback_increases(window.fallback, from_stats), c.SOURCE_STATS))
    for part_keys, increases_all, source in parts:
        splits = stage_splits(
            increases_all[:, [_STAGE_FIELDS[stage] for stage in c.STAGE_COUNTERS]],
            increases_all[:, _REQUEST_US],
            increases_all[:, _SUCCESS],
        )
        for key, increases, split in zip(part_keys, increases_all.tolist(), splits, strict=True):
            inferences = increases[_INFERENCES]
            executions = increases[_EXECUTIONS]
            config = configs.get(key[0])
            # An ensemble has no batcher (its steps do): Triton counts one execution per request and
            # the request's rows as inferences (core's ensemble_scheduler.cc), so its ratio would be
            # rows per request, read as batching. None: no ratio, no fill.
            # Triton counts the execution of a batch whose requests all failed, and its inferences only
            # when they succeed (a raised error on every release; a returned one up to 2.46, measured
            # in tests/data/releases/): no successful inference is no ratio, not a ratio of 0.
            ensemble = config is not None and config.ensemble
            batching = None if ensemble or not inferences > 0 else _ratio(inferences, executions)
            fill = None
            if batching is not None and config is not None and config.max_batch_size > 0:
                fill = _fraction(batching / config.max_batch_size)
            cost_hour = cost_1k = None
            if price is not None and 0 < total_compute < math.inf and key in compute_s:
                share = min(1.0, compute_s[key] / total_compute)
                cost_hour = _finite(price * share)
                window_cost[key] = price * stats_span / 3600.0 * share
                if inferences > 0:
                    cost_1k = _finite(price * stats_span / 3600.0 * share / inferences * 1000.0)
            models.append(
                ModelDerivation(
                    model=key[0],
                    version=key[1],
                    batching_ratio=batching,
                    batch_fill_ratio=fill,
                    stage_seconds=split[0] if split else None,
                    stage_fraction=split[1] if split else None,
                    cost_per_hour=cost_hour,
                    cost_per_1k=cost_1k,
                    source=source,
                    namespace=key[2] if len(key) > 2 else "",
                )
            )
    if from_stats:
        models.sort(key=lambda m: (m.model, m.version, m.namespace))
    models = _with_steps(models, configs)

    return Derivation(
        window_seconds=span,
        models=models,
        states=model_states(latest_index.index if latest_index and latest_index.index else (), diagnose),
        executions_by_batch_size=(
            {k: v.executions_by_batch_size for k, v in latest_stats.stats.items()}
            if latest_stats and latest_stats.stats
            else {}
        ),
        configs=configs,
        currency=pricing.currency,
        device_kind="gpu" if gpus else "cpu",
        devices=devices,
        server_cost_per_hour=price,
        idle_fraction=idle,
        llm=derive_llm_window(latest_metrics.llm if latest_metrics else None, window.llm, window_cost),
        llm_problems=latest_metrics.llm.problems if latest_metrics and latest_metrics.llm else {},
        compute_seconds=compute_s,
    )


def _key(m: ModelDerivation) -> ModelKey:
    return (m.model, m.version, m.namespace) if m.namespace else (m.model, m.version)


def _with_steps(
    models: list[ModelDerivation], configs: Mapping[str, ModelConfigSummary]
) -> list[ModelDerivation]:
    """Each ensemble's derivation with its time by step, from its steps' stage splits (nothing built in a
    poll of a fleet without ensembles)."""
    if not any(config.ensemble and config.steps for config in configs.values()):
        return models
    splits = {_key(m): m.stage_seconds for m in models if m.stage_seconds is not None}
    index = step_index(splits)
    return [
        replace(m, step_seconds=step_splits(_key(m), config, splits, index) or None)
        if (config := configs.get(m.model)) is not None and config.ensemble and config.steps
        else m
        for m in models
    ]


def model_states(index: Iterable[IndexEntry], diagnose: Callable[[str], str]) -> list[ModelState]:
    """Each indexed model's state; UNAVAILABLE ones carry the diagnosed runbook id."""
    return [
        ModelState(
            model=entry.name,
            version=entry.version,
            state=entry.state,
            runbook=diagnose(entry.reason) if failed_to_load(entry.state, entry.reason) else None,
            reason=entry.reason,
        )
        for entry in index
    ]


class ReasonMemo:
    """`diagnose` asked once per distinct reason while the index keeps showing it.

    Every poll diagnoses every UNAVAILABLE version of the index; the diagnosis memo (repeats.py) keeps
    2,048 texts of at most 2,048 characters, so a fleet index with more distinct reasons (or a long
    Python traceback as a reason) was classified again at every poll: 3,334 distinct reasons, 10 ms
    each, made a 10,000-model poll take 35 s. This memo holds the answers of the reasons the last
    poll saw (`next_poll` forgets those it no longer shows): bounded by the index it serves."""

    def __init__(self, diagnose: Callable[[str], str]) -> None:
        self._diagnose = diagnose
        self._now: dict[str, str] = {}
        self._before: dict[str, str] = {}

    def __call__(self, reason: str) -> str:
        found = self._now.get(reason)
        if found is None:
            found = self._before.get(reason)
            if found is None:
                found = self._diagnose(reason)
            self._now[reason] = found
        return found

    def next_poll(self) -> None:
        """A new poll begins: answers the previous poll did not ask for are dropped."""
        self._before, self._now = self._now, {}
