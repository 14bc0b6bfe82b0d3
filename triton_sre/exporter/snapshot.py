"""One poll's worth of Triton data, reduced to what the derivations need.

A `Snapshot` is built by pure functions from already-fetched payloads and never changes after.
A part whose fetch failed is `None`, so derivations can tell "Triton said zero" from "we could
not ask". Per-model values are keyed by `(model, version)`, and by `(model, version, namespace)` for
the /metrics series of a Triton run with model namespacing (two repositories may hold a model of the
same name: their counters must not be summed). The /metrics body's samples are folded into counter
rows by metricsfold.py; the HTTP API's JSON (statistics, repository index, model config) here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from sys import intern
from typing import Any

from triton_sre import conventions as c
from triton_sre.exporter.capacity import FAMILIES as CAPACITY_FAMILIES
from triton_sre.exporter.capacity import CapacityReading, MemoryEntry, memory_usage_from_json
from triton_sre.exporter.llm import LLMData, is_llm_family

# (model, version), or (model, version, namespace) when the series carries Triton's `namespace` label
ModelKey = tuple[str, ...]

# A model's values in one snapshot are a tuple in this order (NaN: not exported), not a dict:
# a 1,000-model window holds tens of thousands of them.
ROW_FAMILIES = (*c.PER_MODEL_COUNTERS, *c.PER_MODEL_GAUGES)
FAMILY_INDEX = {name: i for i, name in enumerate(ROW_FAMILIES)}
PER_MODEL = frozenset(ROW_FAMILIES)
_SURROGATE = re.compile("[\ud800-\udfff]")
_ABSENT = float("nan")
CounterRow = tuple[float, ...]
# Triton's counters and durations are uint64: a larger (or negative, or non-finite) value is not
# one Triton wrote, and near 1e308 the derivations' sums would overflow to inf and NaN.
MAX_VALUE = float(2**64)
_MAX_INT = 2**64
_COMPUTE_STAGES = ("compute_input", "compute_infer", "compute_output")
_SUCCESS = c.STATS_REQUEST_FIELDS[0]


class Problems:
    """Values a decoder rejected (non-finite, negative, too large, duplicate series): the caller
    counts them as parse errors of the target. The rejected value is treated as missing."""

    __slots__ = ("count", "first")

    def __init__(self) -> None:
        self.count = 0
        self.first = ""

    def add(self, what: str) -> None:
        if not self.count:
            self.first = what
        self.count += 1

    def __bool__(self) -> bool:
        return self.count > 0

    def extend(self, other: Problems) -> None:
        """Add `other`'s problems after these."""
        if not self.count:
            self.first = other.first
        self.count += other.count


def counter_row(values: Mapping[str, float]) -> CounterRow:
    """A row from family -> value (families not given are absent)."""
    return tuple(values.get(name, _ABSENT) for name in ROW_FAMILIES)


def row_value(row: CounterRow, family: str) -> float:
    """One family's value in a row (NaN when Triton did not export it)."""
    return row[FAMILY_INDEX[family]]


def keep_family(name: str) -> bool:
    """The metric families a snapshot uses; everything else is skipped while parsing."""
    return (
        name in PER_MODEL
        or name.startswith(c.NV_GPU_PREFIX)
        or is_llm_family(name)
        or name in CAPACITY_FAMILIES
    )


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
    # `inference_stats`: success count, then the ns of success (the request duration), queue,
    # compute_input, compute_infer, compute_output (`request_stats_from_json`); () when Triton gave none
    request_stats: tuple[float, ...] = ()


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
    ensemble: bool = False  # platform "ensemble": its statistics repeat its steps' compute time
    # dynamic_batching's max_queue_delay_microseconds (0 when the config omits it); None without a
    # dynamic batcher or when the value does not decode
    max_queue_delay_us: float | None = None
    # an ensemble's ensemble_scheduling steps in order: (step model, its model_version; -1 = latest)
    steps: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True, slots=True)
class Snapshot:
    taken_at: float  # seconds when the poll started: the wall clock, never going back (exporter timeline)
    counters: Mapping[ModelKey, CounterRow] | None  # None: metrics fetch failed
    gpu_uuids: frozenset[str] | None
    stats: Mapping[ModelKey, ModelStats] | None  # None: stats fetch failed
    index: Sequence[IndexEntry] | None  # None: index fetch failed
    configs: Mapping[str, ModelConfigSummary] = field(default_factory=dict)
    llm: LLMData | None = None  # the LLM backends' families (exporter/llm.py); None: not read
    capacity: CapacityReading | None = None  # None: metrics fetch failed (or not read)


def _num(value: Any, problems: Problems, what: str) -> float:
    """A JSON number as float. Missing, null or bool is 0 (proto3 JSON omits zeros); a number or
    numeric string that is negative, non-finite or above `MAX_VALUE`, or text that is not a
    number, is NaN (missing) and added to `problems`."""
    if type(value) is int or type(value) is float:
        number = float(value) if type(value) is float or abs(value) <= MAX_VALUE else math.inf
    elif isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            number = math.nan
    else:
        return 0.0
    if 0.0 <= number <= MAX_VALUE:
        return number
    problems.add(f"{what} = {value!r}"[:200])
    return math.nan


