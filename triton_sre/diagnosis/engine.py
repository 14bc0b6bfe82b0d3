"""Pure diagnosis: log events (or an UNAVAILABLE reason) -> findings with runbook ids.

`Diagnoser` consumes `LogEvent`s one at a time (constant memory in the log's length: state is
per model, plus bounded lists) and `finish()` returns a `Report`:

- each event is read into that state by the line reader (linereader.py, a mixin): harmless and
  summary lines, the lines naming a model and its fate, causes classified by `rules.CAUSE_RULES`
  (first match wins, so no two runbooks claim the same line), model-less causes waiting for the
  model failure that follows, error lines nothing explains grouped as ``unmatched``, never dropped;
- `finish()` reads what the whole log says: the driver's finding where nothing else failed, then
  per model the most specific cause (an ensemble that failed because a step failed is a
  consequence, listed after the step's own finding), then how the log ends (loads open when the
  server crashed, a crash after the server began to stop).

`diagnose_reason` is the one-reason form the exporter uses for its ``runbook`` label.

This module holds the state and its lifecycle; `linereader.py` reads one event, `reasons.py` reads
one message, `assemble.py` turns the collected state into ordered findings, `report.py` holds the
result types (re-exported here).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

from triton_sre import conventions as c
from triton_sre.diagnosis.assemble import FindingBuilder, ModelState, Obs
from triton_sre.diagnosis.blocks import folded_line
from triton_sre.diagnosis.dropped import name_dropped_settings
from triton_sre.diagnosis.echoes import bind_note, fold_echoes
from triton_sre.diagnosis.events import SOURCE_OPTION, SOURCE_RAW, LogEvent
from triton_sre.diagnosis.gpu_context import GpuContext, unfinished_start
from triton_sre.diagnosis.linereader import LineReader
from triton_sre.diagnosis.lineshape import LEVEL_ERROR
from triton_sre.diagnosis.logparse import parse
from triton_sre.diagnosis.pending import PendingCauses
from triton_sre.diagnosis.progress import LoadProgress
from triton_sre.diagnosis.quoted import QuotedComments
from triton_sre.diagnosis.reasons import (
    classify_reason,
    diagnose_reason,
    index_events,
    template_of,
)
from triton_sre.diagnosis.releases import ReleaseReader
from triton_sre.diagnosis.report import Evidence, Finding, Report, Unmatched
from triton_sre.diagnosis.repositories import OPTION_PREFIX, RepositoryPaths
from triton_sre.diagnosis.settle import stub_lock_abort
from triton_sre.diagnosis.severity import is_failure_line
from triton_sre.diagnosis.signals import crash_report_start
from triton_sre.diagnosis.worded import WordedFailures

__all__ = [
    "Diagnoser",
    "Evidence",
    "Finding",
    "Report",
    "Unmatched",
    "classify_reason",
    "diagnose_events",
    "diagnose_index",
    "diagnose_reason",
    "template_of",
]


def _error_first(event: LogEvent) -> bool:
    """The event is an error: by its logger's level, or, pasted with none, by its first line's own failure
    format (`severity.is_failure_line`: TensorRT-LLM's ``[TensorRT-LLM][ERROR]``, a status code string)."""
    if event.level == LEVEL_ERROR:
        return True
    return not event.level and is_failure_line(event.message.split("\n", 1)[0], LEVEL_ERROR)


class Diagnoser(LineReader):
    """Feed events in log order, then `finish()`. Holds per-model state only."""

    def __init__(
        self, titles: Mapping[str, str] | None = None, remediations: Mapping[str, str] | None = None
    ) -> None:
        # Both from the runbook catalog (front matter), given by the caller: this module reads no file.
        self._titles = dict(titles or {})
        self._remediations = dict(remediations or {})
        self._models: dict[str, ModelState] = {}
        self._pending = PendingCauses()  # model-less causes waiting for a model failure (pending.py)
        self._summary: list[Obs] = []
        self._server_failures: list[Obs] = []  # the server (or its GPUs) failed; nothing explains it
        self._unmatched: dict[str, list[object]] = {}
        self._unexplained: list[Obs] = []  # error lines no rule explains (bounded)
        self._last_ready = -1  # the index of the last status-table row saying READY
        self._unreachable: list[Obs] = []  # a client's "cannot reach the server" lines
        self._own_lines = False  # a line of Triton's own logger was seen
        self._warning_causes: list[Obs] = []  # warnings naming a cause class, until a failure follows
        self._gpu = GpuContext()  # what CUDA said of the GPU (gpu_context.py)
        self._progress = LoadProgress()  # loads the log starts and never ends (progress.py)
        self._quoted = QuotedComments()  # an input made only of comment lines (quoted.py)
        self._repositories = RepositoryPaths()  # the options table's repositories (repositories.py)
        self._index = 0
        self._attach_after: tuple[ModelState, Obs] | None = None
        self._worded = WordedFailures()  # lines whose words report a failure: the last resort (worded.py)
        self.releases = ReleaseReader()  # the log's release (`diagnose_index`: the live server's)
        self.harmless_lines = 0
        self.serving_lines = 0  # error lines a healthy server writes (level_inventory.py)

    # -- feeding ---------------------------------------------------------------------------------
    def feed_all(self, events: Iterable[LogEvent]) -> Diagnoser:
        for event in events:
            self.feed(event)
        return self

    def feed(self, event: LogEvent) -> None:
        if event.source == SOURCE_OPTION and event.message.startswith(OPTION_PREFIX):
            # a repository the options table lists: noted, not an event (the events' spacing is unchanged)
            self._repositories.note(event.message)
            return
        if (k := crash_report_start(event.message)) is not None and _error_first(event):
            # Triton's crash report folded under an error (a stub's, whose request crashed the server; a
            # pasted "[TensorRT-LLM][ERROR] ..." with glibc's abort after it): an event of its own, so the
            # error names the cause (signals.py) and a cause no page covers does not hide the crash. Under
            # an info line (the server stopping) or a line that says no failure, the crash stays with the
            # line it followed: its wording is read with it.
            lines = event.message.split("\n")
            at = folded_line(event, k, lines[k])[0]
            self._feed(dataclasses.replace(event, message="\n".join(lines[:k])))
            event = LogEvent(at, "", SOURCE_RAW, "\n".join(lines[k:]), lines[k].strip())
        self._feed(event)

    def _feed(self, event: LogEvent) -> None:
        self._index += 1
        self._attach_after = None
        self._read(event, self._index)
        if self._attach_after is not None:  # a model's bare verdict below its cause, in one pasted block
            self._pending.attach(*self._attach_after)

    # -- results ---------------------------------------------------------------------------------
    def _driver_failure(self) -> bool:
        """CUDA found the driver insufficient and nothing else failed: the driver's finding where the
        log needs a GPU or stops at the driver check (`GpuContext.driver_cause`), never on a CPU
        server's log that went on."""
        driver = self._gpu.driver_cause()
        if driver is None:
            return False
        if self._pending.unattached() or self._server_failures or self._unexplained or self._summary:
            return False
        if any(self._gpu.outranks_driver(state) for state in self._models.values()):
            return False
        self._pending.add(driver)
        return True

    def finish(self) -> Report:
        if quoted := self._quoted.lines():
            # Every line was a comment: the log they quote (read once; its own comments stay comments).
            again = Diagnoser(self._titles, self._remediations)
            again._quoted.close()
            again._worded.close()
            return again.feed_all(parse(quoted)).finish()
        stops_at_driver = self._driver_failure()
        release = self.releases.release
        builder = FindingBuilder(
            self._models, fold_echoes(self._pending.unattached()), self._server_failures, self._summary,
            self._unexplained + ([] if self._own_lines else self._unreachable),
            titles=self._titles, remediations=self._remediations, release=release,
            # a load the log started and never finished is no model the table vouches for: its error
            # line may be why (the table then lists only some models), so nothing is disproved
            last_ready=-1 if self._progress.still_loading() else self._last_ready,
        )  # fmt: skip
        unmatched = [
            Unmatched(template, int(entry[0]), entry[1])  # type: ignore[call-overload, arg-type]
            for template, entry in self._unmatched.items()
        ]
        unmatched.sort(key=lambda u: (-u.count, u.example.line))
        found = builder.assemble()
        loading = self._progress.still_loading({f.model for f in found if f.model})
        open_loads = self._progress.still_loading()  # every load the log leaves open, explained or not
        if open_loads and any(f.runbook == c.RUNBOOK_SERVER_CRASHED for f in found):
            # The loads did not outlive the log: the process died while they ran, and their backends are the
            # first suspects of the crash; a model whose own error came first is named too (its load never
            # ended: the crash is what the loading was doing, not another failure).
            found = tuple(_crashed_while_loading(f, open_loads) for f in found)
            loading = ()
        if found and (lock_abort := stub_lock_abort(found, open_loads)) != found:
            found, loading = lock_abort, ()
        found = bind_note(name_dropped_settings(found))
        if stops_at_driver and not self._gpu.driver_present:  # (with a driver on the host: no CPU reading)
            found = unfinished_start(found)
        if (stopping := self._progress.stopping_line) is not None:
            found = _crashes_while_stopping(found, stopping)
        if not found:
            found = self._worded.finding(self._titles, self._remediations)
        return Report(
            found,
            tuple(unmatched),
            self.harmless_lines,
            self._index,
            release,
            loading,
            serving_lines=self.serving_lines,
        )


def diagnose_events(events: Iterable[LogEvent]) -> Report:
    """Diagnose a whole sequence of events."""
    return Diagnoser().feed_all(events).finish()


def diagnose_index(
    index: Iterable[Mapping[str, object]],
    titles: Mapping[str, str] | None = None,
    remediations: Mapping[str, str] | None = None,
    server_version: str | None = None,
) -> Report:
    """Findings for a live server from ``POST /v2/repository/index`` entries (UNAVAILABLE ones);
    ``server_version`` (``GET /v2``'s) names the release."""
    diagnoser = Diagnoser(titles, remediations)
    if server_version:
        diagnoser.releases.note_version(server_version)
    return dataclasses.replace(diagnoser.feed_all(index_events(index)).finish(), live=True)


def _crashed_while_loading(finding: Finding, loading: tuple[str, ...]) -> Finding:
    if finding.runbook != c.RUNBOOK_SERVER_CRASHED:
        return finding
    names = ", ".join(loading)
    one = len(loading) == 1
    suspects = "that model's backend is the first suspect" if one else "their backends are the first suspects"
    note = f"It crashed while loading {names}: {suspects}."
    return dataclasses.replace(finding, remediation=f"{note} {finding.remediation}".strip())


def _crashes_while_stopping(found: tuple[Finding, ...], stopping: int) -> tuple[Finding, ...]:
    """A crash after the server began to stop ended a server that served no more: a warning (its exit
    status is still not 0, which a restart policy or a job may count), listed after what failed."""
    out = []
    for f in found:
        late = bool(f.evidence) and f.evidence[0].line > stopping
        if f.runbook == c.RUNBOOK_SERVER_CRASHED and f.model is None and late:
            note = (
                f"It crashed after the server began to stop (line {stopping}): no request was being served, "
                "but the exit status is not 0."
            )
            fix = f"{note} {f.remediation}".strip()
            f = dataclasses.replace(f, severity=c.IMPACT_WARNING, remediation=fix)
        out.append(f)
    return tuple(sorted(out, key=lambda f: f.severity != c.IMPACT_CRITICAL))
