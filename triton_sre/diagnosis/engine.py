"""Pure diagnosis: log events (or an UNAVAILABLE reason) -> findings with runbook ids.

`Diagnoser` consumes `LogEvent`s one at a time (constant memory in the log's length: state is
per model, plus bounded lists) and `finish()` returns a `Report`:

- every event is first checked against the lines that are harmless on a CPU host (never a
  cause) and the generic summary lines (``failed to load all models``: a consequence);
- a model and version are taken from the event when it names them (``failed to load 'm' version
  1: ...``, ``Poll failed for model directory 'm'``, a status-table row, a ``.../m/1/model.py``
  path in a traceback), the text is classified by `rules.CAUSE_RULES` (first match wins, so no two
  runbooks claim the same line);
- lines without a model (a libprotobuf error, ``ERROR: Failed to create instance: ...``, a stub
  line) are attached to the model whose failure follows them with the same cause or text;
- per model, the most specific cause wins; an ensemble that failed because a step failed is
  a consequence and is listed after the step's own finding;
- error lines nothing explains are grouped by template as ``unmatched``, never dropped.

`diagnose_reason` is the one-reason form the exporter uses for its ``runbook`` label.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from triton_sre import conventions as c
from triton_sre.diagnosis.logparse import (
    LEVEL_ERROR,
    LEVEL_FATAL,
    LEVEL_INFO,
    SOURCE_OPTION,
    SOURCE_RAW,
    SOURCE_TABLE,
    LogEvent,
    peel_collector_prefix,
)
from triton_sre.diagnosis.releases import advice, release_in
from triton_sre.diagnosis.repeats import memoize_text
from triton_sre.diagnosis.rules import (
    RANK,
    classify,
    from_frames,
    is_backend_failure,
    is_harmless,
    is_server_failure,
    is_summary,
)

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

MAX_EVIDENCE = 12
MAX_EVIDENCE_CHARS = 2000
MAX_UNMATCHED_TEMPLATES = 200
MAX_PENDING = 64
ATTACH_WINDOW = 12
"""A model-less cause line attaches to a model failure at most this many events later."""

_SEVERITY_RANK = {c.IMPACT_CRITICAL: 0, c.IMPACT_WARNING: 1, c.IMPACT_INFO: 2}
_RULE_RANK = RANK
_SYMPTOMS = frozenset({c.RUNBOOK_POD_CRASH_LOOPING})
"""Findings that only say the container restarts: listed after any finding that says why."""


@dataclass(frozen=True, slots=True)
class Evidence:
    line: int
    text: str


@dataclass(frozen=True, slots=True)
class Finding:
    model: str | None
    version: str | None
    runbook: str
    title: str
    severity: str
    evidence: tuple[Evidence, ...]
    remediation: str
    consequence_of: str | None = None
    """For a finding caused by another model's failure (an ensemble step): that model."""
    message: str | None = None
    """The raw failure message Triton gave (the reason after ``failed to load 'm' version v:``,
    a status-table cell, the server's error), so an unexplained failure still says what it was."""


@dataclass(frozen=True, slots=True)
class Unmatched:
    template: str
    count: int
    example: Evidence


@dataclass(frozen=True, slots=True)
class Report:
    findings: tuple[Finding, ...]
    unmatched: tuple[Unmatched, ...]
    harmless_lines: int = 0
    events: int = 0
    release: str | None = None
    """The NGC release (``YY.MM``) the log names (banner or ``server_version``), if any."""

    @property
    def has_failure(self) -> bool:
        """True when any finding is critical (a model, or the server, failed)."""
        return any(f.severity == c.IMPACT_CRITICAL for f in self.findings)


