"""A group's diagnosis for its message: its models' Tritons read live (the fleet's URLs, at most
MAX_TRITONS_PER_GROUP), else the configured Triton log when the live servers cannot explain a model or
a server is gone. I/O at the edge: a failure is said in the message, never blocks it (worker.py)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from triton_sre import conventions as c
from triton_sre.bot.config import BotSettings
from triton_sre.bot.enrich import MODEL_ALERTS, SERVER_ALERTS, shown_alerts
from triton_sre.bot.payload import AlertGroup
from triton_sre.diagnosis.api import DiagnosisError, diagnose_live, diagnose_log
from triton_sre.diagnosis.engine import Finding, Report
from triton_sre.inputs import not_regular
from triton_sre.redact import redact

log = logging.getLogger(__name__)

TRITON_TIMEOUT_SECONDS = 5.0
MAX_TRITONS_PER_GROUP = 5


@dataclass(frozen=True)
class Diagnosed:
    report: Report | None = None
    source: str = ""  # "live <url>, ..." or "log <file name>"
    error: str = ""  # why a diagnosis failed, as the message says it


def diagnosed(
    group: AlertGroup, settings: BotSettings, titles: Mapping[str, str], remediations: Mapping[str, str]
) -> Diagnosed:
    """The group's diagnosis: live from the shown alerts' Tritons first (repeats are harmless: the URLs
    are taken once each), else the log for a model nothing live explains or a server alert."""
    report: Report | None = None
    source = error = ""
    unavailable = [a for a in (*shown_alerts(group), *group.alerts) if a.name in MODEL_ALERTS]
    if unavailable:
        # Every Triton the group's alerts come from (a fleet maps instance/job labels to URLs).
        urls = list(dict.fromkeys(u for a in unavailable if (u := settings.triton_url_for(a.labels))))
        findings: list[Finding] = []
        reached: list[str] = []
        errors: list[str] = []
        for triton_url in urls[:MAX_TRITONS_PER_GROUP]:
            try:
                live = diagnose_live(triton_url, titles, remediations, TRITON_TIMEOUT_SECONDS)
                findings += live.report.findings
                reached.append(redact(triton_url, queries=False))
            except DiagnosisError as exc:
                errors.append(str(exc))
                log.warning("group %s: live diagnosis failed: %s", group.group_key, errors[-1])
        # a config Triton refused leaves the model in the index by name alone: nothing live says why
        models = {a.labels.get(c.LABEL_MODEL) for a in unavailable}
        if reached and any(f.model in models for f in findings):
            report, source = Report(tuple(findings), ()), "live " + ", ".join(reached)
        error = "; ".join(errors)
    if (
        report is None
        and settings.log_file
        and (unavailable or any(a.name in SERVER_ALERTS for a in group.alerts))
    ):
        # A model the live server cannot explain, or a server that is gone (no live answer at all):
        # its log says why (a crash, a port taken, a refused option).
        try:
            # checked first: opening a FIFO waits for a writer, and the worker's one thread delivers
            # every notification (a log replaced by a pipe after start held them all)
            if kind := not_regular(settings.log_file):
                raise DiagnosisError(f"{settings.log_file}: {kind}")
            report = diagnose_log(settings.log_file, titles, remediations)
            source = f"log {Path(settings.log_file).name}"
        except DiagnosisError as exc:
            error = str(exc)
            log.warning("group %s: log diagnosis failed: %s", group.group_key, error)
    return Diagnosed(report, source, error)
