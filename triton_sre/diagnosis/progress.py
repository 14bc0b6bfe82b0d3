"""Pure: which models a log shows starting to load and never finishing (the log ends first).

A paste often stops before the failure: the user copied the start of the log, or the container was
killed mid-load. No line names a cause then, and an empty list of findings alone reads as "all
fine". Core logs each model's load and its outcome (``src/model_repository_manager/model_lifecycle.cc``,
every release since the lifecycle split, 21.xx on; ``model_repository_manager.cc`` before):

- start: ``loading: <model>:<version>``;
- outcome: ``successfully loaded '<model>'`` (with `` version <v>`` before 22.xx), ``failed to load
  '<model>'`` (any tail), ``successfully unloaded '<model>'``, or the model's row in the status table.

A model whose start is in the log and whose outcome is not is reported as still loading, so the
reader knows the outcome is missing rather than absent (`Report.still_loading`).

It also notes where the server began to stop: its exit handler's ``Signal (15) received.`` / ``Signal (2)
received.`` (server ``src/triton_signal.cc``), then ``Waiting for in-flight requests to complete.``,
``Timeout N: Found M live models ...`` and ``All models are stopped, unloading models`` (``src/main.cc``,
20.xx on). A crash after that line ended a server that was already stopping (`stopping_line`), unless a
load starts in between (the log holds the next run).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Final

from triton_sre.diagnosis.events import SOURCE_TABLE, LogEvent

__all__ = ["STOP_MARK", "LoadProgress"]

_START: Final = re.compile(r"loading: (?P<model>\S+):(?P<version>\d+)\s*$")
_OUTCOME: Final = re.compile(
    r"(?:successfully loaded|failed to load|successfully unloaded) '(?P<model>[^']+)'"
    r"|unloading: (?P<unload>\S+):\d"
)
# (the parser has already unquoted 24.06's JSON-escaped messages: these words start the message)
_FIRST_WORDS: Final = ("loading: ", "successfully ", "failed to load '", "unloading: ")
STOP_MARK: Final = "Waiting for in-flight requests"
"""The first ``I`` line of a stop (the signal lines before it are unprefixed): the chunk scanner keeps it."""
_STOP_WORDS: Final = (
    "Signal (15) received",
    "Signal (2) received",
    STOP_MARK,
    "Timeout ",
    "All models are stopped",
)
_STOP: Final = re.compile(
    r"Signal \((?:15|2)\) received|Waiting for in-flight requests to complete"
    r"|Timeout \d+: Found \d+ live models|All models are stopped, unloading models"
)
_STOP_LINE: Final = re.compile(rf"(?m)^[ \t]*(?:{_STOP.pattern})")
"""The same words on a later line of an event (an unprefixed line folded under the line before it)."""
MAX_TRACKED: Final = 10_000
"""Models followed at once (a log of a huge repository must not grow this without bound)."""


class LoadProgress:
    """Feed every event in order; `still_loading()` names the loads with no outcome yet."""

    def __init__(self) -> None:
        self._open: dict[str, str] = {}
        self._seen: set[str] = set()  # every model whose load the log shows starting (bounded)
        self.stopping_line: int | None = None
        """The first line at which the server began to stop (its exit handler's words), if any."""

    def note(self, event: LogEvent) -> None:
        if event.source == SOURCE_TABLE:
            if event.model is not None:
                self._open.pop(event.model, None)
            return
        if self.stopping_line is None:
            message = event.message
            if message.startswith(_STOP_WORDS) and _STOP.match(message):
                self.stopping_line = event.line
                return
            if "\n" in message and (stop := _STOP_LINE.search(message)) is not None:
                self.stopping_line = event.line + message.count("\n", 0, stop.start())
        if not event.message.startswith(_FIRST_WORDS):  # most lines: one C-level prefix test
            return
        first = event.message.split("\n", 1)[0]
        start = _START.match(first)
        if start:
            self.stopping_line = None  # a server that loads again is another run (a restart in one log)
            if len(self._open) < MAX_TRACKED or start["model"] in self._open:
                self._open[start["model"]] = start["version"]
            if len(self._seen) < MAX_TRACKED:
                self._seen.add(start["model"])
            return
        outcome = _OUTCOME.match(first)
        if outcome:
            self._open.pop(outcome["model"] or outcome["unload"], None)

    def started(self, model: str) -> bool:
        """The log shows a load of ``model`` starting (``loading: <model>:<version>``)."""
        return model in self._seen

    def still_loading(self, explained: Collection[str] = ()) -> tuple[str, ...]:
        """``model:version`` of each load whose outcome the log does not show, in log order; models
        in ``explained`` (a finding names them: their failure is in the log) left out."""
        return tuple(f"{m}:{v}" for m, v in self._open.items() if m not in explained)