# ----------------------------------------------------------------------------- extraction
_FAILED_VERSION = re.compile(
    r"failed to load '(?P<model>[^']+)' version (?P<version>\d+): (?P<reason>.*)", re.S
)
_FAILED_MODEL = re.compile(r"failed to load model '(?P<model>[^']+)': (?P<reason>.*)", re.S)
_LOAD_FAILED_API = re.compile(
    r"load failed for model '(?P<model>[^']+)': (?:version (?P<version>\d+)(?: is at \w+ state)?: )?"
    r"(?P<reason>.*)",
    re.S,
)
_POLL_FAILED = re.compile(r"Poll failed for model directory '(?P<model>[^']+)': (?P<reason>.*)", re.S)
_POLL_MODEL = re.compile(r"failed to poll model '(?P<model>[^']+)': (?P<reason>.*)", re.S)
_ENSEMBLE_DEPENDS = re.compile(
    r"ensemble '(?P<model>[^']+)' depends on '(?P<dep>[^']+)' which (?:has no loaded version|is not valid)\.?"
    r"(?: Model '[^']+' (?:loading )?failed with error: (?:version (?P<version>\d+) is at \w+ state: )?"
    r"(?P<reason>.*))?",
    re.S,
)
# The step exists but not in the version the ensemble asks for: the ensemble's own config.
_ENSEMBLE_VERSION = re.compile(
    r"ensemble '(?P<model>[^']+)' depends on '(?P<dep>[^']+)' "
    r"whose required version (?P<version>\d+) is not loaded"
)
_ENSEMBLE_MISSING = re.compile(
    r"ensemble '?(?P<model>[^'\s]+?)'? contains models that are not available or ambiguous: (?P<deps>[^\n]*)"
)
# The ensemble's own config is wrong (a step maps a tensor that does not exist): Triton 2.51 writes
# `in ensemble NAME, ensemble tensor X is mapping to non-existing input Y in model STEP`.
_ENSEMBLE_CONFIG = re.compile(r"\bin ensemble '?(?P<model>[^'\s,]+)'?, ")
_VERSION_NOT_PRESENT = re.compile(r"version (?P<version>\d+) is specified for model '(?P<model>[^']+)'")
# A model's own file: <repo>/<model>/<version>/<file>.py (not Triton's temporary copy of a cloud
# repository, /tmp/folderXXXXXX/<version>/, whose folder name is not the model's).
# The same shape names the model when a backend's own error quotes the model file it read
# (``Load model from /models/m/1/model.onnx failed``).
_PY_PATH = re.compile(
    r"/(?!folder[A-Za-z0-9]{6}/)(?P<model>[^/\s'\"]+)/(?P<version>\d+)/[^/\s'\"()]+"
    r"\.(?:py|onnx|plan|engine|pt|pth|graphdef|savedmodel)\b"
)
_STUB = re.compile(r"Failed to (pre)?initialize Python stub|Stub process", re.I)
# A model instance named in a line (``Stub process 'm_0_0' is not healthy``, ``instance group m_0 of
# model m``): Triton names instances <model>_<group>[_<index>].
_INSTANCE = re.compile(
    r"(?:Stub process|model instance|instance) '(?P<inst>[^'\s]+?)(?:_\d+){1,2}'"
    r"|instance group \S+ of model '?(?P<model>[^'\s]+?)'?(?:\s|$)"
)
_STATUS_PREFIX = re.compile(r"^(UNAVAILABLE|Not loaded|LOADING|UNLOADING):\s*", re.S)


def classify_reason(reason: str) -> str | None:
    """Classify one failure reason; an ensemble naming a failed step is an ensemble failure."""
    if _ENSEMBLE_DEPENDS.search(reason) or _ENSEMBLE_MISSING.search(reason):
        return c.RUNBOOK_ENSEMBLE_DEPENDENCY
    found = classify(reason)
    if found is None and "\n" in reason:
        # Old fixed-width status tables wrap words across rows; try the text glued back.
        found = classify(reason.replace("\n", ""))
    return found


def diagnose_reason(reason: str) -> str:
    """The runbook id for one UNAVAILABLE reason; the fallback id when no rule explains it."""
    return classify_reason(reason) or c.RUNBOOK_UNKNOWN_LOAD_FAILURE


# A crash-looping server repeats the same messages: each distinct text is classified once
# (a bounded memo of these pure functions, see repeats.py).
classify = memoize_text(classify)
is_harmless = memoize_text(is_harmless)
is_summary = memoize_text(is_summary)
classify_reason = memoize_text(classify_reason)


_TPL_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")
_TPL_PATH = re.compile(r"(?:[\w.\-]*/)+[\w.\-]+")
_TPL_HEX = re.compile(r"0x[0-9a-fA-F]+")
_TPL_NUM = re.compile(r"\d+")


