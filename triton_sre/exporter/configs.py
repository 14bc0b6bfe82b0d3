"""The model configs the exporter keeps beside its poll (ConfigCache).

A Triton with many models must not cost one HTTP call per model per poll: a config is fetched when
its model appears or its versions' states change, at most CONFIG_FETCHES_PER_POLL a poll and under
the poll's deadline (the rest wait for the next poll). Triton serves no config for a model with no
version READY; a config too large or that does not decode is remembered as unknown until its model
changes; a model that left the index is forgotten. Each config read is shown to doctor's input
checks (exporter/inputs.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from triton_sre import conventions as c
from triton_sre import tracing
from triton_sre.exporter.inputs import InputWatch
from triton_sre.exporter.snapshot import IndexEntry, ModelConfigSummary, Problems, config_summary
from triton_sre.triton.client import BudgetSpent, FetchError

__all__ = ["CONFIG_FETCHES_PER_POLL", "ConfigCache"]

CONFIG_FETCHES_PER_POLL = 64

# A config that is too large or does not decode is not fetched again until the model changes.
_DETERMINISTIC_FAULTS = frozenset({c.FAULT_PARSE, c.FAULT_TOO_LARGE})


@dataclass
class _ConfigEntry:
    signature: tuple[tuple[str, str], ...]
    summary: ModelConfigSummary | None  # None: the config could not be read or decoded


def _config_summary(config: Any, problems: Problems) -> ModelConfigSummary:
    return config_summary(config)


class ConfigCache:
    """Model name -> its config's summary, kept in step with the repository index.

    `record_error(target, kind, message)` counts a failed fetch; `decode(target, decoder, payload)`
    is the exporter's guarded decode (None when the payload does not decode, counted there)."""

    def __init__(
        self,
        tracer: Any,
        inputs: InputWatch,
        record_error: Callable[[str, str, str], None],
        decode: Callable[..., Any],
    ) -> None:
        self._tracer = tracer
        self._inputs = inputs
        self._record_error = record_error
        self._decode = decode
        self.entries: dict[str, _ConfigEntry] = {}
        # model -> config summary as snapshots carry it; a new mapping whenever a config changes
        self.view: dict[str, ModelConfigSummary] = {}
        self._settled: list[IndexEntry] | None = None  # an index whose configs need nothing more

    def __len__(self) -> int:
        """Models whose config was read or found unreadable."""
        return len(self.entries)

    def refresh(self, index: list[IndexEntry], reader: Any) -> None:
        """Fetch configs of models that appeared or changed (with `reader`, the poll's client);
        forget models that left the index."""
        if index is self._settled:  # the last call's (unchanged) index, which left nothing pending
            return
        pending = False  # configs left for a later poll: the budget ran out, or a fetch may succeed
        signatures: dict[str, list[tuple[str, str]]] = {}
        for entry in index:
            signatures.setdefault(entry.name, []).append((entry.version, entry.state))
        changed = False
        for gone in set(self.entries) - set(signatures):
            del self.entries[gone]
            changed = True
        budget = CONFIG_FETCHES_PER_POLL
        for name, rows in sorted(signatures.items()):
            signature = tuple(sorted(rows))
            known = self.entries.get(name)
            if known is not None and known.signature == signature:
                continue
            if not any(state == c.STATE_READY for _, state in rows):
                # Triton serves no config for a model that is not loaded; a reload may change it
                changed |= self.entries.pop(name, None) is not None
                continue
            if budget == 0:
                pending = True
                break
            budget -= 1
            with self._tracer.start_as_current_span("GET /v2/models/config"):
                try:
                    config = reader.model_config(name)
                except FetchError as exc:
                    self._record_error(exc.target, exc.kind, str(exc))
                    tracing.mark_error(exc.kind)
                    if isinstance(exc, BudgetSpent):  # the poll's time is up: the rest wait for the next
                        pending = True
                        break
                    if exc.kind in _DETERMINISTIC_FAULTS:  # the same config fails the same way again:
                        self.entries[name] = _ConfigEntry(signature, None)  # remembered until it changes
                        changed = True
                    pending |= exc.kind not in _DETERMINISTIC_FAULTS
                    continue
            summary = self._decode(c.TARGET_CONFIG, _config_summary, config)
            self.entries[name] = _ConfigEntry(signature, summary)
            if summary is not None:
                self._inputs.saw_config(name, config)
            changed = True
        if changed:
            # a new mapping, never mutated: snapshots already holding the old one keep it intact
            self.view = {
                name: entry.summary for name, entry in self.entries.items() if entry.summary is not None
            }
            self._inputs.keep(self.view)
        self._settled = None if pending else index
