"""One poll's worth of Triton data, reduced to what the derivations need.

A `Snapshot` is built by pure functions from already-fetched payloads and never changes after.
A part whose fetch failed is `None`, so derivations can tell "Triton said zero" from "we could
not ask". Per-model values are keyed by `(model, version)`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from sys import intern
from typing import TYPE_CHECKING, Any

from triton_sre import conventions as c
from triton_sre.exporter.capacity import FAMILIES as CAPACITY_FAMILIES
from triton_sre.exporter.capacity import CapacityReading, MemoryEntry, memory_usage_from_json

if TYPE_CHECKING:
    from triton_sre.triton.exposition import Sample

ModelKey = tuple[str, str]

# A model's values in one snapshot are a tuple in this order (NaN: not exported), not a dict:
# a 1,000-model window holds tens of thousands of them.
ROW_FAMILIES = (*c.PER_MODEL_COUNTERS, *c.PER_MODEL_GAUGES)
FAMILY_INDEX = {name: i for i, name in enumerate(ROW_FAMILIES)}
_PER_MODEL = frozenset(ROW_FAMILIES)
_ABSENT = float("nan")
CounterRow = tuple[float, ...]


def counter_row(values: Mapping[str, float]) -> CounterRow:
    """A row from family -> value (families not given are absent)."""
    return tuple(values.get(name, _ABSENT) for name in ROW_FAMILIES)


def row_value(row: CounterRow, family: str) -> float:
    """One family's value in a row (NaN when Triton did not export it)."""
    return row[FAMILY_INDEX[family]]


def keep_family(name: str) -> bool:
    """The metric families a snapshot uses; everything else is skipped while parsing."""
    return name in _PER_MODEL or name.startswith(c.NV_GPU_PREFIX) or name in CAPACITY_FAMILIES


@dataclass(frozen=True, slots=True)
class ModelStats:
    """From `/v2/models/stats`: cumulative, per model version."""

    inference_count: float = 0.0
    execution_count: float = 0.0
    # Σ over batch_stats of compute_input + compute_infer + compute_output ns: counts a batch once.
    execution_compute_ns: float = 0.0
    # batch size -> number of executions of that size (compute_infer.count)
    executions_by_batch_size: Mapping[int, float] = field(default_factory=dict)
    memory_usage: tuple[MemoryEntry, ...] = ()  # (type, id, byte_size) from `memory_usage`


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """One row of `POST /v2/repository/index`."""

    name: str
    version: str
    state: str
    reason: str


@dataclass(frozen=True, slots=True)
class ModelConfigSummary:
    """The parts of a model's config the derivations use."""

    max_batch_size: int
    dynamic_batching: bool


@dataclass(frozen=True, slots=True)
class Snapshot:
    taken_at: float  # wall-clock seconds (time.time()) when the poll started
    counters: Mapping[ModelKey, CounterRow] | None  # None: metrics fetch failed
    gpu_uuids: frozenset[str] | None
    stats: Mapping[ModelKey, ModelStats] | None  # None: stats fetch failed
    index: Sequence[IndexEntry] | None  # None: index fetch failed
    configs: Mapping[str, ModelConfigSummary] = field(default_factory=dict)
    capacity: CapacityReading | None = None  # None: metrics fetch failed (or not read)


def counters_from_samples(
    samples: Iterable[Sample],
) -> tuple[dict[ModelKey, CounterRow], frozenset[str]]:
    """Per-model counter values and the GPUs seen.

    Triton exports per-model families on GPU models twice, with and without `gpu_uuid`. The
    series without it is the model total; per-GPU series are summed only when no total exists
    (older servers), so nothing is counted twice. `nv_inference_request_failure` is summed over
    its `reason` label.
    """
    totals: dict[ModelKey, dict[str, float]] = {}
    per_gpu: dict[ModelKey, dict[str, float]] = {}
    gpus: set[str] = set()
    # Label sets repeat across families (the parser shares their tuples): resolve each once.
    resolved: dict[tuple, tuple[ModelKey | None, str | None]] = {}
    for sample in samples:
        name = sample.name
        labels = sample.labels
        where = resolved.get(labels)
        if where is None:
            found = dict(labels)
            model = found.get(c.LABEL_MODEL)
            key = (intern(model), intern(found.get(c.LABEL_VERSION, ""))) if model is not None else None
            where = resolved[labels] = (key, found.get(c.LABEL_GPU_UUID))
        key, uuid = where
        if name in _PER_MODEL:
            if key is None:
                continue
            values = (per_gpu if uuid else totals).setdefault(key, {})
            values[name] = values.get(name, 0.0) + sample.value
        elif uuid and name.startswith(c.NV_GPU_PREFIX):
            gpus.add(uuid)
    for key, gpu_values in per_gpu.items():
        values = totals.setdefault(key, {})
        for name, value in gpu_values.items():
            values.setdefault(name, value)
    return {key: counter_row(values) for key, values in totals.items()}, frozenset(gpus)


def _num(value: Any) -> float:
    """A JSON number as float; anything else (missing, null, text, bool) counts as 0."""
    if type(value) is int or type(value) is float:
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return 0.0
    return 0.0


def _ns(stage: Any) -> float:
    try:
        return _num(stage["ns"])
    except (KeyError, TypeError):
        return 0.0


def _count(stage: Any) -> float:
    try:
        return _num(stage["count"])
    except (KeyError, TypeError):
        return 0.0


def stats_from_json(model_stats: Iterable[Any]) -> dict[ModelKey, ModelStats]:
    """`model_stats` of `/v2/models/stats`, leniently: odd entries are skipped, missing numbers are 0."""
    result: dict[ModelKey, ModelStats] = {}
    for entry in model_stats:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            continue
        compute_ns = 0.0
        by_size: dict[int, float] = {}
        batches = entry.get("batch_stats")
        for batch in batches if isinstance(batches, list) else ():
            if not isinstance(batch, dict):
                continue
            compute_ns += _ns(batch.get("compute_input")) + _ns(batch.get("compute_infer"))
            compute_ns += _ns(batch.get("compute_output"))
            size = int(_num(batch.get("batch_size")))
            by_size[size] = by_size.get(size, 0.0) + _count(batch.get("compute_infer"))
        key = (intern(entry["name"]), intern(str(entry.get("version", ""))))
        result[key] = ModelStats(
            inference_count=_num(entry.get("inference_count")),
            execution_count=_num(entry.get("execution_count")),
            execution_compute_ns=compute_ns,
            executions_by_batch_size=by_size,
            memory_usage=memory_usage_from_json(entry.get(c.STATS_MEMORY_USAGE)),
        )
    return result


def index_from_json(entries: Iterable[Any]) -> list[IndexEntry]:
    """Rows of the repository index; never-loaded models have no version or state (-> UNKNOWN)."""
    rows = []
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            continue
        state = entry.get("state")
        rows.append(
            IndexEntry(
                name=intern(entry["name"]),
                version=intern(str(entry.get("version", "") or "")),
                state=state if state in c.MODEL_STATES else c.STATE_UNKNOWN,
                reason=str(entry.get("reason", "") or ""),
            )
        )
    return rows


def config_summary(config: Mapping[str, Any]) -> ModelConfigSummary:
    """What derivations need from `/v2/models/<m>/config`."""
    return ModelConfigSummary(
        max_batch_size=int(_num(config.get("max_batch_size"))),
        dynamic_batching=isinstance(config.get("dynamic_batching"), dict),
    )
