"""Capacity: per-model memory, load times, memory headroom, how many more models fit, energy cost.

Pure, like `snapshot` and `derive`: inputs are already-fetched samples, statistics entries and
index rows. Triton's facts used here (read from triton-inference-server/core):

- `GET /v2/models/stats` carries `memory_usage` per model version (23.06+): a list of
  `{type: CPU|CPU_PINNED|GPU, id, byte_size}`; `id` is the memory type id (the CUDA device for
  GPU). Backends fill it where they can (ONNX Runtime, TensorRT); the Python backend leaves it empty.
- GPU families carry `gpu_uuid` only; per-model families on GPU models are exported with and
  without `gpu_uuid` (an instance's executions on its GPU's series), so the labelled series say
  which GPUs a model runs on.
- `nv_model_load_duration_secs{model,version}` exists from 24.11; before, a load is only visible
  as repository-index states (LOADING -> READY), observed here at the poll interval.
- Triton exports no GPU families on MIG-enabled GPUs or when another DCGM agent holds the GPU
  (server #5324): that is reported as `triton_sre_gpu_metrics_missing 1`, never as zeros.

Bad numbers (NaN, infinities, negatives, used > total) count as missing: no output is NaN or negative.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from triton_sre import conventions as c
from triton_sre.exporter.series import SeriesWindow

if TYPE_CHECKING:
    from triton_sre.config import CapacitySettings
    from triton_sre.exporter.snapshot import IndexEntry, ModelStats, Snapshot
    from triton_sre.triton.exposition import Sample

ModelKey = tuple[str, str]
# One memory_usage entry: (type, id, byte_size)
MemoryEntry = tuple[str, int, float]

GPU_FAMILIES = frozenset(
    {
        c.NV_GPU_UTILIZATION,
        c.NV_GPU_MEMORY_TOTAL_BYTES,
        c.NV_GPU_MEMORY_USED_BYTES,
        c.NV_GPU_POWER_USAGE,
        c.NV_GPU_POWER_LIMIT,
        c.NV_ENERGY_CONSUMPTION,
    }
)
HOST_FAMILIES = frozenset({c.NV_CPU_UTILIZATION, c.NV_CPU_MEMORY_TOTAL_BYTES, c.NV_CPU_MEMORY_USED_BYTES})
# The per-model family whose gpu_uuid-labelled copies say where a model runs.
PLACEMENT_FAMILY = c.NV_REQUEST_SUCCESS
FAMILIES = GPU_FAMILIES | HOST_FAMILIES | {c.NV_MODEL_LOAD_DURATION_SECS}
WATCHED = FAMILIES | {PLACEMENT_FAMILY}  # every sample name `CapacityWatch` records
ENERGY = c.NV_ENERGY_CONSUMPTION


def valid(value: Any) -> float | None:
    """A finite, non-negative number, else None (missing)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    if not math.isfinite(value) or value < 0:
        return None
    return value


# -- reading ------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class CapacityReading:
    """What one scrape of Triton's metrics says about capacity."""

    gpus: Mapping[str, Mapping[str, float]]  # gpu_uuid -> family -> value (valid values only)
    host: Mapping[str, float]  # nv_cpu_* family -> value
    load_seconds: Mapping[ModelKey, float]  # Triton's nv_model_load_duration_secs
    placement: Mapping[ModelKey, frozenset[str]]  # model version -> GPUs its metrics are labelled with