def _field(stage: Any, name: str, problems: Problems, what: str) -> float:
    if not isinstance(stage, dict):
        return 0.0
    return _num(stage.get(name), problems, what)


def stats_from_json(
    model_stats: Iterable[Any], problems: Problems | None = None
) -> dict[ModelKey, ModelStats]:
    """`model_stats` of `/v2/models/stats`, leniently: odd entries are skipped, missing numbers are
    0, invalid numbers are missing (NaN, skipped by the derivations) and added to `problems`."""
    problems = problems if problems is not None else Problems()
    result: dict[ModelKey, ModelStats] = {}
    for entry in model_stats:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            problems.add(_nameless("statistics entry", entry))
            continue
        name = _text(entry["name"], problems)
        compute_ns = 0.0
        by_size: dict[int, float] = {}
        batches = entry.get("batch_stats")
        for batch in batches if isinstance(batches, list) else ():
            if not isinstance(batch, dict):
                continue
            # Fastest path: the three stages, the size and the count as the plain integers
            # Triton writes (the same additions, in the same order, as the general path below).
            first, infer = batch.get("compute_input"), batch.get("compute_infer")
            last = batch.get("compute_output")
            if type(first) is dict and type(infer) is dict and type(last) is dict:
                a, b, d = first.get("ns"), infer.get("ns"), last.get("ns")
                size, count = batch.get("batch_size"), infer.get("count")
                if (
                    type(a) is int and type(b) is int and type(d) is int and type(size) is int
                    and type(count) is int
                    and 0 <= a <= _MAX_INT and 0 <= b <= _MAX_INT and 0 <= d <= _MAX_INT
                    and 0 <= size <= _MAX_INT and 0 <= count <= _MAX_INT
                ):
                    compute_ns += a
                    compute_ns += b
                    compute_ns += d
                    by_size[size] = by_size.get(size, 0.0) + float(count)
                    continue
            # Fast path for the plain integers Triton writes; anything else goes through `_num`
            # (which names the value in `problems`, so its message is only built then).
            for stage in _COMPUTE_STAGES:
                part = batch.get(stage)
                ns = part.get("ns") if type(part) is dict else None
                if type(ns) is int and 0 <= ns <= _MAX_INT:
                    compute_ns += ns
                else:
                    compute_ns += _field(part, "ns", problems, f"{name} {stage}.ns")
            size = batch.get("batch_size")
            if not (type(size) is int and 0 <= size <= _MAX_INT):
                size = _num(size, problems, f"{name} batch_size")
            infer = batch.get("compute_infer")
            count = infer.get("count") if type(infer) is dict else None
            if type(count) is int and 0 <= count <= _MAX_INT:
                count = float(count)
            else:
                count = _field(infer, "count", problems, f"{name} compute_infer.count")
            if size == size and count == count:  # neither is NaN
                by_size[int(size)] = by_size.get(int(size), 0.0) + count
        key = (intern(name), intern(_text(entry.get("version", ""), problems)))
        if key in result:
            problems.add(f"duplicate statistics entry {name!r} version {key[1]!r}")
            continue
        result[key] = ModelStats(
            inference_count=_num(entry.get("inference_count"), problems, f"{name} inference_count"),
            execution_count=_num(entry.get("execution_count"), problems, f"{name} execution_count"),
            execution_compute_ns=compute_ns,
            executions_by_batch_size=by_size,
            memory_usage=memory_usage_from_json(entry.get(c.STATS_MEMORY_USAGE)),
            request_stats=request_stats_from_json(entry.get(c.STATS_INFERENCE_STATS), problems, name),
        )
    return result


def request_stats_from_json(value: Any, problems: Problems, name: str) -> tuple[float, ...]:
    """`inference_stats` as (success count, success ns, queue ns, compute_input ns, compute_infer ns,
    compute_output ns): () when it is not an object; a missing field or number is 0 (proto3 JSON omits
    zeros), an invalid one NaN (missing) and added to `problems`."""
    if type(value) is not dict:
        return ()
    success = value.get(_SUCCESS)
    count = success.get("count") if type(success) is dict else None
    if not (type(count) is int and 0 <= count <= _MAX_INT):
        count = _field(success, "count", problems, f"{name} {_SUCCESS}.count")
    out = [float(count)]
    for part_name in c.STATS_REQUEST_FIELDS:
        part = value.get(part_name)
        ns = part.get("ns") if type(part) is dict else None
        # fast path for the plain integers Triton writes; `_num` names anything else in `problems`
        out.append(
            float(ns)
            if type(ns) is int and 0 <= ns <= _MAX_INT
            else _field(part, "ns", problems, f"{name} {part_name}.ns")
        )
    return tuple(out)


