"""Prometheus range queries for the report, read in bounded memory; the HTTP client is shared.

A range answer is read in time slices of at most `SAMPLES_PER_ANSWER` samples (the first slice
learns how many series the query has), so the JSON held at once is bounded whatever the range
and the number of series. Each series becomes two numpy arrays (timestamps, values), and a long
frame is built from them column by column, its labels as categoricals (codes, not a string per
sample). Counters whose increase is all the report needs are reduced per series as read
(`PrometheusClient.read_increases`) and never become a frame.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import numpy as np
import pandas as pd

from triton_sre import conventions as c
from triton_sre.counters import observed, running_increase, running_increases
from triton_sre.prom import INFOS, WARNINGS, PromError, Prometheus
from triton_sre.promcore import (
    MAX_QUERY_CHARS,
    finest_step,
    range_points,
    range_slices,
)
from triton_sre.redact import bounded, redact
from triton_sre.report.sections import by_section

__all__ = [
    "MAX_POINTS",
    "PrometheusClient",
    "SeriesArrays",
    "TooManySamples",
    "choose_step",
    "each",
    "fitting_step",
    "frame_of",
    "rate_window",
    "smallest_step",
]

MAX_POINTS = 2000
"""Samples per series a range query asks for by default."""
TIMEOUT_S = c.REPORT_TIMEOUT_SECONDS
"""Seconds each query's whole answer may take (`report --timeout`)."""
SAMPLES_PER_ANSWER = 1_000_000
"""At most this many samples per range-query answer (≈ 30 MB of JSON text, decoded series by series)."""
FIRST_SLICE_POINTS = 10
"""Of the first slice, which learns how many series the query has (at 200,000 series, the 50 points
it had were 10 million samples in one answer; 10 are 2 million, ~300 MB decoded)."""
MAX_SAMPLES_PER_QUERY = 5_000_000
"""Samples one query may hold over the whole range (two float64 arrays, then a frame: ~40 B each):
200,000 series get 25 points. More is TooManySamples, and the report picks a coarser step."""

SeriesArrays = tuple[dict[str, str], np.ndarray, np.ndarray]  # labels, timestamps (s), values
SeriesFold = Callable[[list[Any], list[tuple[np.ndarray, np.ndarray]]], list[Any]]
FOLD_BATCH = 4096
"""Series whose slices `read_reduced` folds at once (their arrays held until then)."""
MAX_SAID = 1000
"""Distinct (sections, query, text) a report keeps of its answers' warnings, and of their infos."""
QUERY_SHOWN = 80
"""Characters of the PromQL of a query outside the plan a note names (its name in the plan, else this)."""
UNNAMED = ("the report",)
"""The sections of a query the report did not name (`PrometheusClient.named`, `feeding`)."""


def choose_step(start: float, end: float) -> float:
    """The query resolution: at most `MAX_POINTS` samples, never finer than a second."""
    return max(1.0, math.ceil((end - start) / MAX_POINTS))


def smallest_step(start: float, end: float) -> float:
    """The finest step (seconds, rounded up to the millisecond) at which one series over [start, end]
    stays within `MAX_SAMPLES_PER_QUERY` points: a finer `--step` is refused (the report would hold more
    than its budget of even one series). Anything coarser is read, in slices of at most Prometheus'
    `PROMETHEUS_MAX_POINTS` points when the range needs more."""
    return finest_step(end - start, MAX_SAMPLES_PER_QUERY)


def rate_window(step: float, scrape_interval: float) -> float:
    """Seconds of a rate() window at `step`, as Grafana's $__rate_interval: at least four scrape
    intervals (a window holding one or two samples makes a rate flicker between 0 and double)."""
    return max(step + scrape_interval, 4 * scrape_interval)


class TooManySamples(PromError):
    """A query (`expr`) answers more samples than `MAX_SAMPLES_PER_QUERY` at this step; `step` is the
    finest step that fits (None when even one point per series would not)."""

    def __init__(self, expr: str, series: int, points: int, step: float | None) -> None:
        advice = (
            f"give --step {step:g} or coarser, or a shorter range"
            if step is not None
            else "select fewer series (more than the report can hold at any step)"
        )
        super().__init__(
            f"{bounded(expr, MAX_QUERY_CHARS)}: {series:,} series x {points:,} points is more than the "
            f"{MAX_SAMPLES_PER_QUERY:,} samples the report reads per query: {advice}"
        )
        self.expr = expr
        self.series = series
        self.step = step


def fitting_step(start: float, end: float, series: int) -> float | None:
    """The finest whole-second step at which `series` series over [start, end] stay within
    `MAX_SAMPLES_PER_QUERY` samples (None when not even one point each does)."""
    points = MAX_SAMPLES_PER_QUERY // max(1, series)
    if points < 1:
        return None
    return float(math.floor((end - start) / points) + 1)  # floor(range / step) + 1 <= points