class CapacityWatch:
    """Records the capacity families from a sample stream while passing every sample on.

    Wraps the iterator `metricsfold.counters_from_samples` consumes, so Triton's text is parsed once.
    """

    def __init__(self) -> None:
        self._gpus: dict[str, dict[str, float]] = {}
        self._host: dict[str, float] = {}
        self._load: dict[ModelKey, float] = {}
        self._placement: dict[ModelKey, set[str]] = {}

    def watch(self, samples: Iterable[Sample]) -> Iterator[Sample]:
        for sample in samples:
            if sample.name in WATCHED:
                self.offer(sample)
            yield sample

    def offer(self, sample: Sample) -> None:
        """Record one sample of a `WATCHED` family (the caller filters, in its own loop)."""
        self._record(sample.name, sample.labels, sample.value)

    def _record(self, name: str, labels: Iterable[tuple[str, str]], value: float) -> None:
        found = dict(labels)
        uuid = found.get(c.LABEL_GPU_UUID)
        model = found.get(c.LABEL_MODEL)
        key = (model, found.get(c.LABEL_VERSION, "")) if model is not None else None
        if name == PLACEMENT_FAMILY:
            if key is not None and uuid:
                self._placement.setdefault(key, set()).add(uuid)
            return
        number = valid(value)
        if number is None:
            return
        if name in GPU_FAMILIES and uuid:
            self._gpus.setdefault(uuid, {})[name] = number
        elif name in HOST_FAMILIES and model is None:
            self._host[name] = number
        elif name == c.NV_MODEL_LOAD_DURATION_SECS and key is not None:
            self._load[key] = number

    @staticmethod
    def inert(name: str, labels: Iterable[tuple[str, str]]) -> bool:
        """True for a sample `offer` ignores whatever its value (a placement sample without a
        model or a GPU), so a caller may leave it out."""
        if name != PLACEMENT_FAMILY:
            return False
        found = dict(labels)
        return found.get(c.LABEL_MODEL) is None or not found.get(c.LABEL_GPU_UUID)

    def reading(self) -> CapacityReading:
        return CapacityReading(
            gpus=self._gpus,
            host=self._host,
            load_seconds=self._load,
            placement={key: frozenset(uuids) for key, uuids in self._placement.items()},
        )


def memory_usage_from_json(value: Any) -> tuple[MemoryEntry, ...]:
    """`memory_usage` of one statistics entry; odd entries and bad sizes are skipped."""
    entries: list[MemoryEntry] = []
    for item in value if isinstance(value, list) else ():
        if not isinstance(item, dict) or item.get("type") not in c.MEMORY_TYPES:
            continue
        size = item.get("byte_size")
        if isinstance(size, str):  # the gRPC JSON mapping writes uint64 as a string
            try:
                size = int(size)
            except ValueError:
                continue
        number = valid(size)
        device = item.get("id", 0)
        if number is None or isinstance(device, bool) or not isinstance(device, int):
            continue
        entries.append((item["type"], device, number))
    return tuple(entries)


# -- load time from index transitions -----------------------------------------------------------
class LoadTimer:
    """Measures loads from the repository index: first poll seeing LOADING -> first seeing READY.

    The true duration lies within one poll interval of the measurement. A load the exporter never
    saw in LOADING is not measured. Entries go when their model version leaves the index.
    """

    def __init__(self) -> None:
        self._loading_since: dict[ModelKey, float] = {}
        self._measured: dict[ModelKey, float] = {}
        self._last: Sequence[IndexEntry] | None = None

    def observe(self, taken_at: float, index: Sequence[IndexEntry] | None) -> None:
        # None: the index could not be read, nothing is known to have changed. The list observed
        # last time (snapshot.IndexReader's unchanged index): observing it again changes nothing.
        if index is None or index is self._last:
            return
        self._last = index
        seen: set[ModelKey] = set()
        for entry in index:
            key = (entry.name, entry.version)
            seen.add(key)
            if entry.state == c.STATE_LOADING:
                self._loading_since.setdefault(key, taken_at)
            elif entry.state == c.STATE_READY:
                started = self._loading_since.pop(key, None)
                if started is not None and taken_at >= started:
                    self._measured[key] = taken_at - started
            else:
                self._loading_since.pop(key, None)
        for gone in set(self._measured) - seen:
            del self._measured[gone]
        for gone in set(self._loading_since) - seen:
            del self._loading_since[gone]

    @property
    def measured(self) -> Mapping[ModelKey, float]:
        return dict(self._measured)


# -- derivation ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ModelMemory:
    model: str
    version: str
    kind: str  # CPU, CPU_PINNED or GPU
    device: str  # GPU uuid when known, else Triton's memory type id; "host" for CPU memory
    bytes: float


@dataclass(frozen=True, slots=True)
class DeviceCapacity:
    """One GPU (or the host): headroom and how many more models of the usual size fit."""

    device: str
    headroom_bytes: float | None
    resident: Mapping[ModelKey, float]  # model version -> bytes on this device
    models_that_fit: float | None
    energy_cost_per_hour: float | None = None
    # the next version to load beside the biggest one needs this much; the configured
    # capacity.model_bytes stands in on a GPU whose models' backends report no memory
    largest_model_bytes: float | None = None


