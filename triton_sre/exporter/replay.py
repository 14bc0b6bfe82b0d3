"""Folding Triton's metrics text without parsing it again when only its values changed.

Triton writes the same lines in the same order at every scrape (verified on the real 2.51: four
scrapes with traffic between them, identical but for the values). A `MetricsPlan` is made from
a body that `metricsfold.counters_from_samples` folded without a problem: it keeps the body's
`skeleton.Skeleton` and, for each value, where it goes in the per-model rows. A later body
with the same skeleton is then folded from its value strings alone: one regex split, one float
conversion per value and a few numpy operations, instead of a parse and a Python loop per line.

Replay gives what the reference fold would give, bit for bit: values are summed in the same
order (`numpy.bincount` adds its weights in input order), and a body whose values the reference
would reject (negative, NaN, too large) is not replayed at all (`replay` returns None and the
caller runs the reference path, which reports the problems). The side readers (LLM, capacity)
get the same samples in the same order. Pure: no I/O.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Container, Iterator, Mapping
from operator import itemgetter

import numpy as np

from triton_sre.exporter.metricsfold import SeriesPlacer
from triton_sre.exporter.snapshot import MAX_VALUE, ROW_FAMILIES, CounterRow, ModelKey
from triton_sre.triton.exposition import Labels, Sample
from triton_sre.triton.skeleton import Skeleton

log = logging.getLogger(__name__)

_WIDTH = len(ROW_FAMILIES)


class CounterTable(Mapping[ModelKey, CounterRow]):
    """Per-model counter rows as one matrix (rows in `order`, columns `snapshot.ROW_FAMILIES`,
    NaN: not exported): what `metricsfold.counters_from_samples` returns, without a tuple per row."""

    __slots__ = ("index", "matrix", "order")

    def __init__(
        self, order: tuple[ModelKey, ...], index: Mapping[ModelKey, int], matrix: np.ndarray
    ) -> None:
        self.order = order
        self.index = index
        self.matrix = matrix

    def __getitem__(self, key: ModelKey) -> CounterRow:
        return tuple(self.matrix[self.index[key]].tolist())

    def __iter__(self) -> Iterator[ModelKey]:
        return iter(self.order)

    def __len__(self) -> int:
        return len(self.order)

    def __contains__(self, key: object) -> bool:
        return key in self.index


def _getter(indices: list[int]) -> Callable[[list[str]], tuple[str, ...]]:
    if not indices:
        return lambda values: ()
    if len(indices) == 1:
        only = indices[0]
        return lambda values: (values[only],)
    return itemgetter(*indices)


def _numbered(numbers: dict[str, int], name: str, taken: int) -> tuple[int, int]:
    """`name`'s number in `numbers` (the next one, `taken`, when it has none yet) and how many are taken."""
    number = numbers.setdefault(name, taken)
    return number, taken + (number == taken)