class PrometheusClient(Prometheus):
    """The shared client (triton_sre/prom.py) with the report's timeout and sliced range reads."""

    def __init__(self, url: str, timeout: float = TIMEOUT_S) -> None:
        super().__init__(url, timeout)
        # the report prints it: without credentials or a query string (`?token=`), as every message
        self.source_url = redact(url)
        self.on_query: Callable[[], None] | None = None  # called after each range query (progress)
        # PromQL -> (its name in the report's plan, the sections its answer feeds: report/sections.py)
        self.queries: dict[str, tuple[str, tuple[str, ...]]] = {}
        self._feeding: tuple[str, ...] = ()
        # (sections, query name, text) of the answers' `warnings` and `infos` (`WARNINGS`, `INFOS`)
        self.said: dict[str, list[tuple[tuple[str, ...], str, str]]] = {WARNINGS: [], INFOS: []}

    def named(self, expr: str, name: str, *sections: str) -> str:
        """`expr`, named in `queries` with the `sections` it feeds (for a query outside the plan)."""
        self.queries[expr] = (name, sections)
        return expr

    def name_plan(self, names: Mapping[str, tuple[str, tuple[str, ...]]]) -> None:
        self.queries.update(names)

    @contextmanager
    def feeding(self, *sections: str) -> Iterator[None]:
        """Within the block, a query not in `queries` feeds `sections` (the SLO section's per step)."""
        saved, self._feeding = self._feeding, sections
        try:
            yield
        finally:
            self._feeding = saved

    def notes(self) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
        """(section, note) of the warnings and of the infos said so far (`sections.by_section`)."""
        return by_section(self.said[WARNINGS]), by_section(self.said[INFOS])

    def _said(self, key: str, seen: tuple[str, str]) -> None:
        super()._said(key, seen)
        query, text = seen
        cut = query if len(query) <= QUERY_SHOWN else f"{query[: QUERY_SHOWN - 1]}…"  # the report's own
        name, sections = self.queries.get(query) or (cut, self._feeding or UNNAMED)
        kept = self.said[key]
        if (sections, name, text) not in kept and len(kept) < MAX_SAID:
            kept.append((sections, name, text))

    def series_count(self, expr: str, at: float) -> int | None:
        """The value of the instant query `expr` (a ``count(...)``, `queries.count_expr`) at `at`, as a
        count of series: 0 when the answer is empty (no series), None when it is not a count."""
        samples = self._samples(expr, keep_non_finite=True, at=at)
        if not samples:
            return 0
        value = samples[0][1]
        return int(value) if math.isfinite(value) and value >= 0 else None

    def _slices(
        self, expr: str, start: float, end: float, step: float, series: int | None
    ) -> Iterator[tuple[tuple[tuple[str, str], ...], dict[str, str], np.ndarray, np.ndarray]]:
        """(key, labels, timestamps, values) of every series of every time slice, in time order. The
        slices are the shared client's (`range_slices`: at most PROMETHEUS_MAX_POINTS points, no point
        lost or doubled at the seams), each sized to at most `SAMPLES_PER_ANSWER` samples of the
        `series` expected (when not known, the first slice of `FIRST_SLICE_POINTS` points learns it);
        TooManySamples as soon as the series seen (at least one: a query of no series is not read in
        more slices than one series would be) make the whole range exceed `MAX_SAMPLES_PER_QUERY`."""
        seen: set[tuple[tuple[str, str], ...]] = set()
        total = range_points(start, end, step)
        if series is not None and max(1, series) * total > MAX_SAMPLES_PER_QUERY:
            raise TooManySamples(expr, max(1, series), total, fitting_step(start, end, series))

        read = 0  # slices

        def points() -> int:  # the next slice's, asked after the one before is read
            if not read:
                return SAMPLES_PER_ANSWER // series if series else FIRST_SLICE_POINTS
            return max(FIRST_SLICE_POINTS, SAMPLES_PER_ANSWER // max(1, len(seen)))

        for at, until in range_slices(start, end, step, points):
            read += 1
            for labels, stamps, values in self.iter_range_arrays(expr, at, until, step):
                key = tuple(sorted(labels.items()))
                seen.add(key)
                yield key, labels, stamps, values
            if self.on_query is not None:
                self.on_query()
            if max(1, len(seen)) * total > MAX_SAMPLES_PER_QUERY:
                counted = max(1, len(seen))
                raise TooManySamples(expr, counted, total, fitting_step(start, end, counted))

    def read_range(
        self, expr: str, start: float, end: float, step: float, series: int | None = None
    ) -> list[SeriesArrays]:
        """Every series of `expr` over [start, end] at `step`, as arrays, read slice by slice
        (`_slices`: `series` is how many are expected, None when not known)."""
        kept: dict[tuple[tuple[str, str], ...], tuple[dict[str, str], list, list]] = {}
        for key, labels, stamps, values in self._slices(expr, start, end, step, series):
            into = kept.setdefault(key, (labels, [], []))
            into[1].append(stamps)
            into[2].append(values)
        return [(labels, np.concatenate(ts), np.concatenate(vs)) for labels, ts, vs in kept.values()]

    def read_reduced(
        self,
        expr: str,
        start: float,
        end: float,
        step: float,
        keep: tuple[str, ...] | None,
        fold: SeriesFold,
        series: int | None = None,
    ) -> list[tuple[dict[str, str], Any]]:
        """(the labels among `keep`, every label when None; the folded state) per series of `expr`,
        in the order first read. Slices are folded as read, up to `FOLD_BATCH` series at a time:
        `fold(states, parts)` gets their states (None before a series' first slice) and each one's
        next (timestamps, values), and returns their next states. What is held is one state per
        series, not its samples."""
        entries: dict[tuple[tuple[str, str], ...], list[Any]] = {}
        names: dict[str, str] = {}  # one string per label value, shared by the series
        held: list[list[Any]] = []
        parts: list[tuple[np.ndarray, np.ndarray]] = []
        batched: set[tuple[tuple[str, str], ...]] = set()

        def flush() -> None:
            for entry, state in zip(held, fold([e[1] for e in held], parts), strict=True):
                entry[1] = state
            held.clear()
            parts.clear()
            batched.clear()

        for key, labels, stamps, values in self._slices(expr, start, end, step, series):
            if key in batched or len(held) >= FOLD_BATCH:  # a series' next slice after its last
                flush()
            entry = entries.get(key)
            if entry is None:
                wanted = labels if keep is None else (k for k in keep if k in labels)
                kept = {k: names.setdefault(labels[k], labels[k]) for k in wanted}
                entry = entries[key] = [kept, None]
            held.append(entry)
            parts.append((stamps, values))
            batched.add(key)
        flush()
        return [(kept, state) for kept, state in entries.values()]

    def read_increases(
        self,
        expr: str,
        start: float,
        end: float,
        step: float,
        keep: tuple[str, ...],
        series: int | None = None,
    ) -> list[tuple[dict[str, str], float]]:
        """(the labels among `keep`, increase over the range) per series of the counter `expr`, reduced
        slice by slice as read (`triton_sre.counters.running_increase`, the same figure as the whole
        series'): what is held is one running total per series, not its samples."""
        reduced = self.read_reduced(expr, start, end, step, keep, _increase, series)
        return [(kept, state[0]) for kept, state in reduced]

    def frame_range(
        self, expr: str, start: float, end: float, step: float, series: int | None = None
    ) -> pd.DataFrame:
        """Columns: every label of the series, then ``timestamp`` (s) and ``value`` (float)."""
        return frame_of(self.read_range(expr, start, end, step, series))


def each(fold: Callable[[Any, np.ndarray, np.ndarray], Any]) -> SeriesFold:
    """A `read_reduced` fold from a fold of one series' slice: `fold(state, timestamps, values)`."""
    return lambda states, parts: [fold(state, *part) for state, part in zip(states, parts, strict=True)]


def _increase(states: list[Any], parts: list[tuple[np.ndarray, np.ndarray]]) -> list[Any]:
    """`read_reduced`'s fold of counters: (increase so far, last observation) per series. Series whose
    slice has the same length and every value an observation are folded together
    (`running_increases`, the same floats), any other one alone (`running_increase`)."""
    out = list(states)
    groups: dict[tuple[int, bool], list[int]] = {}
    for i, (state, (_, values)) in enumerate(zip(states, parts, strict=True)):
        groups.setdefault((len(values), state is not None and state[1] is not None), []).append(i)
    for (length, has_last), rows in groups.items():
        stacked = np.concatenate([parts[i][1] for i in rows]).reshape(len(rows), length)
        whole = observed(stacked).all(axis=1) if length else np.zeros(len(rows), dtype=bool)
        fast = [i for i, ok in zip(rows, whole.tolist(), strict=True) if ok]
        for i in set(rows).difference(fast):
            out[i] = running_increase(parts[i][1], *(states[i] or (0.0, None)))
        if fast:
            totals = np.array([states[i][0] if states[i] else 0.0 for i in fast])
            lasts = np.array([states[i][1] for i in fast]) if has_last else None
            increased, last = running_increases(stacked[whole], totals, lasts)
            for i, total, value in zip(fast, increased.tolist(), last.tolist(), strict=True):
                out[i] = (total, value)
    return out


def _label_columns(series: list[SeriesArrays], lengths: np.ndarray) -> Iterator[tuple[str, pd.Categorical]]:
    names: dict[str, None] = {}
    for labels, _, _ in series:
        names.update(dict.fromkeys(labels))
    for name in names:
        categories: dict[str, int] = {}
        codes = np.fromiter(
            (
                categories.setdefault(labels[name], len(categories)) if name in labels else -1
                for labels, _, _ in series
            ),
            dtype=np.int32,
            count=len(series),
        )
        yield name, pd.Categorical.from_codes(np.repeat(codes, lengths), categories=list(categories))


def frame_of(series: list[SeriesArrays]) -> pd.DataFrame:
    """A long frame (one row per sample) built column by column from the series' arrays."""
    if not series or not any(len(ts) for _, ts, _ in series):
        return pd.DataFrame()
    lengths = np.fromiter((len(ts) for _, ts, _ in series), dtype=np.intp, count=len(series))
    columns: dict[str, Any] = dict(_label_columns(series, lengths))
    columns["timestamp"] = np.concatenate([ts for _, ts, _ in series])
    columns["value"] = np.concatenate([vs for _, _, vs in series])
    return pd.DataFrame(columns)