@dataclass(frozen=True, slots=True)
class Capacity:
    memory: Sequence[ModelMemory] = ()
    load_seconds: Mapping[ModelKey, float] = field(default_factory=dict)
    gpus: Sequence[DeviceCapacity] = ()
    host: DeviceCapacity | None = None
    gpu_metrics_missing: bool | None = None  # None: Triton's metrics could not be read
    currency: str = "USD"
    model_energy_cost_per_hour: Mapping[ModelKey, float] = field(default_factory=dict)


def device_ids(
    memory: Mapping[ModelKey, tuple[MemoryEntry, ...]],
    placement: Mapping[ModelKey, frozenset[str]],
    gpus: Iterable[str],
) -> dict[int, str]:
    """CUDA device id -> gpu_uuid, where the data pins it down.

    Triton names GPUs by uuid in metrics and by CUDA id in `memory_usage`. On a one-GPU host
    id 0 is that GPU; otherwise a model with GPU memory on exactly one id whose metrics carry
    exactly one uuid ties the two. Ids tied to two different uuids stay unknown.
    """
    known = sorted(set(gpus))
    if len(known) == 1:
        return {0: known[0]}
    pairs: dict[int, set[str]] = {}
    for key, entries in memory.items():
        ids = {device for kind, device, _ in entries if kind == c.MEMORY_TYPE_GPU}
        uuids = placement.get(key, frozenset())
        if len(ids) == 1 and len(uuids) == 1:
            pairs.setdefault(next(iter(ids)), set()).update(uuids)
    return {device: next(iter(uuids)) for device, uuids in pairs.items() if len(uuids) == 1}


def fit(headroom: float | None, sizes: Iterable[float], configured: float | None) -> float | None:
    """Whole models of the median resident size (or the configured size) that fit in `headroom`."""
    if headroom is None:
        return None
    positive = [s for s in sizes if s > 0]
    size = statistics.median(positive) if positive else configured
    if not size or size <= 0:
        return None
    return float(math.floor(headroom / size))


def largest_model(sizes: Iterable[float], configured: float | None) -> float | None:
    """The largest reported resident size; else the configured size (models placed, none sized)."""
    positive = [s for s in sizes if s > 0]
    if positive:
        return max(positive)
    return configured if configured and configured > 0 else None


def headroom(total: float | None, used: float | None) -> float | None:
    """total - used; missing when either is missing, total is 0 or used exceeds total."""
    if total is None or used is None or total <= 0 or used > total:
        return None
    return total - used


def energy_rows(reading: CapacityReading) -> dict[str, tuple[float]]:
    """The GPUs' energy counters (joules) of one reading, as the window's `SeriesWindow` takes them."""
    return {uuid: (values[ENERGY],) for uuid, values in reading.gpus.items() if ENERGY in values}


def gpu_watts(energy: SeriesWindow, uuids: Sequence[str]) -> dict[str, float]:
    """Average power per GPU over the window: its energy counter's increase (a drop is a reset)
    over the time between its first and newest observations; none below two observations."""
    increases, first, newest = energy.reads_of(list(uuids))
    return {
        uuid: float(joules[0] / (end[0] - start[0]))
        for uuid, joules, start, end in zip(uuids, increases, first, newest, strict=True)
        if end[0] > start[0]  # NaN (not observed) compares false
    }


def derive_capacity(
    snapshots: Sequence[Snapshot],
    settings: CapacitySettings,
    measured_loads: Mapping[ModelKey, float],
    *,
    kwh_price: float | None = None,
    currency: str = "USD",
    compute_seconds: Mapping[ModelKey, float] | None = None,
) -> Capacity:
    """Capacity over a list of snapshots (oldest first; tests and tools): what `capacity_from`
    gives for the exporter's window holding them."""
    energy = SeriesWindow((0,))
    latest: CapacityReading | None = None
    for snapshot in snapshots:
        if snapshot.capacity is not None:
            energy.add(snapshot.taken_at, energy_rows(snapshot.capacity))
            latest = snapshot.capacity
    latest_stats = next((s.stats for s in reversed(snapshots) if s.stats is not None), None)
    watts = gpu_watts(energy, sorted(latest.gpus)) if latest else {}
    return capacity_from(
        latest,
        latest_stats,
        watts,
        settings,
        measured_loads,
        kwh_price=kwh_price,
        currency=currency,
        compute_seconds=compute_seconds,
    )


