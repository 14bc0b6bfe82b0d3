"""`lint --release`: the known issues of the target release (diagnosis' known_issues.yaml) this repository
would hit, before it is deployed.

An entry with an ``exposure:`` names the features a model must show (lint/exposure.py's detectors, all of
them); each model showing them gets a finding when the entry's range holds the target release: the entry's
first runbook, its advice as the fix, its source in the evidence. Severity: the runbook's (critical) when
the entry means such a model does not load, else `warning` (a crash at shutdown is no load failure); with
--from-release, `info` when the source release is in the range too (not a new problem of the upgrade).
"""

from __future__ import annotations

from collections.abc import Iterable

from triton_sre import conventions as c
from triton_sre.diagnosis.known_issues import KnownIssue, known_issues
from triton_sre.lint.exposure import DETECTORS, Files, Site
from triton_sre.lint.issue import Issue, LintOptions
from triton_sre.lint.repository import ModelDir, Repository

__all__ = ["check", "exposed", "known_issue_issues", "releases_of"]


def releases_of(issue: KnownIssue) -> str:
    """The entry's range in words: ``23.05–26.08``, ``23.05 and later``, ``up to 21.08``."""
    if issue.last is None:
        return f"{issue.first} and later" if issue.first else "every release"
    if issue.first is None:
        return f"up to {issue.last}"
    return issue.last if issue.first == issue.last else f"{issue.first}–{issue.last}"


def exposed(model: ModelDir, issue: KnownIssue, files: Files) -> list[Site] | None:
    """Where ``model`` shows every feature of the entry's exposure; None when it lacks one."""
    if issue.exposure is None:
        return None
    sites = []
    for feature in issue.exposure.features:
        detector = DETECTORS.get(feature)
        if detector is None:
            raise ValueError(f"known issue {issue.id}: exposure feature {feature!r} has no detector")
        site = detector(model, files)
        if site is None:
            return None
        sites.append(site)
    return sites


def known_issue_issues(
    repo: Repository, target: str, source: str | None = None, issues: Iterable[KnownIssue] | None = None
) -> list[Issue]:
    """The findings of the known issues of release ``target`` the repository's models are exposed to."""
    files = Files()
    found: list[Issue] = []
    for issue in known_issues() if issues is None else issues:
        if issue.exposure is None or not issue.covers(target):
            continue
        already = source is not None and issue.covers(source)
        severity = c.IMPACT_CRITICAL if issue.exposure.fails_load else c.IMPACT_WARNING
        for model in repo.models.values():
            sites = exposed(model, issue, files)
            if not sites:
                continue
            what = " and ".join(site.what for site in sites)
            since = f" (already so on {source})" if already else ""
            found.append(
                Issue(
                    model=model.name,
                    runbook=issue.runbooks[0],
                    message=f"{what}: known issue {issue.id} of Triton {releases_of(issue)}, which holds "
                    f"{target}{since}; see {issue.source}",
                    remediation=issue.advice,
                    file=sites[0].file,
                    line=sites[0].line,
                    version=sites[0].version,
                    severity=c.IMPACT_INFO if already else severity,
                )
            )
    return found


def check(repo: Repository, options: LintOptions) -> list[Issue]:
    if options.release is None:
        return []
    source = options.from_release.release if options.from_release is not None else None
    return known_issue_issues(repo, options.release.release, source)
