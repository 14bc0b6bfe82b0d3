"""Whether Triton restarted between two polls that read its metrics, even when no poll failed between them
(a crash and the kubelet's restart, a rolling upgrade behind the same address, within one poll interval).

The evidence, measured on the real 2.51 (restart33, bench/RESULTS.md):
- a new process counts from 0: every per-model counter of `/metrics` starts again;
- a model loaded again while it is loaded (model control's load, a changed config in poll mode) keeps its
  `/metrics` counters: the core hands the new instance the metric reporter of the old one, which is still
  alive (metric_model_reporter.cc keeps one reporter per label set), while `/v2/models/stats` starts again
  from 0. The statistics are no evidence of a restart; the `/metrics` counters are;
- a model unloaded and then loaded starts its `/metrics` counters from 0: one model's drop is no restart.

So a restart is seen when every model version that had counted something at the last poll that read
the counters, and exports that counter again now, has such a counter that went down; or when any GPU's
energy counter (joules since the server started, never going down otherwise) went down. Missed: a server
that had counted nothing since its start, one whose counted models are all gone after the restart (failed
to load), one whose new process has already counted more than the old one on every compared counter of
some model version. Counted wrongly: every counted model unloaded and loaded again between two polls.

Pure but for the counter it keeps: the caller hands each poll's counters and GPU energy.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from prometheus_client import CollectorRegistry, Counter

from triton_sre import conventions as c
from triton_sre.exporter.replay import CounterTable
from triton_sre.exporter.snapshot import CounterRow, ModelKey

_COUNTERS = len(c.PER_MODEL_COUNTERS)  # a row's cumulative counters come first (snapshot.ROW_FAMILIES)

# One poll's counters: row number per model key, and the rows' cumulative counters (NaN: not exported)
Counts = tuple[Mapping[ModelKey, int], np.ndarray]


def counts_of(counters: Mapping[ModelKey, CounterRow]) -> Counts:
    """The cumulative counters of one poll's rows, as a matrix (a replayed table's own, not copied)."""
    if isinstance(counters, CounterTable):
        return counters.index, counters.matrix[:, :_COUNTERS]
    keys = list(counters)
    if not keys:
        return {}, np.zeros((0, _COUNTERS))
    rows = np.array(list(counters.values()), dtype=np.float64).reshape(len(keys), -1)[:, :_COUNTERS]
    return {key: i for i, key in enumerate(keys)}, rows


def restarted(
    before: Counts,
    now: Counts,
    energy_before: Mapping[str, float] | None = None,
    energy_now: Mapping[str, float] | None = None,
) -> bool:
    """The module docstring's rule: every counted model version's counters reset, or a GPU's energy."""
    energy_before = energy_before or {}
    for uuid, joules in (energy_now or {}).items():
        if joules < energy_before.get(uuid, -1.0):
            return True
    (index_before, rows_before), (index_now, rows_now) = before, now
    if index_before is not index_now and list(index_before) != list(index_now):
        # other model versions or another order: the rows of the model versions in both
        both = [key for key in index_before if key in index_now]
        rows_before = rows_before[[index_before[key] for key in both]].reshape(len(both), _COUNTERS)
        rows_now = rows_now[[index_now[key] for key in both]].reshape(len(both), _COUNTERS)
    # a counter is compared where it had counted something and is exported now (NaN compares false): a
    # model that failed to load again keeps a failure counter at 0 on some releases (2.48), nothing else
    compared = (rows_before > 0.0) & ~np.isnan(rows_now)
    counted = compared.any(axis=1)
    if not counted.any():
        return False
    went_down = (compared & (rows_now < rows_before)).any(axis=1)
    return bool(went_down[counted].all())


class RestartWatch:
    """Compares each poll that read Triton's counters with the last one that did (however many polls
    between failed) and counts the restarts it sees in `triton_sre_triton_restarts_total`."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._restarts = Counter(
            c.M_TRITON_RESTARTS,
            "Restarts of Triton seen between two polls that read its metrics: every model version that had "
            "counted a request has a counter that went down (or a GPU's energy counter did). Misses a "
            "restart of a server that had counted nothing, or whose counted models did not load again; "
            "counts the unload and load of every counted model between two polls as one.",
            registry=registry,
        )
        self._last: Counts | None = None
        self._energy: Mapping[str, float] = {}

    def observe(self, counters: Mapping[ModelKey, CounterRow] | None, energy: Mapping[str, float]) -> bool:
        """One poll: its counters (None: not read, nothing compared) and GPU energy (joules by GPU uuid).
        True when it sees a restart since the last poll that read the counters."""
        if counters is None:
            return False
        now = counts_of(counters)
        seen = self._last is not None and restarted(self._last, now, self._energy, energy)
        self._last, self._energy = now, energy
        if seen:
            self._restarts.inc()
        return seen