def template_of(event: LogEvent) -> str:
    """A line's shape: level, source file and message with values replaced by placeholders."""
    source = re.sub(r":\d+$", "", event.source)
    message = event.message.split("\n", 1)[0][:300]
    message = _TPL_QUOTED.sub("'<s>'", message)
    message = _TPL_PATH.sub("<path>", message)
    message = _TPL_HEX.sub("<hex>", message)
    message = _TPL_NUM.sub("<n>", message)
    prefix = f"{event.level or '-'} {source}] " if source else f"{event.level or '-'} "
    return prefix + message.strip()


# ----------------------------------------------------------------------------- state
@dataclass(slots=True)
class _Obs:
    index: int
    line: int
    text: str
    level: str
    runbook: str | None
    reason: str
    failure: bool = False


@dataclass(slots=True)
class _Model:
    name: str
    version: str | None = None
    obs: list[_Obs] = field(default_factory=list)
    failed: bool = False
    stuck: bool = False
    ready: bool = False
    depends_on: set[str] = field(default_factory=set)
    inferred: list[_Obs] = field(default_factory=list)
    """Causes read from another model's line (an ensemble quoting this step's error)."""

    def add(self, obs: _Obs) -> None:
        if len(self.obs) < 4 * MAX_EVIDENCE:
            self.obs.append(obs)


def _evidence_text(event: LogEvent) -> str:
    text = event.text
    return text if len(text) <= MAX_EVIDENCE_CHARS else text[:MAX_EVIDENCE_CHARS] + "…"


def _deciding_line(event: LogEvent, decides: Callable[[str], bool]) -> tuple[int, str]:
    """The line of a pasted block (raw lines: ``kubectl describe`` output, a banner) that
    ``decides`` holds for, so the finding quotes it rather than the block's first line."""
    if event.source != SOURCE_RAW:
        return event.line, _evidence_text(event)
    pieces = event.message.split("\n")
    for offset, piece in enumerate(pieces):
        if len(pieces) > 1 and not (piece.strip() and decides(piece)):
            continue
        text = peel_collector_prefix(piece.strip())
        return event.line + offset, text[:MAX_EVIDENCE_CHARS]
    return event.line, peel_collector_prefix(_evidence_text(event))


