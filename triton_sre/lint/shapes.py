"""Tensor dims: every dimension is >= 1 or -1 (variable)."""

from __future__ import annotations

from triton_sre import conventions as c
from triton_sre.lint.issue import Issue, LintOptions, config_issue
from triton_sre.lint.repository import Repository

__all__ = ["check"]


def check(repo: Repository, options: LintOptions) -> list[Issue]:
    issues: list[Issue] = []
    for model in repo.models.values():
        config = model.config
        if config is None:
            continue
        for kind, tensors in (("input", config.input), ("output", config.output)):
            lines = model.lines.get(f"{kind}.dims", [])
            for k, tensor in enumerate(tensors):
                bad = [int(d) for d in tensor.dims if d == 0 or d < -1]
                if not bad:
                    continue
                issues.append(
                    config_issue(
                        model,
                        c.RUNBOOK_SHAPE_OR_DIMS_MISMATCH,
                        f"model {kind} {tensor.name!r} dimension {bad[0]}: must be >= 1, or -1 for a "
                        "variable-size dimension",
                        "fix dims (without the batch dimension when max_batch_size > 0)",
                        line=lines[k] if k < len(lines) else model.line_of(kind),
                    )
                )
    return issues
