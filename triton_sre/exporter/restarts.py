"""Whether Triton restarted between two polls that read its metrics, even when no poll failed between them
(a crash and the kubelet's restart, a rolling upgrade behind the same address, within one poll interval).

The evidence, measured on the real 2.51 (restart33, bench/RESULTS.md):
- a new process counts from 0: every per-model counter of `/metrics` starts again;
- a model loaded again while it is loaded (model control's load, a changed config in poll mode) keeps its
  `/metrics` counters: the core hands the new instance the metric reporter of the old one, which is still
  alive (metric_model_reporter.cc keeps one reporter per label set), while `/v2/models/stats` starts again
  from 0. The statistics are no evidence of a restart; the `/metrics` counters are;
- a model unloaded and then loaded starts its `/metrics` counters from 0: one model's drop is no restart.

- (tidy36) in EXPLICIT model control a new process lists in the repository index, with a version and a
  state, only the models it loaded at start (`--load-model`): one that was loaded, unloaded or failed through
  model control is listed again with its name alone, as never loaded; a running server keeps every state it
  set, and an unload leaves the model UNAVAILABLE with reason ``unloaded``;
- `nv_cpu_memory_total_bytes` reads 0 until the new process's first CPU-metrics collection (about 2 s after
  its start; a running server's host memory is never 0).

- (tidy37) a new process closes every connection the old one accepted (idleconn.py: idle connections the
  exporter opens after each poll, found closed by Triton at the next).

So a restart is seen when every model version that had counted something at the last poll that read the
counters, and exports that counter again now, has such a counter that went down; or when any GPU's energy
counter (joules since the server started, never going down otherwise) went down; or (tidy36) when a model the
last index listed with a version is listed now by name alone (`forgotten`), the host's memory total went from
a value to 0 (`fresh_host`), or (tidy37) Triton closed the idle connections
(`IdleConnections.closed_by_server`). The counters' and the connections' evidence is not taken when a model
version is UNLOADING or UNAVAILABLE ``unloaded`` in both indexes (`kept_unloaded`): a state only the old
process could have set. Missed: a server that had counted nothing since its start, in NONE or POLL mode or
with only startup models, polled more than ~2 s after its start, when the connections cannot tell
(idleconn.py: the exporter's first interval, a proxy closing idle connections within the interval); one whose
counted models are all gone after the restart (failed to load), one whose new process has already counted more
than the old one on every compared counter of some model version. Counted wrongly: every counted model
unloaded and loaded again between two polls, unless some model stays unloaded through them; a proxy between
the exporter and Triton restarted between two polls.

Pure but for the counter it keeps: the caller hands each poll's counters and GPU energy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from prometheus_client import CollectorRegistry, Counter

from triton_sre import conventions as c
from triton_sre.exporter.replay import CounterTable
from triton_sre.exporter.snapshot import CounterRow, IndexEntry, ModelKey

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


def energy_reset(energy_before: Mapping[str, float] | None, energy_now: Mapping[str, float] | None) -> bool:
    """A GPU's energy counter (joules since its server started) went down."""
    energy_before = energy_before or {}
    return any(joules < energy_before.get(uuid, -1.0) for uuid, joules in (energy_now or {}).items())


def restarted(before: Counts, now: Counts) -> bool:
    """The module docstring's counter rule: every counted model version's counters reset (GPU energy is
    `energy_reset`'s)."""
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


def forgotten(index_before: Sequence[IndexEntry] | None, index_now: Sequence[IndexEntry] | None) -> bool:
    """A model the earlier index listed with a version (a state this server set) is listed now by name alone
    (never loaded): only a new process forgets a state (EXPLICIT model control)."""
    if not index_before or not index_now:
        return False
    had = {e.name for e in index_before if e.version}
    has = {e.name for e in index_now if e.version}
    return any(not e.version and e.name in had and e.name not in has for e in index_now)


def kept_unloaded(index_before: Sequence[IndexEntry] | None, index_now: Sequence[IndexEntry] | None) -> bool:
    """A model version UNLOADING or UNAVAILABLE ``unloaded`` in both indexes: only an unload in this process
    leaves it so (a new process lists it by name alone), so the same process served both polls."""

    def unloaded(index: Sequence[IndexEntry]) -> set[tuple[str, str]]:
        return {
            (e.name, e.version)
            for e in index
            if e.state == c.STATE_UNLOADING
            or (e.state == c.STATE_UNAVAILABLE and e.reason == c.REASON_UNLOADED)
        }

    return bool(index_before and index_now and unloaded(index_before) & unloaded(index_now))


def fresh_host(total_before: float | None, total_now: float | None) -> bool:
    """The host's memory total (`nv_cpu_memory_total_bytes`) went from a value to 0: a process before its
    first CPU-metrics collection."""
    return total_before is not None and total_now is not None and total_before > 0 and total_now == 0


class RestartWatch:
    """Compares each poll that read Triton's counters with the last one that did (however many polls
    between failed) and counts the restarts it sees in `triton_sre_triton_restarts_total`."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._restarts = Counter(
            c.M_TRITON_RESTARTS,
            "Restarts of Triton seen between two polls that read its metrics: every model version that had "
            "counted a request has a counter that went down (unless a model stayed unloaded through them), "
            "a GPU's energy counter did, a model loaded through model control is listed as never loaded, "
            "the host memory total reads 0 (a process in its first seconds), or Triton closed the idle "
            "connections the exporter opened to it after the poll before. Misses a restart in the exporter's "
            "first interval with nothing counted; counts the unload and load of every counted model between "
            "two polls as one when no other model stays unloaded, and a proxy between them restarted.",
            registry=registry,
        )
        self._last: Counts | None = None
        self._energy: Mapping[str, float] = {}
        self._index: Sequence[IndexEntry] | None = None  # the last index read
        self._host_total: float | None = None

    def observe(
        self,
        counters: Mapping[ModelKey, CounterRow] | None,
        energy: Mapping[str, float],
        index: Sequence[IndexEntry] | None = None,
        host_total: float | None = None,
        closed_by_server: bool = False,
    ) -> bool:
        """One poll: its counters (None: not read, nothing compared), GPU energy (joules by GPU uuid), its
        repository index (None: not read), host memory total (None: not exported) and whether Triton closed
        the idle connections opened after the last poll (idleconn.py). True when it sees a restart since the
        last poll that read the counters."""
        if counters is None:
            return False
        now = counts_of(counters)
        seen = self._last is not None and (
            energy_reset(self._energy, energy)
            or forgotten(self._index, index)
            or fresh_host(self._host_total, host_total)
            or ((restarted(self._last, now) or closed_by_server) and not kept_unloaded(self._index, index))
        )
        self._last, self._energy = now, energy
        self._index = index if index is not None else self._index
        self._host_total = host_total if host_total is not None else self._host_total
        if seen:
            self._restarts.inc()
        return seen
