"""Compact windowed counters: per series reset-aware running totals, one flat array per poll.

Keeping whole snapshots for the window costs memory and time in proportion to
window ÷ interval × models (30 polls × 2,000 model versions at `--interval 2 --window 60`).
The derivations only need each counter's increase over the window, so each poll stores, per
series and field, the running total of increases up to it (a drop is a reset and counts from
zero, as Prometheus' `increase()`), as one float64 numpy array with NaN where the series had no valid
observation that poll. The increase over the window is then the total at the series' newest
observation minus the total at its oldest one in the window: the same sum over consecutive
observations that `triton_sre.counters.increase` computes from the raw values, at O(1) per series.
At most `CHECKPOINTS` polls' arrays are kept, so memory does not grow with window ÷ interval.

Every counter the exporter derives from goes through a `SeriesWindow`: Triton's per-model
counters, the execution compute time, the LLM backends' token and latency counters, the GPUs'
energy. Pure: no I/O; numpy and the shared counter arithmetic only (no cycle through snapshot).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Iterable, Mapping, Sequence

import numpy as np

from triton_sre.counters import observed, reset_steps

_NAN = float("nan")
_INF = float("inf")


# At most this many polls' totals are kept, whatever window ÷ interval is: beyond it, the poll
# whose removal leaves the smallest gap is dropped (never the oldest or newest), so the window's
# start moves by at most window ÷ CHECKPOINTS and memory stays bounded. `--window 60 --interval 2`
# (31 polls) keeps every poll and is exact.
CHECKPOINTS = 64


class SeriesWindow:
    """Running totals of `fields` (indices into each row) per series key, for the recent polls.

    The per-cell state lives in numpy arrays and each poll is added with a few array operations
    (the same float operations, in the same order per cell, as a loop over the cells would do).
    """

    __slots__ = ("_cells", "_checkpoints", "_fields", "_free", "_last", "_seen", "_slots", "_total", "polls")

    def __init__(self, fields: Sequence[int], checkpoints: int = CHECKPOINTS) -> None:
        self._fields = tuple(fields)
        self._checkpoints = max(2, checkpoints)
        self._slots: dict[Hashable, int] = {}  # key -> slot; a slot is len(fields) array cells
        self._free: list[int] = []
        self._cells = 0  # cells in use: (highest slot + 1) x len(fields)
        self._last = np.zeros(0)  # last valid raw value per cell (NaN: none yet)
        self._total = np.zeros(0)  # running total of increases per cell
        self._seen: dict[Hashable, float] = {}  # key -> time of its newest poll
        # (taken_at, totals at that poll; NaN where not observed), oldest first
        self.polls: deque[tuple[float, np.ndarray]] = deque()

    def __len__(self) -> int:
        return len(self.polls)

    def add(self, taken_at: float, rows: Mapping[Hashable, Sequence[float]]) -> None:
        """Record one poll's raw cumulative values (a value that is NaN, infinite or negative is
        no observation)."""
        width = len(self._fields)
        matrix = getattr(rows, "matrix", None)  # replay.CounterTable: the rows as one array
        if matrix is not None:
            keys: Sequence[Hashable] = rows.order  # type: ignore[attr-defined]
            values = matrix[:, self._fields].ravel()
        else:
            keys = list(rows)
            values = np.array(
                [[row[index] for index in self._fields] for row in rows.values()], dtype=np.float64
            ).ravel()
        slots = self._slots
        for key in [key for key in keys if key not in slots]:
            slot = self._free.pop() if self._free else self._cells // width
            slots[key] = slot
            self._cells = max(self._cells, (slot + 1) * width)
        if self._cells > len(self._last):
            grown = max(self._cells, 2 * len(self._last))
            self._last = np.concatenate((self._last, np.full(grown - len(self._last), _NAN)))
            self._total = np.concatenate((self._total, np.zeros(grown - len(self._total))))
        self._seen.update(dict.fromkeys(keys, taken_at))
        base = np.fromiter(map(slots.__getitem__, keys), dtype=np.intp, count=len(keys)) * width
        cells = (base[:, None] + np.arange(width)).ravel()
        valid = observed(values)
        cells, values = cells[valid], values[valid]
        last, total = self._last, self._total
        previous = last[cells]
        known = previous == previous  # not NaN: a previous observation exists
        step = reset_steps(previous, values)
        total[cells[known]] += step[known]
        last[cells] = values
        out = np.full(self._cells, _NAN)
        out[cells] = total[cells]
        self.polls.append((taken_at, out))
        if len(self.polls) > self._checkpoints:
            self._thin()

    def _thin(self) -> None:
        """Drop the interior poll whose neighbours are closest in time (a series' first and last
        observations in the window then fall on the remaining polls)."""
        times = [t for t, _ in self.polls]
        drop = min(range(1, len(times) - 1), key=lambda i: times[i + 1] - times[i - 1])
        del self.polls[drop]

    def trim(self, start: float) -> None:
        """Forget polls taken before `start`, and series observed in none of the remaining ones."""
        polls = self.polls
        while polls and polls[0][0] < start:
            polls.popleft()
        oldest = polls[0][0] if polls else _INF
        gone = [key for key, when in self._seen.items() if when < oldest]
        width = len(self._fields)
        for key in gone:
            del self._seen[key]
            slot = self._slots.pop(key)
            base = slot * width
            self._last[base : base + width] = _NAN
            self._total[base : base + width] = 0.0
            self._free.append(slot)
        if not self._slots:  # nothing left: give the memory back
            self._free.clear()
            self._cells = 0
            self._last = np.zeros(0)
            self._total = np.zeros(0)

    def increase(self, key: Hashable, field: int) -> float:
        """The increase of `key`'s `field`-th tracked field over the stored polls (0 when fewer
        than two observations)."""
        slot = self._slots.get(key)
        if slot is None:
            return 0.0
        cell = slot * len(self._fields) + field
        first = _NAN
        for _, totals in self.polls:
            if cell < len(totals):
                first = float(totals[cell])
                if first == first:
                    break
        if first != first:
            return 0.0
        for _, totals in reversed(self.polls):
            if cell < len(totals):
                newest = float(totals[cell])
                if newest == newest:
                    return newest - first
        return 0.0

    def increases(self, key: Hashable) -> list[float]:
        """`increase` of every tracked field of `key`, in `fields` order."""
        return self.increases_of([key])[0].tolist()

    def increases_of(self, keys: Sequence[Hashable], unseen: float = 0.0) -> np.ndarray:
        """`increase` of every tracked field of each of `keys`: one row per key, in `fields` order;
        `unseen` where no stored poll observed the field."""
        return self.reads_of(keys, times=False, unseen=unseen)[0]

    def reads_of(
        self, keys: Sequence[Hashable], times: bool = True, unseen: float = 0.0
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per key (rows) and tracked field (columns): the increase over the stored polls (`unseen`
        where no poll observed the field), and (with `times`) the times of the first and newest polls
        that observed it (NaN: never observed; equal: observed once)."""
        width = len(self._fields)
        slots = np.fromiter((self._slots.get(key, -1) for key in keys), dtype=np.intp, count=len(keys))
        cells = slots[:, None] * width + np.arange(width)
        known = slots >= 0
        first = np.full(cells.shape, _NAN)
        newest = np.full(cells.shape, _NAN)
        first_t = np.full(cells.shape, _NAN)
        newest_t = np.full(cells.shape, _NAN)
        for found, when, order in ((first, first_t, self.polls), (newest, newest_t, reversed(self.polls))):
            for taken_at, totals in order:
                missing = (found != found) & known[:, None]
                if not missing.any():
                    break
                wanted = missing & (cells < len(totals))  # a slot newer than this poll: not in it
                found[wanted] = totals[cells[wanted]]
                if times:
                    when[wanted & (found == found)] = taken_at
        seen = (first == first) & (newest == newest)
        return np.where(seen, newest - first, unseen), first_t, newest_t

    def keys(self) -> Iterable[Hashable]:
        return self._slots.keys()

    def span(self) -> float:
        """Seconds between the oldest and newest stored poll."""
        return self.polls[-1][0] - self.polls[0][0] if self.polls else 0.0