class Diagnoser:
    """Feed events in log order, then `finish()`. Holds per-model state only."""

    def __init__(
        self, titles: Mapping[str, str] | None = None, remediations: Mapping[str, str] | None = None
    ) -> None:
        # Both from the runbook catalog (front matter), given by the caller: this module reads no file.
        self._titles = dict(titles or {})
        self._remediations = dict(remediations or {})
        self._models: dict[str, _Model] = {}
        self._pending: list[_Obs] = []  # model-less causes waiting for a model failure
        self._orphans: list[_Obs] = []  # model-less causes that never attached
        self._summary: list[_Obs] = []
        self._server_failures: list[_Obs] = []  # the server (or its GPUs) failed; nothing explains it
        self._unmatched: dict[str, list[object]] = {}
        self._unexplained: list[_Obs] = []  # error lines no rule explains (bounded)
        self._unmatched_overflow = 0
        self._index = 0
        self._release: str | None = None
        self.harmless_lines = 0

    # -- feeding ---------------------------------------------------------------------------------
    def _model(self, name: str, version: str | None = None) -> _Model:
        state = self._models.get(name)
        if state is None:
            state = self._models[name] = _Model(name)
        if version and not state.version:
            state.version = version
        return state

    def feed_all(self, events: Iterable[LogEvent]) -> Diagnoser:
        for event in events:
            self.feed(event)
        return self

    def feed(self, event: LogEvent) -> None:
        self._index += 1
        index = self._index
        message = event.message
        level = event.level
        if self._release is None and event.source in (SOURCE_RAW, SOURCE_OPTION):
            self._release = release_in(message)
        if event.source == SOURCE_OPTION:
            return
        if event.source == SOURCE_TABLE:
            self._feed_table_row(event, index)
            return
        if level == LEVEL_INFO and not _STUB.search(message.split("\n", 1)[0]):
            self._feed_info_continuation(event, index)
            return
        if event.source == SOURCE_RAW and message.startswith("#"):
            return  # a comment or a shell prompt line in a paste
        if is_harmless(message):
            self.harmless_lines += 1
            return
        if is_summary(message):
            self._summary.append(_Obs(index, event.line, _evidence_text(event), level, None, message))
            return
        if self._feed_model_line(event, index):
            return
        runbook = classify(message)
        if runbook is None and is_backend_failure(message):
            # A backend's (TensorRT, ONNX Runtime, libtorch, CUDA) own error line that names no known
            # class: the model its path names failed, else the server-wide finding says so.
            path = _PY_PATH.search(message)
            obs = _Obs(index, event.line, _evidence_text(event), level or LEVEL_ERROR, None, message, True)
            if path:
                state = self._model(path["model"], path["version"])
                state.failed = True
                state.add(obs)
            else:
                self._server_failures.append(obs)
            return
        if runbook is None and is_server_failure(message):
            line, text = _deciding_line(event, is_server_failure)
            self._server_failures.append(_Obs(index, line, text, level or LEVEL_ERROR, None, message, True))
            return
        if runbook is not None:
            line, text = _deciding_line(event, lambda piece: classify(piece) == runbook)
            obs = _Obs(index, line, text, level or LEVEL_ERROR, runbook, message)
            path = _PY_PATH.search(message)
            if path:
                state = self._model(path["model"], path["version"])
                state.add(obs)
                if _STUB.search(message) and not state.failed:
                    state.stuck = True
                return
            named = self._instance_model(message)
            if named is not None:
                state = self._model(named)
                state.add(obs)
                if _STUB.search(message) and not state.failed:
                    state.stuck = True
                return
            self._pending.append(obs)
            if len(self._pending) > MAX_PENDING:
                self._orphans.append(self._pending.pop(0))
            return
        if level in (LEVEL_ERROR, LEVEL_FATAL) or (
            event.source == SOURCE_RAW and message[:8].upper().startswith(("ERROR", "FATAL", "CRITICAL"))
        ):
            self._add_unmatched(event)
            if len(self._unexplained) < MAX_PENDING:
                # An error line nothing explains is still a failure signal: never an empty answer.
                self._unexplained.append(
                    _Obs(index, event.line, _evidence_text(event), level or LEVEL_ERROR, None, message, True)
                )

    def _instance_model(self, message: str) -> str | None:
        """The model a model-instance name in ``message`` belongs to, if any."""
        m = _INSTANCE.search(message)
        if m is None:
            return None
        if m["model"]:
            return m["model"]
        inst = m["inst"]
        # Prefer a model already seen whose name the instance name extends.
        for name in self._models:
            if inst == name or inst.startswith(name + "_"):
                return name
        return inst

    def _feed_info_continuation(self, event: LogEvent, index: int) -> None:
        """Raw lines after an ``I`` line (a shell error, a third-party library's output) can be a cause."""
        lines = event.message.split("\n")
        if len(lines) < 2:
            return
        runbook = classify("\n".join(lines[1:]))
        if runbook is None or is_harmless(event.message):
            return
        offset = next((k for k in range(1, len(lines)) if classify(lines[k]) == runbook), 1)
        text = lines[offset][:MAX_EVIDENCE_CHARS]
        obs = _Obs(index, event.line + offset, text, LEVEL_ERROR, runbook, "\n".join(lines[1:]))
        path = _PY_PATH.search(event.message)
        if path:
            self._model(path["model"], path["version"]).add(obs)
            return
        self._pending.append(obs)
        if len(self._pending) > MAX_PENDING:
            self._orphans.append(self._pending.pop(0))

    def _feed_table_row(self, event: LogEvent, index: int) -> None:
        if event.model is None:
            self._feed_cut_row(event, index)
            return
        status = event.message
        state = self._model(event.model, event.version)
        if status.startswith("READY"):
            state.ready = True
            return
        reason = _STATUS_PREFIX.sub("", status, count=1)
        obs = _Obs(
            index, event.line, _evidence_text(event), LEVEL_ERROR, classify_reason(reason), reason, True
        )
        state.failed = True
        state.stuck = False
        state.add(obs)
        self._attach_pending(state, obs)

    def _feed_cut_row(self, event: LogEvent, index: int) -> None:
        """A status cell whose model column was cut off: a failure of an unnamed model."""
        reason = _STATUS_PREFIX.sub("", event.message, count=1)
        runbook = classify_reason(reason)
        obs = _Obs(index, event.line, _evidence_text(event), LEVEL_ERROR, runbook, reason, True)
        if obs.runbook is None:
            self._server_failures.append(obs)
            return
        self._pending.append(obs)
        if len(self._pending) > MAX_PENDING:
            self._orphans.append(self._pending.pop(0))

    def _feed_model_line(self, event: LogEvent, index: int) -> bool:
        message = event.message
        level = event.level or LEVEL_ERROR
        text = _evidence_text(event)
        m = _ENSEMBLE_DEPENDS.search(message)
        if m:
            state = self._model(m["model"])
            state.failed = True
            state.depends_on.add(m["dep"])
            obs = _Obs(index, event.line, text, level, c.RUNBOOK_ENSEMBLE_DEPENDENCY, message, True)
            state.add(obs)
            if m["reason"]:
                dep = self._model(m["dep"], m["version"])
                dep.failed = True
                dep.inferred.append(
                    _Obs(index, event.line, text, level, classify_reason(m["reason"]), m["reason"], True)
                )
            return True
        m = _ENSEMBLE_VERSION.search(message)
        if m:
            state = self._model(m["model"])
            state.failed = True
            state.add(_Obs(index, event.line, text, level, classify(message), message, True))
            return True
        m = _ENSEMBLE_MISSING.search(message)
        if m:
            state = self._model(m["model"])
            state.failed = True
            state.depends_on.update(d.strip() for d in m["deps"].split(",") if d.strip())
            state.add(_Obs(index, event.line, text, level, c.RUNBOOK_ENSEMBLE_DEPENDENCY, message, True))
            return True
        m = _ENSEMBLE_CONFIG.search(message)
        if m and not _FAILED_VERSION.search(message) and not _FAILED_MODEL.search(message):
            state = self._model(m["model"])
            state.failed = True
            state.add(_Obs(index, event.line, text, level, c.RUNBOOK_ENSEMBLE_DEPENDENCY, message, True))
            return True
        for pattern in (_FAILED_VERSION, _FAILED_MODEL, _LOAD_FAILED_API, _POLL_FAILED, _POLL_MODEL):
            m = pattern.search(message)
            if m:
                groups = m.groupdict()
                state = self._model(m["model"], groups.get("version"))
                reason = m["reason"]
                obs = _Obs(index, event.line, text, level, classify_reason(reason), reason, True)
                state.failed = True
                state.stuck = False
                state.add(obs)
                self._attach_pending(state, obs)
                return True
        m = _VERSION_NOT_PRESENT.search(message)
        if m:
            state = self._model(m["model"], m["version"])
            state.add(_Obs(index, event.line, text, level, classify(message), message))
            return True
        return False

    def _attach_pending(self, state: _Model, failure: _Obs) -> None:
        keep: list[_Obs] = []
        for obs in self._pending:
            if failure.index - obs.index > ATTACH_WINDOW:
                self._orphans.append(obs)
                continue
            key = obs.reason.split("\n", 1)[0]
            key = key.split(": ", 1)[1] if key.startswith(("ERROR: ", "Failed to")) and ": " in key else key
            generic = failure.runbook in (None, c.RUNBOOK_PYTHON_MODEL_ERROR)
            if (
                obs.runbook == failure.runbook
                or (len(key) > 12 and key[:120] in failure.reason)
                or (
                    generic
                    and obs.runbook is not None
                    and _RULE_RANK[obs.runbook] < _RULE_RANK[c.RUNBOOK_PYTHON_MODEL_ERROR]
                )
            ):
                state.add(obs)
            else:
                keep.append(obs)
        self._pending = keep

    def _add_unmatched(self, event: LogEvent) -> None:
        key = template_of(event)
        entry = self._unmatched.get(key)
        if entry is not None:
            entry[0] = int(entry[0]) + 1  # type: ignore[call-overload]
            return
        if len(self._unmatched) >= MAX_UNMATCHED_TEMPLATES:
            self._unmatched_overflow += 1
            return
        self._unmatched[key] = [1, Evidence(event.line, _evidence_text(event))]

    # -- results ---------------------------------------------------------------------------------
    def _title(self, runbook: str) -> str:
        return self._titles.get(runbook, runbook)

    def _finding(
        self,
        model: str | None,
        version: str | None,
        runbook: str,
        severity: str,
        evidence: Iterable[_Obs],
        consequence_of: str | None = None,
        remediation: str | None = None,
        message: str | None = None,
    ) -> Finding:
        seen: dict[int, Evidence] = {}
        ordered = sorted(evidence, key=lambda o: o.line)
        for obs in ordered:
            seen.setdefault(obs.line, Evidence(obs.line, obs.text))
        if message is None:
            failure = next((o for o in ordered if o.failure), ordered[0] if ordered else None)
            message = failure.reason if failure is not None else None
        if message is not None and len(message) > MAX_EVIDENCE_CHARS:
            message = message[:MAX_EVIDENCE_CHARS] + "…"
        return Finding(
            model=model,
            version=version,
            runbook=runbook,
            title=self._title(runbook),
            severity=severity,
            evidence=tuple(list(seen.values())[:MAX_EVIDENCE]),
            remediation=remediation or self._remediations.get(runbook, ""),
            consequence_of=consequence_of,
            message=message,
        )

    def _model_finding(self, state: _Model) -> Finding | None:
        causes = [o for o in state.obs if o.runbook]
        if causes and all(from_frames(o.reason) for o in causes):
            # Only traceback frames named a cause (an import frame): an exception line about this
            # model (another model's line quoting its error) decides instead.
            quoted = [o for o in state.inferred if o.runbook and not from_frames(o.reason)]
            if quoted:
                state.obs.extend(quoted)
                causes = quoted
        if not causes and not state.failed and state.inferred:
            causes = [o for o in state.inferred if o.runbook]
        if not causes and not state.failed and not state.stuck:
            return None
        if causes:
            runbook = min((o.runbook for o in causes if o.runbook), key=lambda r: _RULE_RANK[r])
        elif state.inferred and any(o.runbook for o in state.inferred):
            causes = [o for o in state.inferred if o.runbook]
            runbook = min((o.runbook for o in causes if o.runbook), key=lambda r: _RULE_RANK[r])
        else:
            runbook = c.RUNBOOK_UNKNOWN_LOAD_FAILURE
        evidence = [o for o in state.obs if o.runbook == runbook or o.failure] or list(state.inferred)
        failure_obs = next((o for o in state.obs if o.failure), None)
        if runbook != c.RUNBOOK_UNKNOWN_LOAD_FAILURE:
            evidence = [o for o in evidence if o.runbook == runbook or (o.failure and o.runbook is None)] or [
                o for o in causes if o.runbook == runbook
            ]
        failed = state.failed or state.stuck or any(o.level in (LEVEL_ERROR, LEVEL_FATAL) for o in evidence)
        severity = c.IMPACT_CRITICAL if failed and not state.ready else c.IMPACT_WARNING
        remediation = self._remediations.get(runbook, "")
        if state.stuck and not state.failed:
            remediation = f"The model stays LOADING: the Python stub failed. {remediation}".rstrip()
        return self._finding(
            state.name,
            state.version,
            runbook,
            severity,
            evidence,
            remediation=remediation,
            message=failure_obs.reason if failure_obs is not None else None,
        )

    def _never_empty(self, final: list[Finding]) -> None:
        """A log that says the server failed (a summary line, ``error: creating server``, a CUDA or
        driver failure) gets a critical finding even when no model is named: the best server-wide
        cause seen, else `unknown-load-failure` with the evidence and the raw message."""
        failures = self._server_failures + self._summary + self._unexplained
        if not failures or any(f.severity == c.IMPACT_CRITICAL for f in final):
            return
        server_wide = [f for f in final if f.model is None]
        if server_wide:
            best = min(server_wide, key=lambda f: _RULE_RANK.get(f.runbook, len(_RULE_RANK)))
            extra = tuple(Evidence(o.line, o.text) for o in sorted(failures, key=lambda o: o.line))
            promoted = Finding(
                None,
                None,
                best.runbook,
                best.title,
                c.IMPACT_CRITICAL,
                tuple(sorted({e.line: e for e in best.evidence + extra}.values(), key=lambda e: e.line))[
                    :MAX_EVIDENCE
                ],
                best.remediation,
                message=best.message,
            )
            final[final.index(best)] = promoted
            return
        explained = bool(self._server_failures)
        final.append(
            self._finding(
                None,
                None,
                c.RUNBOOK_UNKNOWN_LOAD_FAILURE,
                c.IMPACT_CRITICAL,
                failures,
                remediation=None
                if explained
                else (
                    "Triton reports failed loads but their cause is not in this excerpt: triage the "
                    "whole log from the server's start, or query the live server with --triton-url."
                ),
                message=(self._server_failures or self._summary or self._unexplained)[0].reason,
            )
        )

    def finish(self) -> Report:
        findings: list[Finding] = []
        for state in self._models.values():
            finding = self._model_finding(state)
            if finding is not None:
                findings.append(finding)
        with_findings = {f.model for f in findings if f.severity == c.IMPACT_CRITICAL}
        final: list[Finding] = []
        for f in findings:
            state = self._models[f.model] if f.model else None
            if state and f.runbook == c.RUNBOOK_ENSEMBLE_DEPENDENCY:
                failed_steps = sorted(d for d in state.depends_on if d in with_findings)
                if failed_steps:
                    steps = ", ".join(f"'{d}'" for d in failed_steps)
                    f = Finding(
                        f.model,
                        f.version,
                        f.runbook,
                        f.title,
                        f.severity,
                        f.evidence,
                        f"Fix {steps} first: this ensemble fails because that step failed to load.",
                        consequence_of=failed_steps[0],
                    )
            final.append(f)
        orphans = self._orphans + self._pending
        by_runbook: dict[str, list[_Obs]] = {}
        for obs in orphans:
            if obs.runbook:
                by_runbook.setdefault(obs.runbook, []).append(obs)
        for runbook, group in by_runbook.items():
            severe = any(o.level in (LEVEL_ERROR, LEVEL_FATAL) for o in group)
            final.append(
                self._finding(None, None, runbook, c.IMPACT_CRITICAL if severe else c.IMPACT_WARNING, group)
            )
        self._never_empty(final)
        final.sort(
            key=lambda f: (
                f.consequence_of is not None,
                _SEVERITY_RANK.get(f.severity, 3),
                f.runbook in _SYMPTOMS,
                f.evidence[0].line if f.evidence else 0,
            )
        )
        unmatched = [
            Unmatched(template, int(entry[0]), entry[1])  # type: ignore[call-overload, arg-type]
            for template, entry in self._unmatched.items()
        ]
        unmatched.sort(key=lambda u: (-u.count, u.example.line))
        final = [self._with_release_advice(f) for f in final]
        return Report(tuple(final), tuple(unmatched), self.harmless_lines, self._index, self._release)

    def _with_release_advice(self, finding: Finding) -> Finding:
        """Append what is known about this finding in the log's release (`releases.KNOWN_ISSUES`)."""
        text = "\n".join([*(e.text for e in finding.evidence), finding.message or ""])
        note = advice(finding.runbook, text, self._release)
        if note is None:
            return finding
        remediation = f"{finding.remediation} {note}".strip()
        return Finding(
            finding.model,
            finding.version,
            finding.runbook,
            finding.title,
            finding.severity,
            finding.evidence,
            remediation,
            finding.consequence_of,
            finding.message,
        )


