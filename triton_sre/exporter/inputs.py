"""The exporter's side of `triton-sre doctor`: `triton_sre_input_missing{check}` from its own poll.

The checks are doctor's (doctor/checks.py); this only keeps their inputs as the poll sees them,
cheaply: the watched families are looked up only when a metrics body takes the full parse (a
replayed body has the same skeleton, hence the same families), model facts only when a config is
fetched, and the checks re-run only when one of their inputs changed. Triton's version comes from
exporter/release.py (read at start and when Triton comes back): with it, a check whose input this release
predates carries `needs_release` (the release that has it), which the alert does not page for; without it
(not read yet), `needs_release` is "" and the check reads as a setup fault.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Gauge

from triton_sre import conventions as c
from triton_sre.doctor.checks import triton_checks
from triton_sre.doctor.facts import ModelFacts, TritonFacts, families_present, model_facts


class InputWatch:
    def __init__(self, registry: CollectorRegistry) -> None:
        self._gauge = Gauge(
            c.M_INPUT_MISSING,
            "1 when an input triton-sre needs from Triton is missing (see `triton-sre doctor`).",
            [c.L_CHECK, c.L_NEEDS_RELEASE],
            registry=registry,
        )
        self._needs: dict[str, str] = {}  # check -> its series' needs_release (one series a check)
        self.version: str | None = None  # Triton's server version, set by the poll (exporter/release.py)
        self._families: frozenset[str] | None = None
        self._models: dict[str, ModelFacts] = {}
        self._models_seen = 0  # bumped whenever _models changes: compared instead of the facts
        self._last_key: Any = None

    def saw_body(self, text: str) -> None:
        """A metrics body that took the full parse (its skeleton may differ from the last)."""
        self._families = families_present(text)

    def saw_config(self, name: str, config: Mapping[str, Any]) -> None:
        self._models[name] = model_facts(name, config)
        self._models_seen += 1

    def keep(self, names: Container[str]) -> None:
        """Forget the models that left (unloaded, or their config no longer readable)."""
        kept = {name: facts for name, facts in self._models.items() if name in names}
        if len(kept) != len(self._models):
            self._models = kept
            self._models_seen += 1

    def update(self, llm_models: Iterable[str], memory: Mapping[str, str]) -> None:
        """Re-run the checks when an input changed; `memory` maps a model reporting memory_usage to
        the type of its first entry."""
        if self._families is None:
            return
        llm = frozenset(llm_models)
        reporting = frozenset(memory)
        key = (self._families, self._models_seen, llm, reporting, self.version)
        if key == self._last_key:
            return
        self._last_key = key
        facts = TritonFacts(
            version=self.version,
            families=self._families,
            models=tuple(self._models.values()),
            llm_models=llm,
            memory_models=reporting,
            gpu_memory_models=frozenset(m for m, kind in memory.items() if kind == c.MEMORY_TYPE_GPU),
        )
        for check in triton_checks(facts):
            was = self._needs.get(check.id)
            if was is not None and was != check.needs_release:
                self._gauge.remove(check.id, was)
            self._needs[check.id] = check.needs_release
            self._gauge.labels(check.id, check.needs_release).set(1 if check.missing else 0)
