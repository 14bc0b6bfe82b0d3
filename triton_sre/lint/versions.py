"""version_policy must name versions that exist as folders."""

from __future__ import annotations

from triton_sre import conventions as c
from triton_sre.lint.issue import Issue, LintOptions, config_issue
from triton_sre.lint.repository import Repository

__all__ = ["check"]


def check(repo: Repository, options: LintOptions) -> list[Issue]:
    issues: list[Issue] = []
    for model in repo.models.values():
        config = model.config
        if (
            config is None
            or not model.version_dirs
            or config.version_policy.WhichOneof("policy_choice") != "specific"
        ):
            continue
        present = {int(v) for v in model.version_dirs}
        missing = [v for v in config.version_policy.specific.versions if v not in present]
        if missing:
            issues.append(
                config_issue(
                    model,
                    c.RUNBOOK_VERSION_DIR_INVALID,
                    f"version_policy names version(s) {', '.join(map(str, missing))} but only "
                    f"{', '.join(map(str, sorted(present)))} exist",
                    "add the version folders or fix version_policy.specific.versions",
                    "version_policy.specific.versions",
                    "version_policy",
                )
            )
    return issues