def diagnose_events(
    events: Iterable[LogEvent],
    titles: Mapping[str, str] | None = None,
    remediations: Mapping[str, str] | None = None,
) -> Report:
    """Diagnose a whole sequence of events."""
    return Diagnoser(titles, remediations).feed_all(events).finish()


def diagnose_index(
    index: Iterable[Mapping[str, object]],
    titles: Mapping[str, str] | None = None,
    remediations: Mapping[str, str] | None = None,
) -> Report:
    """Findings for a live server from ``POST /v2/repository/index`` entries (UNAVAILABLE ones)."""
    diagnoser = Diagnoser(titles, remediations)
    for position, entry in enumerate(index, 1):
        if entry.get("state") != c.STATE_UNAVAILABLE:
            continue
        name = str(entry.get("name", ""))
        version = str(entry.get("version") or "") or None
        reason = str(entry.get("reason") or "")
        text = f"{name} v{version or '-'}: UNAVAILABLE: {reason.splitlines()[0] if reason else ''}"
        diagnoser.feed(
            LogEvent(
                line=position,
                level=LEVEL_ERROR,
                source=SOURCE_TABLE,
                message=f"UNAVAILABLE: {reason}",
                text=text,
                model=name,
                version=version,
            )
        )
    return diagnoser.finish()
