"""A Triton restart between two polls (exporter/restarts.py), on real bodies: the release captures of
2.36-2.51 (tests/data/releases/: `metrics_1.txt` is a fresh server, `metrics_2.txt` the same server after
the traffic) and two scrapes of one GPU server (tests/data/scrapes/sonic_exatrkx_gpu_energy_22.x*).

A restarted process shows what a fresh one shows: the `metrics_2` -> `metrics_1` step is a restart of the
same release, `metrics_2` of one release -> `metrics_1` of a later one an upgrade behind the same address.
A model unloaded and loaded again shows its fresh lines among the others' (measured on 2.51: its counters
start from 0; a load of a loaded model keeps them, restart33 in bench/RESULTS.md).
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry
from test_exporter_releases import IDS, RELEASES, CapturedTriton, load
from test_exporter_scrapes import samples_of, value

from triton_sre import conventions as c
from triton_sre.config import ExporterSettings
from triton_sre.exporter.capacity import CapacityWatch, energy_rows
from triton_sre.exporter.llm import LLMCollector
from triton_sre.exporter.restarts import RestartWatch, counts_of, energy_reset, restarted
from triton_sre.exporter.service import Exporter, _counters_from_text
from triton_sre.exporter.snapshot import Problems

SCRAPES = Path(__file__).parent / "data" / "scrapes"


def read(body: bytes | str) -> tuple[dict, dict[str, float]]:
    """A body's per-model counters and its GPUs' energy (joules), through the exporter's own parse."""
    text = body.decode() if isinstance(body, bytes) else body
    watch = CapacityWatch()
    counters, _ = _counters_from_text(text, Problems(), LLMCollector(), watch)
    return counters, {uuid: joules for uuid, (joules,) in energy_rows(watch.reading()).items()}


def seen(before: bytes | str, now: bytes | str) -> bool:
    (a, energy_a), (b, energy_b) = read(before), read(now)
    return energy_reset(energy_a, energy_b) or restarted(counts_of(a), counts_of(b))


def spliced(body: bytes, other: bytes, *models: str) -> bytes:
    """`body` with the models' sample lines taken from `other` (dropped where `other` has none)."""
    text = body.decode()
    for model in models:
        mine = re.compile(rf'^[a-z_]+\{{model="{re.escape(model)}",.*$\n?', re.MULTILINE)
        theirs = {line.split(" ")[0]: line for line in mine.findall(other.decode())}
        text = mine.sub(lambda m, theirs=theirs: theirs.get(m.group(0).split(" ")[0], ""), text)
    return text.encode()


@pytest.mark.parametrize("folder", RELEASES, ids=IDS)
def test_the_traffic_is_no_restart_and_a_fresh_process_is_one(folder: Path) -> None:
    fresh, served = load(folder)["metrics"]
    assert not seen(fresh, served)  # counters grew
    assert not seen(served, served)  # an idle interval (or a model loaded again while loaded)
    assert seen(served, fresh)  # every counted model version back at 0


@pytest.mark.parametrize("folder", RELEASES, ids=IDS)
def test_one_model_unloaded_and_loaded_again_is_no_restart(folder: Path) -> None:
    fresh, served = load(folder)["metrics"]
    reloaded = spliced(served, fresh, "vector_scale")
    assert read(reloaded)[0][("vector_scale", "1")][:4] == (0.0, 0.0, 0.0, 0.0)
    assert read(served)[0][("vector_scale", "1")][0] > 0
    assert not seen(served, reloaded)  # the other counted models kept their counts
    # a restart after which that model did not load (its series gone): the others still reset
    assert seen(served, spliced(fresh, b"", "vector_scale"))


def test_an_upgrade_behind_the_same_address_is_a_restart_whatever_the_releases() -> None:
    for older, newer in itertools.combinations(RELEASES, 2):
        assert seen(load(older)["metrics"][1], load(newer)["metrics"][0]), (older.name, newer.name)
        assert seen(load(newer)["metrics"][1], load(older)["metrics"][0]), (newer.name, older.name)


