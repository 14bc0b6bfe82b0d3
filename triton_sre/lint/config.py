"""config.pbtxt must exist (or be auto-completed), parse against Triton's schema and name its directory."""

from __future__ import annotations

from triton_sre import conventions as c
from triton_sre.lint.issue import Issue, LintOptions, config_issue
from triton_sre.lint.repository import ModelDir, Repository

__all__ = ["check"]


def _model(model: ModelDir) -> list[Issue]:
    if model.config_error is not None:
        err = model.config_error
        if err.unreadable:
            return [
                Issue(
                    model=model.name,
                    runbook=c.RUNBOOK_PERMISSION_DENIED,
                    message=f"config.pbtxt {err.message}",
                    remediation="make the repository readable by the user Triton runs as",
                    file=model.config_path,
                )
            ]
        return [
            Issue(
                model=model.name,
                runbook=c.RUNBOOK_CONFIG_PARSE_ERROR,
                message=f"config.pbtxt does not parse as Triton's ModelConfig: {err.message}",
                remediation="fix the text proto at this line and column (field names and enum values "
                "are Triton's model_config.proto; no ${...} placeholders)",
                file=model.config_path,
                line=err.line,
                column=err.column,
            )
        ]
    config = model.config
    if config is None or not config.name or config.name == model.name:
        return []
    return [
        config_issue(
            model,
            c.RUNBOOK_CONFIG_NAME_MISMATCH,
            f"config name {config.name!r} differs from its directory {model.name!r}",
            f'set name: "{model.name}" (or rename the directory), or drop the name field',
            "name",
        )
    ]


def check(repo: Repository, options: LintOptions) -> list[Issue]:
    return [issue for model in repo.models.values() for issue in _model(model)]
