"""The exporter's window: every counter it derives from, over the polls of the last `--window`
seconds, as `series.SeriesWindow`s (per series reset-aware running totals, memory bounded
whatever window ÷ interval is), plus the latest whole metrics, statistics, index and capacity
reading. Pure: no I/O.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import replace

from triton_sre import conventions as c
from triton_sre.exporter.capacity import CapacityReading, energy_rows
from triton_sre.exporter.llm import COUNTER_FIELDS as LLM_COUNTER_FIELDS
from triton_sre.exporter.series import SeriesWindow
from triton_sre.exporter.snapshot import FAMILY_INDEX, Snapshot
from triton_sre.exporter.statsfallback import FIELDS as FALLBACK_FIELDS
from triton_sre.exporter.statsfallback import fallback_rows

__all__ = ["COUNTED_FIELDS", "Window"]

_INF = math.inf


# The counter families whose increase over the window the derivations use, as fields of
# `snapshot.CounterRow`: what `SeriesWindow` keeps running totals of (derive reads them by their
# positions in this tuple).
_COUNTED = (
    c.NV_INFERENCE_COUNT,
    c.NV_EXEC_COUNT,
    c.NV_REQUEST_DURATION_US,
    c.NV_REQUEST_SUCCESS,
    *c.STAGE_COUNTERS.values(),
)
COUNTED_FIELDS = tuple(FAMILY_INDEX[family] for family in _COUNTED)


class Window:
    """What the derivations need from the polls within `window` seconds of the newest one.

    Every counter goes through a `SeriesWindow` (compact totals per poll): Triton's per-model
    counters, the execution compute time, the LLM token/latency counters, the GPUs' energy. Of
    the snapshots themselves only the latest metrics, statistics, index and capacity reading are
    kept, once; of the other polls only their times.
    """

    def __init__(self, window: float = _INF, slack: float = 0.0, max_polls: int | None = None) -> None:
        self.window = window
        self.slack = slack
        self.max_polls = max_polls
        self.counters = SeriesWindow(COUNTED_FIELDS)  # polls that read Triton's metrics
        self.compute = SeriesWindow((0,))  # execution compute ns, polls that read the statistics
        # the statistics' counts and durations of the model versions a poll read no metrics counters
        # for (exporter/statsfallback.py): empty while the metrics are read
        self.fallback = SeriesWindow(FALLBACK_FIELDS)
        self.llm = SeriesWindow(LLM_COUNTER_FIELDS)  # LLM counters, polls that read Triton's metrics
        self.energy = SeriesWindow((0,))  # joules per GPU, polls with a capacity reading
        self.polls: deque[float] = deque()  # the times of the polls in the window, oldest first
        self._newest: Snapshot | None = None  # the newest poll, without its bulky parts
        self.latest_metrics: Snapshot | None = None
        self.latest_stats: Snapshot | None = None
        self.latest_index: Snapshot | None = None
        self.latest_reading: CapacityReading | None = None
        self._latest_reading_at = _INF

    def add(self, snapshot: Snapshot) -> None:
        taken_at = snapshot.taken_at
        if snapshot.counters is not None:
            self.counters.add(taken_at, snapshot.counters)
            if snapshot.llm is not None:
                self.llm.add(taken_at, snapshot.llm.rows)
            self.latest_metrics = snapshot
        if snapshot.stats is not None:
            self.compute.add(taken_at, {k: (s.execution_compute_ns,) for k, s in snapshot.stats.items()})
            rows = fallback_rows(snapshot.stats, snapshot.counters)
            if rows:
                self.fallback.add(taken_at, rows)
            self.latest_stats = snapshot
        if snapshot.index is not None:
            self.latest_index = snapshot
        if snapshot.capacity is not None:
            self.energy.add(taken_at, energy_rows(snapshot.capacity))
            self.latest_reading, self._latest_reading_at = snapshot.capacity, taken_at
        self._newest = replace(
            snapshot,
            counters={} if snapshot.counters is not None else None,
            stats=None,
            index=None,
            llm=None,
            capacity=None,
        )
        self.polls.append(taken_at)
        start = taken_at - self.window - self.slack
        most = self.max_polls if self.max_polls is not None else len(self.polls)
        while self.polls and (self.polls[0] < start or len(self.polls) > most):
            self.polls.popleft()
        oldest = self.polls[0]
        for series in (self.counters, self.compute, self.fallback, self.llm, self.energy):
            series.trim(oldest)
        for name in ("latest_metrics", "latest_stats", "latest_index"):
            kept = getattr(self, name)
            if kept is not None and kept.taken_at < oldest:
                setattr(self, name, None)
        if self._latest_reading_at < oldest:
            self.latest_reading, self._latest_reading_at = None, _INF

    def newest(self) -> Snapshot | None:
        """The newest poll: its time, configs and which parts were read (not their contents)."""
        return self._newest