def test_what_the_rule_misses_and_what_it_counts_wrongly() -> None:
    fresh, served = load(RELEASES[-1])["metrics"]
    assert not seen(fresh, fresh)  # a server that had counted nothing: no evidence
    counted = [m for (m, _), row in read(served)[0].items() if row[0] > 0]
    assert len(counted) >= 5
    # every counted model failed to load after the restart (their series gone): missed
    assert not seen(served, spliced(served, b"", *counted))
    # every counted model unloaded and loaded again between two polls: counted as a restart (documented)
    assert seen(served, spliced(served, fresh, *counted))


def test_a_gpu_energy_counter_that_went_down_is_a_restart_even_of_an_idle_server() -> None:
    first = (SCRAPES / "sonic_exatrkx_gpu_energy_22.x_first.txt").read_text()
    later = (SCRAPES / "sonic_exatrkx_gpu_energy_22.x.txt").read_text()
    (_, energy_a), (b, energy_b) = read(first), read(later)
    assert len(energy_a) == 1 and energy_a.keys() == energy_b.keys()
    assert not seen(first, later) and seen(later, first)
    nothing = counts_of({})  # no counted model: the energy alone says it
    assert energy_reset(energy_b, energy_a) and not restarted(nothing, nothing)
    assert not energy_reset(energy_a, energy_b)
    assert not energy_reset(energy_b, {"GPU-other": 1.0})  # a new GPU: no step
    assert not restarted(counts_of(b), counts_of(b))


def test_the_watch_compares_with_the_last_poll_that_read_the_counters_and_counts() -> None:
    fresh, served = (read(body)[0] for body in load(RELEASES[-1])["metrics"])
    registry = CollectorRegistry()
    watch = RestartWatch(registry)
    assert [watch.observe(x, {}) for x in (fresh, served, None, None, served)] == [False] * 5
    assert watch.observe(fresh, {})  # a restart while Triton was unreachable: seen when it is back
    assert not watch.observe(fresh, {})
    assert registry.get_sample_value(c.M_TRITON_RESTARTS) == 1.0


class RestartingTriton(CapturedTriton):
    """Answers poll n with capture `steps[n]` (a folder's capture and which of its two bodies)."""

    def __init__(self, steps: list[tuple[Path, int]]) -> None:
        self.steps = steps
        self.polls = 0
        self.reads = 0

    @property
    def capture(self) -> dict[str, Any]:  # type: ignore[override]
        return load(self.steps[min(self.polls, len(self.steps)) - 1][0])

    def _i(self) -> int:
        return self.steps[min(self.polls, len(self.steps)) - 1][1]

    def metrics(self) -> bytes:
        self.polls += 1
        return self.capture["metrics"][self._i()]

    def server_metadata(self) -> dict[str, Any]:
        self.reads += 1
        return super().server_metadata()

    def repository_index(self) -> list[dict[str, Any]]:
        return self.capture["api"][self._i()]["index"]["body"]

    def all_stats(self) -> list[dict[str, Any]]:
        return self.capture["api"][self._i()]["stats"]["body"]["model_stats"]

    def model_config(self, model: str, version: str = "") -> dict[str, Any]:
        return self.capture["api"][self._i()]["configs"][model]["body"]


def test_the_exporter_sees_an_upgrade_within_one_poll_interval_and_reads_the_new_release() -> None:
    """2.36 serves; before the next poll 2.51 has replaced it behind the same address, and no poll failed."""
    old, new = RELEASES[0], RELEASES[-1]
    triton = RestartingTriton([(old, 0), (old, 1), (new, 0), (new, 1)])
    exporter = Exporter(
        ExporterSettings(interval=1, window=600),
        client=triton,  # type: ignore[arg-type]
        clock=itertools.count(1_800_000_000).__next__,
    )
    versions, restarts = [], []
    for _ in range(4):
        assert exporter.poll_once() is not None
        got = samples_of(exporter.metrics_text().decode())
        versions.append([s.labels[c.LABEL_VERSION] for s in got[c.M_TRITON_INFO]])
        restarts.append(value(got, c.M_TRITON_RESTARTS))
        assert value(got, c.M_UP) == 1.0
    assert versions == [[old.name], [old.name], [new.name], [new.name]]
    assert restarts == [0.0, 0.0, 1.0, 1.0]
    assert triton.reads == 2  # GET /v2 at the first poll and at the restart's, no other