def _text(value: Any, problems: Problems) -> str:
    """A JSON string as exportable text: JSON may escape lone surrogates (``\\ud800``), which no
    UTF-8 exposition can carry; they become ``?`` and are added to `problems`."""
    text = value if isinstance(value, str) else str(value)
    if not text.isascii() and _SURROGATE.search(text):
        problems.add(f"text that is not valid Unicode: {text!r}"[:200])
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def _nameless(what: str, entry: Any) -> str:
    """The problem of an entry left out for want of a model name (Triton names every one)."""
    return f"{what} without a model name: {entry!r}"[:200]


def index_from_json(entries: Iterable[Any], problems: Problems | None = None) -> list[IndexEntry]:
    """Rows of the repository index; never-loaded models have no version or state (-> UNKNOWN)."""
    problems = problems if problems is not None else Problems()
    rows = []
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            problems.add(_nameless("repository index entry", entry))
            continue
        state = entry.get("state")
        if state is not None and not isinstance(state, str):  # absent: a model never loaded
            problems.add(f"repository index entry {entry['name']!r} with state {state!r}"[:200])
        rows.append(
            IndexEntry(
                name=intern(_text(entry["name"], problems)),
                version=intern(_text(entry.get("version", "") or "", problems)),
                state=state if state in c.MODEL_STATES else c.STATE_UNKNOWN,
                reason=_text(entry.get("reason", "") or "", problems),
            )
        )
    return rows


class IndexReader:
    """`index_from_json` for one poller: an index equal to the last one it read gives the same rows
    (the same list) without folding it again, and the same problems. The index rarely changes
    between polls, and the callers skip their own work on an unchanged list (`rows is last`).

    Equal JSON can differ in type (``1 == 1.0 == True``, which `_text` writes differently), so the
    shortcut is taken only when the last index's versions and reasons were all strings (or null
    or absent), as Triton writes them: no other value equals a string."""

    __slots__ = ("_problems", "_raw", "_rows")

    def __init__(self) -> None:
        self._raw: list[Any] | None = None  # the last index read, when the shortcut is safe
        self._rows: list[IndexEntry] = []
        self._problems = Problems()

    def __call__(self, entries: list[Any], problems: Problems) -> list[IndexEntry]:
        if self._raw is not None and entries == self._raw:
            problems.extend(self._problems)
            return self._rows
        found = Problems()
        self._rows = index_from_json(entries, found)
        self._problems = found
        problems.extend(found)
        self._raw = entries if all(_plain(entry) for entry in entries) else None
        return self._rows


def _plain(entry: Any) -> bool:
    if not isinstance(entry, dict):
        return True  # skipped whatever it equals
    version, reason = entry.get("version"), entry.get("reason")
    return (version is None or type(version) is str) and (reason is None or type(reason) is str)


def config_summary(config: Mapping[str, Any]) -> ModelConfigSummary:
    """What derivations need from `/v2/models/<m>/config`. Raises ValueError when max_batch_size
    is not a valid number: the exporter then knows no config for the model rather than a wrong one."""
    problems = Problems()
    raw = config.get("max_batch_size")
    size = _num(raw, problems, "max_batch_size")
    if not problems and (size != int(size) or not (raw is None or type(raw) in (int, float, str))):
        problems.add(f"max_batch_size = {raw!r}"[:200])  # 8.5, true, [8]: no int32 Triton writes
    if problems:
        raise ValueError(f"invalid {problems.first}")
    batcher = config.get("dynamic_batching")
    delay = None
    if isinstance(batcher, dict):  # a delay that does not decode is unknown, not the config's end
        delay = _num(batcher.get("max_queue_delay_microseconds"), Problems(), "max_queue_delay_microseconds")
    return ModelConfigSummary(
        max_batch_size=int(size),
        dynamic_batching=isinstance(batcher, dict),
        ensemble=config.get("platform") == c.PLATFORM_ENSEMBLE,
        max_queue_delay_us=None if delay is None or math.isnan(delay) else delay,
        steps=ensemble_steps(config.get("ensemble_scheduling")),
    )


def ensemble_steps(scheduling: Any) -> tuple[tuple[str, int], ...]:
    """`ensemble_scheduling.step`'s (model_name, model_version) pairs; a step whose name is not a
    non-empty string is left out, a version that is not an integer (JSON number or string) is -1."""
    steps = scheduling.get("step") if isinstance(scheduling, dict) else None
    found: list[tuple[str, int]] = []
    for step in steps if isinstance(steps, list) else ():
        name = step.get("model_name") if isinstance(step, dict) else None
        if not isinstance(name, str) or not name:
            continue
        version = step.get("model_version", -1)
        try:
            number = int(version) if isinstance(version, (int, str)) and not isinstance(version, bool) else -1
        except ValueError:
            number = -1
        found.append((intern(name), number))
    return tuple(found)
