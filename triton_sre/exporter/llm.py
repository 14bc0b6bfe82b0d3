"""LLM serving figures from the vLLM and TensorRT-LLM backends' families on Triton's /metrics.

Pure, like snapshot.py and derive.py: `LLMCollector` picks the backends' samples out of one
parse (per model and version, everything else passes through untouched) and `derive_llm`
turns a window of them into tokens per second, running and waiting requests, KV cache use,
window-average time to first token and time per output token, and cost per million tokens.

Sources, per model version, in order of preference (a backend reporting only some families
gets only the figures those families give):

* tokens: vLLM's `vllm:prompt_tokens_total` / `vllm:generation_tokens_total` counters, else
  the `_sum` of TensorRT-LLM's per-request `nv_llm_input_token_len` / `nv_llm_output_token_len`;
* running / waiting: vLLM's `vllm:num_requests_running` / `_waiting` gauges (older releases
  only), else TensorRT-LLM's `request_type="scheduled"` / `"waiting"`;
* KV cache: `vllm:gpu_cache_usage_perc` (0-1), else `kv_cache_block_type="fraction"`, else
  used / max blocks;
* TTFT and time per output token: the vLLM histograms' Δsum / Δcount over the window.

Bad input never crashes and never yields NaN or a negative value: a sample without a `model`
label, with a category label value the backend does not write, or with a non-finite value is
ignored and counted by kind, and so is a negative value; a histogram without its `+Inf` bucket
is ignored and counted.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from triton_sre import conventions as c
from triton_sre.exporter.series import SeriesWindow

if TYPE_CHECKING:
    from triton_sre.triton.exposition import Sample

ModelKey = tuple[str, str]
_NAN = float("nan")

# Fields of an LLM row; a row is a tuple in this order (NaN: not reported).
PROMPT_TOKENS = 0
GENERATION_TOKENS = 1
TTFT_SUM = 2
TTFT_COUNT = 3
TPOT_SUM = 4
TPOT_COUNT = 5
RUNNING = 6
WAITING = 7
KV_USAGE = 8
_FIELDS = 9
COUNTER_FIELDS = (PROMPT_TOKENS, GENERATION_TOKENS, TTFT_SUM, TTFT_COUNT, TPOT_SUM, TPOT_COUNT)  # windowed
LLMRow = tuple[float, ...]

_VLLM_COUNTERS = {c.VLLM_PROMPT_TOKENS: PROMPT_TOKENS, c.VLLM_GENERATION_TOKENS: GENERATION_TOKENS}
_VLLM_GAUGES = {c.VLLM_NUM_RUNNING: RUNNING, c.VLLM_NUM_WAITING: WAITING, c.VLLM_CACHE_USAGE: KV_USAGE}
# histogram family -> (field of its _sum, field of its _count)
_VLLM_LATENCY = {c.VLLM_TTFT_SECONDS: (TTFT_SUM, TTFT_COUNT), c.VLLM_TPOT_SECONDS: (TPOT_SUM, TPOT_COUNT)}
_TRT_TOKENS = {c.TRT_INPUT_TOKEN_LEN: PROMPT_TOKENS, c.TRT_OUTPUT_TOKEN_LEN: GENERATION_TOKENS}
_TRT_REQUEST_TYPES = frozenset({"active", "max", "scheduled", "context", "waiting"})
_TRT_KV_TYPES = frozenset({"max", "free", "used", "tokens_per", "reused", "fraction"})
_HISTOGRAMS = frozenset(_VLLM_LATENCY) | frozenset(_TRT_TOKENS)
_TRT_GAUGES = frozenset({c.TRT_REQUEST_METRICS, c.TRT_KV_CACHE_BLOCK_METRICS})
_SIMPLE = frozenset(_VLLM_COUNTERS) | frozenset(_VLLM_GAUGES) | _TRT_GAUGES
_SUFFIXES = ("_sum", "_count", "_bucket")
LLM_SAMPLE_NAMES: frozenset[str] = _SIMPLE | frozenset(h + s for h in _HISTOGRAMS for s in _SUFFIXES)


def is_llm_family(name: str) -> bool:
    """A sample name the LLM figures read (for the parser's `keep`)."""
    return name in LLM_SAMPLE_NAMES


@dataclass(frozen=True, slots=True)
class LLMData:
    """The LLM part of one snapshot: rows per model version and the samples ignored, by problem."""

    rows: Mapping[ModelKey, LLMRow] = field(default_factory=dict)
    problems: Mapping[str, int] = field(default_factory=dict)


class LLMCollector:
    """Collects the LLM samples of one parse; `tap` passes every other sample through."""

    def __init__(self) -> None:
        self._values: dict[ModelKey, dict[int, float]] = {}
        self._trt: dict[ModelKey, dict[tuple[str, str], float]] = {}
        self._hist: dict[tuple[str, ModelKey], dict[str, float]] = {}  # suffix -> value, "inf" -> 1
        self._problems: dict[str, int] = {}

    def tap(self, samples: Iterable[Sample]) -> Iterator[Sample]:
        names = LLM_SAMPLE_NAMES
        for sample in samples:
            if sample.name in names:
                self.add(sample)
            else:
                yield sample

    def _problem(self, kind: str) -> None:
        self._problems[kind] = self._problems.get(kind, 0) + 1

    def add(self, sample: Sample) -> None:
        """Record one LLM sample (ignored and counted when malformed)."""
        labels = dict(sample.labels)
        model = labels.get(c.LABEL_MODEL)
        if not model:
            self._problem(c.LLM_PROBLEM_NO_MODEL)
            return
        key = (model, labels.get(c.LABEL_VERSION, ""))
        name, value = sample.name, sample.value
        if name.endswith("_bucket") and name[:-7] in _HISTOGRAMS:
            le = labels.get(c.LABEL_LE, "")
            try:
                bound = float(le)
            except ValueError:
                self._problem(c.LLM_PROBLEM_UNKNOWN_LABEL)
                return
            if bound == math.inf and math.isfinite(value):
                self._hist.setdefault((name[:-7], key), {})["inf"] = 1.0
            return
        if not math.isfinite(value):
            self._problem(c.LLM_PROBLEM_NOT_FINITE)
            return
        if value < 0:
            self._problem(c.LLM_PROBLEM_NEGATIVE)
            return
        for suffix in ("_sum", "_count"):
            if name.endswith(suffix) and name[: -len(suffix)] in _HISTOGRAMS:
                self._hist.setdefault((name[: -len(suffix)], key), {}).setdefault(suffix, value)
                return
        if name in _VLLM_COUNTERS:
            self._values.setdefault(key, {}).setdefault(_VLLM_COUNTERS[name], value)
        elif name in _VLLM_GAUGES:
            self._values.setdefault(key, {}).setdefault(_VLLM_GAUGES[name], value)
        elif name == c.TRT_REQUEST_METRICS:
            kind = labels.get(c.TRT_LABEL_REQUEST_TYPE)
            if kind not in _TRT_REQUEST_TYPES:
                self._problem(c.LLM_PROBLEM_UNKNOWN_LABEL)
                return
            self._trt.setdefault(key, {}).setdefault((name, kind), value)
        elif name == c.TRT_KV_CACHE_BLOCK_METRICS:
            kind = labels.get(c.TRT_LABEL_KV_CACHE_BLOCK_TYPE)
            if kind not in _TRT_KV_TYPES:
                self._problem(c.LLM_PROBLEM_UNKNOWN_LABEL)
                return
            self._trt.setdefault(key, {}).setdefault((name, kind), value)

    def result(self) -> LLMData:
        values = {key: dict(v) for key, v in self._values.items()}
        for (family, key), parts in self._hist.items():
            if "_sum" not in parts and "_count" not in parts:
                continue  # buckets only: nothing to read
            if "inf" not in parts or "_sum" not in parts or "_count" not in parts:
                self._problem(c.LLM_PROBLEM_NO_INF_BUCKET)
                continue
            row = values.setdefault(key, {})
            if family in _VLLM_LATENCY:
                sum_field, count_field = _VLLM_LATENCY[family]
                row[sum_field], row[count_field] = parts["_sum"], parts["_count"]
            else:
                row.setdefault(_TRT_TOKENS[family], parts["_sum"])  # vLLM's counters win
        for key, trt in self._trt.items():
            row = values.setdefault(key, {})
            scheduled = trt.get((c.TRT_REQUEST_METRICS, c.TRT_REQUEST_SCHEDULED))
            waiting = trt.get((c.TRT_REQUEST_METRICS, c.TRT_REQUEST_WAITING))
            active = trt.get((c.TRT_REQUEST_METRICS, c.TRT_REQUEST_ACTIVE))
            if waiting is None and active is not None and scheduled is not None:
                waiting = max(active - scheduled, 0.0)  # before 25.04 the backend has no `waiting`
            if scheduled is not None:
                row.setdefault(RUNNING, scheduled)
            if waiting is not None:
                row.setdefault(WAITING, waiting)
            fraction = trt.get((c.TRT_KV_CACHE_BLOCK_METRICS, c.TRT_KV_FRACTION))
            used = trt.get((c.TRT_KV_CACHE_BLOCK_METRICS, c.TRT_KV_USED))
            most = trt.get((c.TRT_KV_CACHE_BLOCK_METRICS, c.TRT_KV_MAX))
            if fraction is None and used is not None and most:
                fraction = used / most
            if fraction is not None:
                row.setdefault(KV_USAGE, fraction)
        rows = {key: tuple(v.get(i, _NAN) for i in range(_FIELDS)) for key, v in values.items()}
        return LLMData(rows=rows, problems=dict(self._problems))


def collect(samples: Iterable[Sample]) -> LLMData:
    """The LLM part of a parse (tests, tools): every sample is offered, non-LLM ones are dropped."""
    collector = LLMCollector()
    for _ in collector.tap(samples):
        pass
    return collector.result()


# ---------------------------------------------------------------------------------- derivation
@dataclass(frozen=True, slots=True)
class LLMDerivation:
    """One LLM model version over the window; None where the families or the traffic are missing."""

    model: str
    version: str
    tokens_per_second: Mapping[str, float] = field(default_factory=dict)  # direction -> tokens/s
    tokens: Mapping[str, float] = field(default_factory=dict)  # direction -> tokens over the window
    running: float | None = None
    waiting: float | None = None
    kv_cache_utilization: float | None = None  # 0-1
    ttft_seconds: float | None = None
    tpot_seconds: float | None = None
    cost_per_1m_tokens: Mapping[str, float] = field(default_factory=dict)  # direction -> cost


def _level(value: float, ceiling: float | None = None) -> float | None:
    """A gauge's latest value, None when absent; negative values are floored at 0."""
    if value != value:
        return None
    value = max(0.0, value)
    return min(value, ceiling) if ceiling is not None else value


def derive_llm(
    window: Sequence[tuple[float, LLMData]],
    window_cost: Mapping[ModelKey, float] | None = None,
) -> list[LLMDerivation]:
    """Per model version over `window` ((taken_at, data), oldest first; tests and tools): what
    `derive_llm_window` gives for the exporter's window holding these polls."""
    if not window:
        return []
    series = SeriesWindow(COUNTER_FIELDS)
    for taken_at, data in window:
        series.add(taken_at, data.rows)
    return derive_llm_window(window[-1][1], series, window_cost)


def derive_llm_window(
    latest: LLMData | None,
    series: SeriesWindow,
    window_cost: Mapping[ModelKey, float] | None = None,
) -> list[LLMDerivation]:
    """Per model version of the latest poll's LLM rows: its counters (`COUNTER_FIELDS`) as the
    window's `series` holds them, its gauges as last reported.

    `window_cost` is each model's attributed cost over the window (the same attribution as the
    cost per thousand inferences); cost per million tokens is it over the window's tokens.
    """
    if latest is None or not latest.rows:
        return []
    keys = sorted(latest.rows)
    increases, first, newest = series.reads_of(keys)
    out: list[LLMDerivation] = []
    for i, key in enumerate(keys):
        row = latest.rows[key]
        inc, twice = increases[i], newest[i] > first[i]  # observed at two polls at least
        seen = first[i][first[i] == first[i]]
        span = float(np.max(newest[i][newest[i] == newest[i]]) - np.min(seen)) if len(seen) else 0.0
        tokens: dict[str, float] = {}
        rates: dict[str, float] = {}
        for direction, index in ((c.DIRECTION_INPUT, PROMPT_TOKENS), (c.DIRECTION_OUTPUT, GENERATION_TOKENS)):
            if twice[index] and span > 0:
                tokens[direction] = float(inc[index])
                rates[direction] = tokens[direction] / span
        averages: list[float | None] = []
        for sum_index, count_index in ((TTFT_SUM, TTFT_COUNT), (TPOT_SUM, TPOT_COUNT)):
            count = float(inc[count_index]) if twice[count_index] else 0.0
            total = float(inc[sum_index]) if twice[sum_index] else 0.0
            averages.append(total / count if count > 0 and total >= 0 else None)
        cost: dict[str, float] = {}
        spent = (window_cost or {}).get(key)
        if spent is not None and spent >= 0 and math.isfinite(spent):
            cost = {d: spent / n * 1e6 for d, n in tokens.items() if n > 0}
        out.append(
            LLMDerivation(
                model=key[0],
                version=key[1],
                tokens_per_second=rates,
                tokens=tokens,
                running=_level(row[RUNNING]),
                waiting=_level(row[WAITING]),
                kv_cache_utilization=_level(row[KV_USAGE], 1.0),
                ttft_seconds=averages[0],
                tpot_seconds=averages[1],
                cost_per_1m_tokens=cost,
            )
        )
    return out


# ---------------------------------------------------------------------------------- exposition
GaugeFamily = tuple[str, str, str, Sequence[str], Iterable[tuple[Sequence[str], float]]]


def llm_families(
    models: Sequence[LLMDerivation], problems: Mapping[str, int], currency: str
) -> Iterator[GaugeFamily]:
    """(kind, name, help, label names, rows) of each LLM family, for the collector to write."""
    mv = (c.LABEL_MODEL, c.LABEL_VERSION)
    yield (
        "gauge",
        c.M_LLM_TOKENS_PER_SECOND,
        "Tokens per second over the window: input (prompt/prefill) and output (generated).",
        (*mv, c.L_DIRECTION),
        [([m.model, m.version, d], v) for m in models for d, v in sorted(m.tokens_per_second.items())],
    )
    yield (
        "gauge",
        c.M_LLM_REQUESTS,
        "Requests the LLM backend is running and has waiting (latest value reported).",
        (*mv, c.L_STATE),
        [
            ([m.model, m.version, state], v)
            for m in models
            for state, v in ((c.LLM_STATE_RUNNING, m.running), (c.LLM_STATE_WAITING, m.waiting))
            if v is not None
        ],
    )
    yield (
        "gauge",
        c.M_LLM_KV_CACHE_UTILIZATION,
        "Share of the KV cache in use, 0-1 (latest value reported).",
        mv,
        [
            ([m.model, m.version], m.kv_cache_utilization)
            for m in models
            if m.kv_cache_utilization is not None
        ],
    )
    yield (
        "gauge",
        c.M_LLM_TTFT_SECONDS,
        "Average time to first token over the window (histogram Δsum/Δcount).",
        mv,
        [([m.model, m.version], m.ttft_seconds) for m in models if m.ttft_seconds is not None],
    )
    yield (
        "gauge",
        c.M_LLM_TPOT_SECONDS,
        "Average time per output token over the window (histogram Δsum/Δcount).",
        mv,
        [([m.model, m.version], m.tpot_seconds) for m in models if m.tpot_seconds is not None],
    )
    yield (
        "gauge",
        c.M_COST_PER_1M_TOKENS,
        "Attributed cost over the window per million tokens of each direction.",
        (*mv, c.L_DIRECTION, c.L_CURRENCY),
        [
            ([m.model, m.version, d, currency], v)
            for m in models
            for d, v in sorted(m.cost_per_1m_tokens.items())
        ],
    )
    yield (
        "gauge",
        c.M_LLM_PARSE_PROBLEMS,
        "LLM backend samples ignored in the latest poll, by problem.",
        (c.L_PROBLEM,),
        [([p], float(problems.get(p, 0))) for p in c.LLM_PROBLEMS],
    )
