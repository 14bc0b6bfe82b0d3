"""Findings assembly: per-model state -> ordered findings with evidence, remediation and release advice.

`Diagnoser` (engine.py) reads events into `ModelState`s and model-less `Obs`ervations; a
`FindingBuilder` turns them into findings once the log is read:

- per model, the most specific cause wins (`rules.RANK`); traceback frames only decide when no
  exception line about the model does; a model that failed with no known cause is
  `unknown-load-failure`, one whose stub never came up is "stuck";
- an ensemble that failed because a step failed is a consequence, listed after the step;
- causes no model claimed become server-wide findings;
- never empty: a log that says the server failed gets a critical finding even when no model is named;
- ordering: consequences last, then by severity, symptoms (a crash loop) after causes, then by line;
- release advice (`releases.advice`) is appended to the remediation when the log names its release.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from triton_sre import conventions as c
from triton_sre.diagnosis.classes import model_site_class
from triton_sre.diagnosis.events import LogEvent
from triton_sre.diagnosis.frames import from_frames
from triton_sre.diagnosis.lineshape import LEVEL_ERROR, LEVEL_FATAL, LEVEL_WARNING
from triton_sre.diagnosis.releases import advice
from triton_sre.diagnosis.report import MAX_EVIDENCE, MAX_EVIDENCE_CHARS, Evidence, Finding
from triton_sre.diagnosis.rules import RANK
from triton_sre.diagnosis.settle import (
    STUB_DIED_FIX,
    no_platform_says_why,
    stubs_saw_the_exit,
    warnings_as_root_cause,
)
from triton_sre.diagnosis.signals import ENTRYPOINT_DRIVER_BANNER, STUB_DIED

__all__ = ["FindingBuilder", "ModelState", "Obs", "evidence_text"]

_SEVERITY_RANK = {c.IMPACT_CRITICAL: 0, c.IMPACT_WARNING: 1, c.IMPACT_INFO: 2}
_ENTRYPOINT_BANNER = re.compile("|".join(ENTRYPOINT_DRIVER_BANNER))
"""The NGC container entrypoint's driver-check banner (`FindingBuilder._forecast_disproved`)."""
_HEADLESS_ROW = re.compile(r"\|\s*\|\s*\|")
"""A model-status row without its model and version cells: a status cell's continuation whose first row
the paste cut (logparse)."""
_SYMPTOMS = {
    c.RUNBOOK_SERVER_CRASHED: 1,
    c.RUNBOOK_POD_CRASH_LOOPING: 2,
    c.RUNBOOK_POD_DEADLINE_EXCEEDED: 3,
}
"""Findings that say how the process ended (a crash), that the container restarts, or that Kubernetes stopped
waiting for it (a deadline): listed after any finding that says why, the crash before the restarts it
causes."""


@dataclass(slots=True)
class Obs:
    index: int
    line: int
    text: str
    level: str
    runbook: str | None
    reason: str
    failure: bool = False


@dataclass(slots=True)
class ModelState:
    name: str
    version: str | None = None
    obs: list[Obs] = field(default_factory=list)
    failed: bool = False
    stuck: bool = False
    ready: bool = False
    depends_on: set[str] = field(default_factory=set)
    inferred: list[Obs] = field(default_factory=list)
    """Causes read from another model's line (an ensemble quoting this step's error)."""

    def add(self, obs: Obs) -> None:
        if len(self.obs) < 4 * MAX_EVIDENCE:
            self.obs.append(obs)


# What a log line says before its message: the time, thread and source file of a glog line, in the
# default or --log-format ISO8601 layout, behind a collector's time stamp or none.
_LINE_HEAD = re.compile(r"^.{0,80}?\d+ [\w.-]+:\d+\] ")


def evidence_text(event: LogEvent) -> str:
    text = event.text
    return text if len(text) <= MAX_EVIDENCE_CHARS else text[:MAX_EVIDENCE_CHARS] + "…"


_STUB_DIED = re.compile(STUB_DIED)
_PYTHON_RAISED = re.compile(r"\b[A-Z]\w*(?:Error|Exception)\b|Traceback|model\.py")


# Python's words for a file that is not there: FileNotFoundError's `[Errno 2] No such file or
# directory: '<path>'` (open, numpy.load, a tokenizer's from_pretrained on a local folder).
_NO_SUCH_FILE = re.compile(r"No such file or directory: ['\"]([^'\"\n]{1,300})['\"]")


def _own_file_missing(model: str | None, evidence: list[Obs]) -> str | None:
    """The path of a file in the model's own repository folder that its code could not open: the
    package or volume lacks it, the code is right (a missing file is restored, not fixed in model.py)."""
    if not model:
        return None
    for obs in evidence:
        for found in _NO_SUCH_FILE.finditer(f"{obs.reason}\n{obs.text}"):
            if f"/{model}/" in found.group(1):
                return found.group(1)
    return None


