"""The reference fold of a /metrics body: its samples placed per model version and summed into the
counter rows a `Snapshot` carries (`counters_from_samples`). Pure.

`SeriesPlacer` says where each sample goes: per model key, the series without `gpu_uuid` apart from
those of each GPU (`counters.fold_gpus` sums them), the GPUs the body's GPU-wide families name, a
series the body already held refused (`DuplicateSeries`), and past the body budget's model versions,
BudgetExceeded (triton/budget.py). Replay's plan (`replay.MetricsPlan`) places a body's values with
the same placer, so both folds agree on every series.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable
from sys import intern
from typing import TYPE_CHECKING, Generic, TypeVar

from triton_sre import conventions as c
from triton_sre.counters import fold_gpus
from triton_sre.exporter.snapshot import (
    MAX_VALUE,
    PER_MODEL,
    CounterRow,
    ModelKey,
    Problems,
    counter_row,
)
from triton_sre.triton.budget import BudgetExceeded

if TYPE_CHECKING:
    from triton_sre.triton.exposition import Labels, Sample

__all__ = [
    "DuplicateSeries",
    "SeriesPlace",
    "SeriesPlacer",
    "counters_from_samples",
    "repeated_series",
    "series_place",
]

_PLAIN_LABELS = frozenset({c.LABEL_MODEL, c.LABEL_VERSION, c.LABEL_NAMESPACE, c.LABEL_GPU_UUID})
V = TypeVar("V")

SeriesPlace = tuple[ModelKey | None, str | None, bool]


def series_place(labels: Labels) -> SeriesPlace:
    """Where a per-model sample's labels put it: (model key, or None without a `model` label;
    its gpu_uuid or None; True when it carries no label beyond model, version, namespace and gpu_uuid).
    A non-empty `namespace` (Triton's model namespacing) is the key's third part."""
    found = dict(labels)
    model = found.get(c.LABEL_MODEL)
    key: ModelKey | None = None
    if model is not None:
        namespace = found.get(c.LABEL_NAMESPACE)
        key = (intern(model), intern(found.get(c.LABEL_VERSION, "")))
        if namespace:
            key = (*key, intern(namespace))
    return key, found.get(c.LABEL_GPU_UUID), found.keys() <= _PLAIN_LABELS


def repeated_series(
    name: str, labels: Labels, plain: bool, values: Container[str], seen: set[tuple[str, Labels]]
) -> bool:
    """Whether a series was already in the body: a plain series when its family already has a
    value for its model (GPU) in `values`, any other one (failure `reason`) when in `seen`."""
    if plain:
        return name in values
    if (name, labels) in seen:
        return True
    seen.add((name, labels))
    return False


class DuplicateSeries(ValueError):
    """A per-model series the body already held (the first one wins)."""


class SeriesPlacer(Generic[V]):
    """Where each sample of one body goes, for the reference fold (`counters_from_samples`, `V`
    the values) and replay's plan (`replay.MetricsPlan`, `V` the value groups): per model, one
    dict family -> V for its series without gpu_uuid (`totals`) and one per GPU (`per_gpu`),
    which `counters.fold_gpus` sums; the GPUs the body's GPU-wide families name (`gpus`)."""

    __slots__ = ("_keys", "_max_keys", "_resolved", "_seen", "gpus", "per_gpu", "totals")

    def __init__(self, max_keys: int | None = None) -> None:
        """`max_keys`: distinct model versions allowed (BudgetExceeded past them); None: no limit."""
        self.totals: dict[ModelKey, dict[str, V]] = {}
        self.per_gpu: dict[tuple[ModelKey, str], dict[str, V]] = {}
        self.gpus: set[str] = set()
        # Series with labels beyond model/version/gpu_uuid (failure `reason`): checked for repeats
        # here; any other series is a repeat when its family already has a value for its model (GPU).
        self._seen: set[tuple[str, Labels]] = set()
        # Label sets repeat across families (the parser shares their tuples): resolve each once.
        self._resolved: dict[Labels, SeriesPlace] = {}
        self._keys: set[ModelKey] = set()
        self._max_keys = max_keys

    def values_for(self, name: str, labels: Labels) -> dict[str, V] | None:
        """The dict (family -> V) a sample's value goes in, or None: not a per-model family, or
        no `model` label. Raises DuplicateSeries for a per-model series already placed."""
        where = self._resolved.get(labels)
        if where is None:
            where = self._resolved[labels] = series_place(labels)
            if self._max_keys is not None and where[0] is not None:
                self._keys.add(where[0])
                if len(self._keys) > self._max_keys:
                    raise BudgetExceeded(c.BUDGET_MODEL_VERSIONS, self._max_keys, len(self._keys))
        key, uuid, plain = where
        if name not in PER_MODEL:
            if uuid and name.startswith(c.NV_GPU_PREFIX):
                self.gpus.add(uuid)
            return None
        if key is None:
            return None
        values = self.per_gpu.setdefault((key, uuid), {}) if uuid else self.totals.setdefault(key, {})
        if repeated_series(name, labels, plain, values, self._seen):
            raise DuplicateSeries(f"duplicate series {name}{dict(labels)}")
        return values


def counters_from_samples(
    samples: Iterable[Sample],
    problems: Problems | None = None,
    *,
    side: Callable[[Sample], None] | None = None,
    side_names: Container[str] = (),
    max_models: int | None = None,
) -> tuple[dict[ModelKey, CounterRow], frozenset[str]]:
    """Per-model counter values and the GPUs seen.

    Triton exports per-model families on GPU models with and without `gpu_uuid`, counting
    different things (`triton_sre.counters`): a model's value is the sum of its series.
    `nv_inference_request_failure` is summed over
    its `reason` label. A value that is negative, non-finite or above `MAX_VALUE`, and a series
    repeated in the payload (the first one wins), are left out and added to `problems`.

    Samples named in `side_names` are also handed to `side` (the LLM and capacity readers), in
    this one loop over the samples rather than through a generator per reader. Past `max_models`
    distinct model versions, BudgetExceeded (triton/budget.py).
    """
    problems = problems if problems is not None else Problems()
    placer: SeriesPlacer[float] = SeriesPlacer(max_models)
    for sample in samples:
        name = sample.name
        if name in side_names:
            side(sample)  # type: ignore[misc]
        try:
            values = placer.values_for(name, sample.labels)
        except DuplicateSeries as repeat:
            problems.add(str(repeat))
            continue
        if values is None:
            continue
        value = sample.value
        if not 0.0 <= value <= MAX_VALUE:  # also false for NaN
            problems.add(f"{name}{dict(sample.labels)} = {value!r}")
            continue
        values[name] = values.get(name, 0.0) + value
    per_gpu = ((key, values) for (key, _uuid), values in placer.per_gpu.items())
    folded = fold_gpus(placer.totals, per_gpu)
    return {key: counter_row(values) for key, values in folded.items()}, frozenset(placer.gpus)