def capacity_from(
    latest: CapacityReading | None,
    latest_stats: Mapping[ModelKey, ModelStats] | None,
    watts: Mapping[str, float],
    settings: CapacitySettings,
    measured_loads: Mapping[ModelKey, float],
    *,
    kwh_price: float | None = None,
    currency: str = "USD",
    compute_seconds: Mapping[ModelKey, float] | None = None,
) -> Capacity:
    """Capacity from the window's latest reading and statistics and each GPU's average power.
    `compute_seconds` (model -> execution seconds in the window) turns on charging each GPU's
    energy to its models by their share of compute."""
    memory = {key: st.memory_usage for key, st in (latest_stats or {}).items() if st.memory_usage}

    loads = dict(measured_loads)
    if latest is not None:
        loads.update(latest.load_seconds)  # Triton's own figure wins

    gpu_uuids = sorted(latest.gpus) if latest else []
    placement = latest.placement if latest else {}
    ids = device_ids(memory, placement, gpu_uuids)

    rows: list[ModelMemory] = []
    per_device: dict[str, dict[ModelKey, float]] = {}
    host_resident: dict[ModelKey, float] = {}
    for key in sorted(memory):
        sums: dict[tuple[str, str], float] = {}
        for kind, device_id, size in memory[key]:
            device = ids.get(device_id, str(device_id)) if kind == c.MEMORY_TYPE_GPU else c.DEVICE_HOST
            sums[(kind, device)] = sums.get((kind, device), 0.0) + size
        for (kind, device), size in sorted(sums.items()):
            rows.append(ModelMemory(key[0], key[1], kind, device, size))
            if kind == c.MEMORY_TYPE_GPU:
                bucket = per_device.setdefault(device, {})
                bucket[key] = bucket.get(key, 0.0) + size
            else:
                host_resident[key] = host_resident.get(key, 0.0) + size

    gpus: list[DeviceCapacity] = []
    for uuid in gpu_uuids:
        values = latest.gpus[uuid] if latest else {}
        room = headroom(values.get(c.NV_GPU_MEMORY_TOTAL_BYTES), values.get(c.NV_GPU_MEMORY_USED_BYTES))
        resident = per_device.get(uuid, {})
        cost = watts[uuid] / 1000.0 * kwh_price if kwh_price is not None and uuid in watts else None
        placed_here = any(uuid in devices for devices in placement.values())
        gpus.append(
            DeviceCapacity(
                uuid,
                room,
                resident,
                fit(room, resident.values(), settings.model_bytes),
                cost,
                largest_model(resident.values(), settings.model_bytes if placed_here else None),
            )
        )

    host = None
    if latest is not None and latest.host:
        values = latest.host
        room = headroom(values.get(c.NV_CPU_MEMORY_TOTAL_BYTES), values.get(c.NV_CPU_MEMORY_USED_BYTES))
        host = DeviceCapacity(
            c.DEVICE_HOST, room, host_resident, fit(room, host_resident.values(), settings.model_bytes)
        )

    missing = None
    if latest is not None:
        gpu_evidence = settings.gpu_host or bool(placement) or bool(per_device)
        has_memory_family = any(c.NV_GPU_MEMORY_TOTAL_BYTES in v for v in latest.gpus.values())
        missing = gpu_evidence and not has_memory_family

    model_cost: dict[ModelKey, float] = {}
    if compute_seconds and kwh_price is not None:
        for gpu in gpus:
            if gpu.energy_cost_per_hour is None:
                continue
            here = {k: s for k, s in compute_seconds.items() if gpu.device in placement.get(k, ()) and s > 0}
            total = sum(here.values())
            for key, seconds in here.items():
                model_cost[key] = model_cost.get(key, 0.0) + gpu.energy_cost_per_hour * seconds / total

    return Capacity(
        memory=rows,
        load_seconds=loads,
        gpus=gpus,
        host=host,
        gpu_metrics_missing=missing,
        currency=currency,
        model_energy_cost_per_hour=model_cost,
    )