def _died_silently(evidence: list[Obs]) -> bool:
    """The Python backend says the stub stopped answering and no line shows a Python exception."""
    texts = [o.text for o in evidence] + [o.reason for o in evidence]
    return any(_STUB_DIED.search(t) for t in texts) and not any(_PYTHON_RAISED.search(t) for t in texts)


class FindingBuilder:
    """Builds the findings of one diagnosis from what `Diagnoser` collected (pure, no I/O)."""

    def __init__(
        self,
        models: Mapping[str, ModelState],
        orphans: list[Obs],
        server_failures: list[Obs],
        summary: list[Obs],
        unexplained: list[Obs],
        *,
        titles: Mapping[str, str],
        remediations: Mapping[str, str],
        release: str | None,
        last_ready: int = -1,
    ) -> None:
        self._models = models
        self._orphans = orphans
        self._server_failures = server_failures  # the server (or its GPUs) failed; nothing explains it
        self._summary = summary
        self._unexplained = unexplained  # error lines no rule explains
        self._last_ready = last_ready  # the event index of the last READY status-table row (-1: none)
        self._titles = titles
        self._remediations = remediations
        self._release = release
        self._reasonless: set[str] = set()
        """Models whose own failure reason no rule or class explains (the fallback page by default)."""

    def _title(self, runbook: str) -> str:
        return self._titles.get(runbook, runbook)

    def _finding(
        self,
        model: str | None,
        version: str | None,
        runbook: str,
        severity: str,
        evidence: Iterable[Obs],
        remediation: str | None = None,
        message: str | None = None,
    ) -> Finding:
        seen: dict[int, Evidence] = {}
        said: set[tuple[str, str]] = set()
        ordered = sorted(evidence, key=lambda o: o.line)
        for obs in ordered:
            # the same line again but for its time and thread (a request failing each time, a crash
            # loop): quoted once
            key = (obs.reason, _LINE_HEAD.sub("", obs.text, count=1))
            if key in said:
                continue
            said.add(key)
            seen.setdefault(obs.line, Evidence(obs.line, obs.text))
        if message is None:
            failure = next((o for o in ordered if o.failure), ordered[0] if ordered else None)
            message = failure.reason if failure is not None else None
        if message is not None and len(message) > MAX_EVIDENCE_CHARS:
            message = message[:MAX_EVIDENCE_CHARS] + "…"
        default = self._remediations.get(runbook, "")
        if runbook == c.RUNBOOK_PYTHON_MODEL_ERROR and _died_silently(ordered):
            # before the page's fix (about an exception), which a stub killed from outside does not have
            remediation = (remediation or default).replace(default, f"{STUB_DIED_FIX} {default}".rstrip(), 1)
        elif runbook == c.RUNBOOK_PYTHON_MODEL_ERROR and (path := _own_file_missing(model, ordered)):
            first = (
                f"The model's code could not open {path}, a file of its own folder in the repository: "
                "restore it there (the model's package or volume lacks it), then load the model again."
            )
            remediation = (remediation or default).replace(default, first, 1)
        return Finding(
            model=model,
            version=version,
            runbook=runbook,
            title=self._title(runbook),
            severity=severity,
            evidence=tuple(list(seen.values())[:MAX_EVIDENCE]),
            remediation=remediation or default,
            message=message,
        )

    def _model_finding(self, state: ModelState) -> Finding | None:
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
            # A warning never outranks an error: a cause the log only warned about (core skipping a
            # version folder it cannot read) decides only when no error-level line names a cause.
            errors = [o for o in causes if o.level != LEVEL_WARNING]
            runbook = min((o.runbook for o in errors or causes if o.runbook), key=lambda r: RANK[r])
        elif state.inferred and any(o.runbook for o in state.inferred):
            causes = [o for o in state.inferred if o.runbook]
            runbook = min((o.runbook for o in causes if o.runbook), key=lambda r: RANK[r])
        else:
            # The model's own failure reason that no rule knows: read by the cause classes that place it
            # in the model's files or repository (classes.MODEL_SITE), before the fallback page.
            sited = [(o, model_site_class(o.reason)) for o in state.obs if o.failure]
            runbook = next((r for _o, r in sited if r), c.RUNBOOK_UNKNOWN_LOAD_FAILURE)
            causes = [o for o, r in sited if r == runbook]
            if runbook != c.RUNBOOK_UNKNOWN_LOAD_FAILURE:
                state.obs = [replace(o, runbook=runbook) if o in causes else o for o in state.obs]
            else:
                self._reasonless.add(state.name)
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

    def _forecast_disproved(self, final: list[Finding]) -> None:
        """The NGC entrypoint's driver check (``ERROR: This container was built for NVIDIA Driver Release
        ...``, ``compatibility mode is UNAVAILABLE``) runs before the server and reads the driver version
        only: on a host where it cannot read one (WSL, a CPU-only run, a driver it does not list) it
        warns although CUDA works. A model that the server then loads READY, with no model failing,
        disproves it: the banner is a warning, not the cause of anything."""
        if not any(s.ready for s in self._models.values()) or any(s.failed for s in self._models.values()):
            return
        for i, f in enumerate(final):
            if (
                f.model is None
                and f.runbook == c.RUNBOOK_CUDA_DRIVER_MISMATCH
                and f.severity == c.IMPACT_CRITICAL
                and f.evidence
                and all(_ENTRYPOINT_BANNER.search(e.text) for e in f.evidence)
            ):
                final[i] = replace(f, severity=c.IMPACT_WARNING)

    def _unexplained_disproved(self) -> tuple[list[Obs], list[Obs]]:
        """The unexplained error lines split into those still standing and those a later status table
        disproves: every model it lists READY (none failed or stuck anywhere in the log), after the line.
        Such a line (a client library's gRPC poller error printed into the same stream, a backend's
        noisy self-check) did not stop the server loading every model; the table is Triton's own verdict."""
        models = self._models.values()
        if self._last_ready < 0 or any(s.failed or s.stuck or not s.ready for s in models):
            return self._unexplained, []
        disproved = [o for o in self._unexplained if o.index < self._last_ready]
        return [o for o in self._unexplained if o.index >= self._last_ready], disproved

    def _never_empty(self, final: list[Finding]) -> None:
        """A log that says the server failed (a summary line, ``error: creating server``, a CUDA or
        driver failure) gets a critical finding even when no model is named: the best server-wide
        cause seen, else `unknown-load-failure` with the evidence and the raw message."""
        unexplained, disproved = self._unexplained_disproved()
        failures = self._server_failures + self._summary + unexplained
        if not failures and disproved and not any(f.severity == c.IMPACT_CRITICAL for f in final):
            final.append(
                self._finding(
                    None,
                    None,
                    c.RUNBOOK_UNKNOWN_LOAD_FAILURE,
                    c.IMPACT_WARNING,
                    disproved,
                    remediation=(
                        "An error line no runbook explains, naming no model, came before the model status "
                        "table, and every model in that table is READY: the server went on to load them, so "
                        "this line did not fail a load. Read it if a request misbehaves."
                    ),
                    message=disproved[0].reason,
                )
            )
            return
        if not failures or any(f.severity == c.IMPACT_CRITICAL for f in final):
            return
        server_wide = [f for f in final if f.model is None]
        if server_wide:
            best = min(server_wide, key=lambda f: RANK.get(f.runbook, len(RANK)))
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

    def assemble(self) -> tuple[Finding, ...]:
        """Every finding, in the order a reader should act on them."""
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
        orphans = self._orphans
        by_runbook: dict[str, list[Obs]] = {}
        for obs in orphans:
            if obs.runbook:
                by_runbook.setdefault(obs.runbook, []).append(obs)
        for runbook, group in by_runbook.items():
            severe = any(o.level in (LEVEL_ERROR, LEVEL_FATAL) for o in group)
            final.append(
                self._finding(None, None, runbook, c.IMPACT_CRITICAL if severe else c.IMPACT_WARNING, group)
            )
        self._forecast_disproved(final)
        self._never_empty(final)
        warnings_as_root_cause(final)
        stubs_saw_the_exit(final)
        no_platform_says_why(final)
        crashed = any(f.runbook == c.RUNBOOK_SERVER_CRASHED for f in final)
        final.sort(
            key=lambda f: (
                f.consequence_of is not None,
                _SEVERITY_RANK.get(f.severity, 3),
                # A server-wide failure no page covers (NCCL's internal error) beside a crash says what went
                # wrong, not why: the crash's page is the one to open first.
                _SYMPTOMS[c.RUNBOOK_SERVER_CRASHED] + 0.5
                if crashed and f.runbook == c.RUNBOOK_UNKNOWN_LOAD_FAILURE and f.model is None
                else _SYMPTOMS.get(f.runbook, 0),
                # A model's failure that says what failed but not why comes after one that says why (a
                # stray folder's poll error before the Python exception that stopped the server).
                (f.runbook == c.RUNBOOK_UNKNOWN_LOAD_FAILURE and f.model in self._reasonless)
                # ... and so does a status cell whose row the paste cut (no model, no version column)
                or (f.model is None and _headless(f)),
                f.evidence[0].line if f.evidence else 0,
            )
        )
        return tuple(self._with_release_advice(f) for f in final)

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
            note,
        )


def _headless(finding: Finding) -> bool:
    return bool(finding.evidence) and _HEADLESS_ROW.match(finding.evidence[0].text) is not None
