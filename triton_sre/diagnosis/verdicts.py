"""Pure: the lines that name a model and say what became of it — the startup table's status rows, core's
load verdicts (``failed to load 'm' version 1: ...``, the polling and load API's), an ensemble's step
refusals — read into that model's state; a mixin of the engine's `Diagnoser`.

A verdict in a pasted block (raw lines: a shell's output, a wrapper's ``ERROR: failed to load model 'm'``)
is quoted from the line it is on, not the block's first line.
"""

from __future__ import annotations

import re

from triton_sre import conventions as c
from triton_sre.diagnosis.assemble import ModelState, Obs, evidence_text
from triton_sre.diagnosis.blocks import deciding_line
from triton_sre.diagnosis.events import LogEvent
from triton_sre.diagnosis.frames import classify
from triton_sre.diagnosis.lineshape import LEVEL_ERROR, join_hand_wraps
from triton_sre.diagnosis.pending import PendingCauses
from triton_sre.diagnosis.reasons import (
    ENSEMBLE_DEPENDS,
    ENSEMBLE_MISSING,
    ENSEMBLE_VERSION,
    FAILED_MODEL,
    FAILED_VERSION,
    LOAD_FAILED_API,
    POLL_FAILED,
    POLL_MODEL,
    STATUS_PREFIX,
    VERSION_NOT_PRESENT,
    classify_reason,
    classify_row,
    ensemble_cause,
)

__all__ = ["VerdictReader"]


def _verdict_line(event: LogEvent, pattern: re.Pattern[str]) -> tuple[int, str]:
    """The line ``pattern`` (a verdict) is on, and its text for the evidence."""
    if "\n" not in event.message:
        return event.line, evidence_text(event)
    return deciding_line(event, lambda piece: pattern.search(piece) is not None)


class VerdictReader:
    """Per-model state from the lines that name a model (the `Diagnoser` holds the state)."""

    _models: dict[str, ModelState]
    _pending: PendingCauses
    _server_failures: list[Obs]
    _last_ready: int

    def _model(self, name: str, version: str | None = None) -> ModelState:
        state = self._models.get(name)
        if state is None:
            state = self._models[name] = ModelState(name)
        if version and not state.version:
            state.version = version
        return state

    def _feed_table_row(self, event: LogEvent, index: int) -> None:
        if event.model is None:
            self._feed_cut_row(event, index)
            return
        status = event.message
        state = self._model(event.model, event.version)
        if status.startswith("READY"):
            state.ready = True
            self._last_ready = index
            return
        reason = STATUS_PREFIX.sub("", status, count=1)
        runbook = classify_row(reason, event.cut)
        obs = Obs(index, event.line, evidence_text(event), LEVEL_ERROR, runbook, reason, True)
        state.failed = True
        state.stuck = False
        state.add(obs)
        self._pending.attach(state, obs)

    def _feed_cut_row(self, event: LogEvent, index: int) -> None:
        """A status cell whose model column was cut off: a failure of an unnamed model."""
        reason = STATUS_PREFIX.sub("", event.message, count=1)
        runbook = classify_reason(reason)
        obs = Obs(index, event.line, evidence_text(event), LEVEL_ERROR, runbook, reason, True)
        if obs.runbook is None:
            self._server_failures.append(obs)
            return
        self._pending.add(obs)

    def _feed_model_line(self, event: LogEvent, index: int) -> bool:
        message = event.message
        level = event.level or LEVEL_ERROR
        m = ENSEMBLE_DEPENDS.search(message)
        if m:
            line, text = _verdict_line(event, ENSEMBLE_DEPENDS)
            state = self._model(m["model"])
            state.failed = True
            state.depends_on.add(m["dep"])
            obs = Obs(index, line, text, level, c.RUNBOOK_ENSEMBLE_DEPENDENCY, message, True)
            state.add(obs)
            if m["reason"]:
                dep = self._model(m["dep"], m["version"])
                dep.failed = True
                dep.inferred.append(
                    Obs(index, line, text, level, classify_reason(m["reason"]), m["reason"], True)
                )
            return True
        m = ENSEMBLE_VERSION.search(message)
        if m:
            state = self._model(m["model"])
            state.failed = True
            line, text = _verdict_line(event, ENSEMBLE_VERSION)
            state.add(Obs(index, line, text, level, classify(message), message, True))
            return True
        m = ENSEMBLE_MISSING.search(message)
        if m:
            state = self._model(m["model"])
            state.failed = True
            state.depends_on.update(d.strip() for d in m["deps"].split(",") if d.strip())
            line, text = _verdict_line(event, ENSEMBLE_MISSING)
            state.add(Obs(index, line, text, level, c.RUNBOOK_ENSEMBLE_DEPENDENCY, message, True))
            return True
        found = ensemble_cause(message)
        if found:
            state = self._model(found[0])
            state.failed = True
            state.add(Obs(index, event.line, evidence_text(event), level, found[1], message, True))
            return True
        verdicts = (FAILED_VERSION, FAILED_MODEL, LOAD_FAILED_API, POLL_FAILED, POLL_MODEL)
        m = next((m for pattern in verdicts if (m := (verdict := pattern).search(message))), None)
        if m is None and (joined := join_hand_wraps(message)) is not message:
            # a load verdict a person wrapped by hand, the model's name on the next line
            m = next((m for pattern in verdicts if (m := pattern.search(joined))), None)
        if m is not None:
            groups = m.groupdict()
            state = self._model(m["model"], groups.get("version"))
            reason = m["reason"]
            line, text = _verdict_line(event, verdict)
            obs = Obs(index, line, text, level, classify_reason(reason), reason, True)
            state.failed = True
            state.stuck = False
            state.add(obs)
            self._pending.attach(state, obs)
            return True
        m = VERSION_NOT_PRESENT.search(message)
        if m:
            state = self._model(m["model"], m["version"])
            line, text = _verdict_line(event, VERSION_NOT_PRESENT)
            state.add(Obs(index, line, text, level, classify(message), message))
            return True
        return False
