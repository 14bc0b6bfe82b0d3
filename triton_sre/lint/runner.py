"""Run every check over a `Repository` and turn the issues into diagnosis `Finding`s (pure)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import Evidence, Finding, Report
from triton_sre.diagnosis.releases import server_version_of_release
from triton_sre.lint import (
    backend,
    batching,
    config,
    ensemble,
    known,
    layout,
    placement,
    pydeps,
    shapes,
    startup,
    upgrade,
    versions,
)
from triton_sre.lint.issue import Issue, LintOptions
from triton_sre.lint.repository import Repository

__all__ = ["CHECKS", "LintResult", "lint", "to_findings"]

Check = Callable[[Repository, LintOptions], list[Issue]]
CHECKS: tuple[Check, ...] = (
    config.check,
    layout.check,
    versions.check,
    backend.check,
    batching.check,
    shapes.check,
    placement.check,
    ensemble.check,
    pydeps.check,
    startup.check,
    upgrade.check,
    known.check,
)
_RANK = {c.IMPACT_CRITICAL: 0, c.IMPACT_WARNING: 1, c.IMPACT_INFO: 2}


@dataclass(frozen=True)
class LintResult:
    repository: Path
    models: int
    issues: tuple[Issue, ...]
    report: Report
    release: str | None = None
    """--release (YY.MM): the release the repository was checked against."""
    server_version: str | None = None
    """That release's tritonserver version ("2.N", as triage's JSON), when known."""
    from_release: str | None = None

    @property
    def has_failure(self) -> bool:
        return self.report.has_failure

    def locations(self) -> list[dict[str, Any]]:
        """File (relative to the repository), line and column of each finding, in order."""
        return [
            {"file": _relative(i.file, self.repository), "line": i.line, "column": i.column}
            for i in self.issues
        ]


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def _consequences(repo: Repository, issues: list[Issue]) -> list[Issue]:
    """An ensemble whose step will fail to load fails too (listed after the step's own issue)."""
    failing = {i.model for i in issues if i.severity == c.IMPACT_CRITICAL}
    out: list[Issue] = []
    for model in repo.models.values():
        if model.name in failing:
            continue
        broken = [s for s in ensemble.steps_of(model) if s in failing]
        if broken:
            out.append(
                Issue(
                    model=model.name,
                    runbook=c.RUNBOOK_ENSEMBLE_DEPENDENCY,
                    message=f"ensemble step model {broken[0]!r} will fail to load (see its finding)",
                    remediation=f"fix {broken[0]} first",
                    file=model.config_path,
                    line=model.line_of("ensemble_scheduling.step.model_name", "ensemble_scheduling"),
                )
            )
    return out


def to_findings(issues: Sequence[Issue], root: Path, titles: Mapping[str, str]) -> tuple[Finding, ...]:
    findings = []
    for i in issues:
        where = f"{_relative(i.file, root)}:{i.line}" + (f":{i.column}" if i.column else "")
        findings.append(
            Finding(
                model=i.model or None,
                version=i.version,
                runbook=i.runbook,
                title=titles.get(i.runbook, i.runbook),
                severity=i.severity,
                evidence=(Evidence(i.line, f"{where}: {i.message}"),),
                remediation=i.remediation,
            )
        )
    return tuple(findings)


def lint(repo: Repository, options: LintOptions, titles: Mapping[str, str] | None = None) -> LintResult:
    issues: list[Issue] = []
    for check in CHECKS:
        issues.extend(check(repo, options))
    issues.extend(_consequences(repo, issues))
    issues.sort(key=lambda i: (_RANK.get(i.severity, 9), i.model, str(i.file), i.line, i.runbook))
    report = Report(to_findings(issues, repo.root, titles or {}), ())
    target, source = options.release, options.from_release
    return LintResult(
        repo.root,
        len(repo.models),
        tuple(issues),
        report,
        release=target.release if target else None,
        server_version=server_version_of_release(target.release) if target else None,
        from_release=source.release if source else None,
    )