class MetricsPlan:
    """How the values of one skeleton's bodies fold into per-model rows (see the module doc)."""

    def __init__(
        self,
        skeleton: Skeleton,
        *,
        keep: Callable[[str], bool],
        side_names: Container[str] = (),
        side_inert: Callable[[str, Labels], bool] = lambda name, labels: False,
    ) -> None:
        """Raises ValueError when the skeleton holds a series twice (the reference fold reports
        that at every poll, so such bodies are never replayed)."""
        # the samples' names and labels are not needed after this (a few MB at 1,000 models)
        self.skeleton = skeleton.without_samples()
        placer: SeriesPlacer[int] = SeriesPlacer()  # family -> group, as the reference's values
        counted: list[int] = []  # value index of each per-model sample, body order
        groups: list[int] = []  # its group (one per series total, summed over `reason`)
        side: list[tuple[int, str, Labels]] = []
        n_groups = 0
        for index, name, labels in skeleton.samples:
            if not keep(name):
                continue
            if name in side_names and not side_inert(name, labels):
                side.append((index, name, labels))
            values = placer.values_for(name, labels)  # DuplicateSeries is a ValueError
            if values is None:
                continue
            group, n_groups = _numbered(values, name, n_groups)
            counted.append(index)
            groups.append(group)
        totals, per_gpu = placer.totals, placer.per_gpu
        # a model's series without gpu_uuid plus its per-GPU ones, summed first (`fold_gpus`)
        summed: dict[ModelKey, dict[str, int]] = {}
        gpu_sources: list[int] = []
        gpu_cells: list[int] = []
        n_summed = 0
        for (key, _uuid), gpu_values in per_gpu.items():
            cells = summed.setdefault(key, {})
            for name, group in gpu_values.items():
                cell, n_summed = _numbered(cells, name, n_summed)
                gpu_sources.append(group)
                gpu_cells.append(cell)
        zero, absent = n_groups + n_summed, n_groups + n_summed + 1  # the 0.0 and NaN ending the pool
        for key in summed:
            totals.setdefault(key, {})
        sources: list[int] = []  # per cell: its series without gpu_uuid (or 0.0, or NaN: neither) ...
        gpu_parts: list[int] = []  # ... and its per-GPU sum (or 0.0)
        for key, values in totals.items():
            cells = summed.get(key, {})
            for family in ROW_FAMILIES:
                group = values.get(family)
                cell = cells.get(family)
                sources.append(group if group is not None else zero if cell is not None else absent)
                gpu_parts.append(n_groups + cell if cell is not None else zero)
        self.order = tuple(totals)
        self.index = {key: i for i, key in enumerate(self.order)}
        self.gpus = frozenset(placer.gpus)
        self._n_groups = n_groups
        self._n_summed = n_summed
        self._counted = len(counted)
        self._take = _getter(counted + [index for index, _, _ in side])
        self._groups = np.array(groups, dtype=np.intp)
        self._gpu_sources = np.array(gpu_sources, dtype=np.intp)
        self._gpu_cells = np.array(gpu_cells, dtype=np.intp)
        self._sources = np.array(sources, dtype=np.intp)
        self._gpu_parts = np.array(gpu_parts, dtype=np.intp)
        self._side = [(name, labels) for _, name, labels in side]

    def replay(self, text: str) -> tuple[CounterTable, frozenset[str], list[Sample]] | None:
        """The fold of `text` and its side samples (body order), or None when `text` is not this
        skeleton's body with new values, or holds a value the reference fold would reject."""
        values = self.skeleton.values(text)
        return None if values is None else self.replay_values(values)

    def replay_values(self, values: list[str]) -> tuple[CounterTable, frozenset[str], list[Sample]] | None:
        """`replay` of the body whose value strings (`Skeleton.values`) are `values`."""
        strings = self._take(values)
        numbers = np.array(list(map(float, strings)), dtype=np.float64) if strings else np.zeros(0)
        counted = numbers[: self._counted]
        if not np.all((counted >= 0.0) & (counted <= MAX_VALUE)):  # also false for NaN
            return None
        groups = np.bincount(self._groups, weights=counted, minlength=self._n_groups)
        summed = np.bincount(self._gpu_cells, weights=groups[self._gpu_sources], minlength=self._n_summed)
        pool = np.concatenate((groups, summed, [0.0, np.nan]))
        matrix = (pool[self._sources] + pool[self._gpu_parts]).reshape(len(self.order), _WIDTH)
        side_values = numbers[self._counted :].tolist()
        samples = [
            Sample(name, labels, value) for (name, labels), value in zip(self._side, side_values, strict=True)
        ]
        return CounterTable(self.order, self.index, matrix), self.gpus, samples


def same_rows(a: Mapping[ModelKey, CounterRow], b: Mapping[ModelKey, CounterRow]) -> bool:
    """Equal per-model rows, NaN equal to NaN (absent in both)."""
    if a.keys() != b.keys():
        return False
    for key in a:
        for x, y in zip(a[key], b[key], strict=True):
            if not (x == y or (x != x and y != y)):
                return False
    return True


class Replayer:
    """Replay planning: learns a `MetricsPlan` from bodies the reference path folded, and replays
    later bodies of the same skeleton with it.

    The first clean body makes a plan at once (Triton repeats its lines, so the second poll is
    already replayed: at 10,000 models a second full parse and fold cost seconds). After that, a
    new skeleton makes a plan once it was seen at two polls in a row (a server whose lines change
    order at every scrape then costs one plan and then one regex split per poll, not a plan per
    poll). A plan is used only if replaying that very body gives the reference's result: its rows,
    its GPUs, and (checked by the caller's `same_side`) what its side readers make of its side
    samples.
    """

    def __init__(
        self,
        *,
        keep: Callable[[str], bool],
        side_names: Container[str] = (),
        side_inert: Callable[[str, Labels], bool] = lambda name, labels: False,
    ) -> None:
        self._keep = keep
        self._side_names = side_names
        self._side_inert = side_inert
        self.plan: MetricsPlan | None = None
        self._candidate: tuple[int, bytes, bytes] | None = None  # the last clean body's fingerprint
        self._eager = True  # no body offered yet: the first one makes a plan without a second

    def replay(self, text: str) -> tuple[CounterTable, frozenset[str], list[Sample]] | None:
        """The learned plan's fold of `text`; None without a plan or when it does not fit."""
        return self.plan.replay(text) if self.plan is not None else None

    def learn(
        self,
        text: str,
        rows: Mapping[ModelKey, CounterRow],
        gpus: frozenset[str],
        same_side: Callable[[list[Sample]], bool],
    ) -> None:
        """Offer a body the reference path folded without a problem into `rows` and `gpus`."""
        if self._eager:
            self._eager = False
        else:
            fingerprint = Skeleton.fingerprint(text)
            if fingerprint != self._candidate:
                self._candidate = fingerprint
                return
            self._candidate = None
        skeleton = Skeleton.of(text, keep=self._keep)
        if skeleton is None:  # not the plain shape: stay on the reference path
            return
        try:
            plan = MetricsPlan(
                skeleton, keep=self._keep, side_names=self._side_names, side_inert=self._side_inert
            )
        except ValueError:
            return
        replayed = plan.replay(text)
        if replayed is None or not (
            same_rows(replayed[0], rows) and replayed[1] == gpus and same_side(replayed[2])
        ):
            log.warning("metrics replay disagrees with the reference fold; not replaying")
            return
        self.plan = plan
