"""Pure: cause lines that name no model, waiting for the model failure they explain.

A libprotobuf error, ``ERROR: Failed to create instance: ...`` or a stub's traceback is printed
before core's ``failed to load 'm'`` line that names the model. The engine keeps such lines here;
a model failure that follows within `ATTACH_WINDOW` events takes the ones that say the same thing
(the same runbook, or their text inside its reason). Lines that never attach become orphans:
assemble.py still reports them (never dropped), as server-wide findings.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Final

from triton_sre import conventions as c
from triton_sre.diagnosis.assemble import ModelState, Obs
from triton_sre.diagnosis.rules import RANK

__all__ = ["ATTACH_WINDOW", "MAX_PENDING", "PendingCauses"]

MAX_PENDING: Final = 64
"""Waiting lines kept at once; the oldest becomes an orphan past this."""
ATTACH_WINDOW: Final = 12
"""A model-less cause line attaches to a model failure at most this many events later."""
QUOTE_WINDOW: Final = MAX_PENDING
"""... or this many, when the failure quotes the line's words: the Python stub's ``Failed to initialize Python
stub: <exception>`` comes before core's ``failed to load 'm' version 1: Internal: <exception>``, and the other
loads of a parallel start can write many lines in between (the sweep of diag27: 21 events)."""


class PendingCauses:
    """The waiting lines (in log order) and the orphans that never attached."""

    def __init__(self) -> None:
        self._waiting: list[Obs] = []
        self.orphans: list[Obs] = []

    def __bool__(self) -> bool:
        return bool(self._waiting)

    def __iter__(self) -> Iterator[Obs]:
        return iter(self._waiting)

    def add(self, obs: Obs) -> None:
        self._waiting.append(obs)
        if len(self._waiting) > MAX_PENDING:
            self.orphans.append(self._waiting.pop(0))

    def drop(self, unwanted: Callable[[Obs], bool]) -> None:
        """Forget waiting lines a later line showed to be no cause (a recovered import)."""
        self._waiting = [obs for obs in self._waiting if not unwanted(obs)]

    def attach(self, state: ModelState, failure: Obs) -> None:
        """Give ``state`` the waiting lines that explain ``failure``; too old ones become orphans."""
        keep: list[Obs] = []
        generic = failure.runbook in (None, c.RUNBOOK_PYTHON_MODEL_ERROR)
        for obs in self._waiting:
            key = obs.reason.split("\n", 1)[0]
            key = key.split(": ", 1)[1] if key.startswith(("ERROR: ", "Failed to")) and ": " in key else key
            quoted = len(key) > 12 and key[:120] in failure.reason
            age = failure.index - obs.index
            if age > ATTACH_WINDOW and not (quoted and age <= QUOTE_WINDOW):
                (self.orphans if age > QUOTE_WINDOW or obs.runbook is None else keep).append(obs)
                continue
            if (
                obs.runbook == failure.runbook
                or quoted
                or (
                    generic
                    and obs.runbook is not None
                    and RANK[obs.runbook] < RANK[c.RUNBOOK_PYTHON_MODEL_ERROR]
                )
            ):
                state.add(obs)
            else:
                keep.append(obs)
        self._waiting = keep

    def unattached(self) -> list[Obs]:
        """Orphans first, then the lines still waiting at the log's end."""
        return self.orphans + self._waiting
