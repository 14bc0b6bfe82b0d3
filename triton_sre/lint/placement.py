"""instance_group against the deployment target: KIND_GPU on a CPU host, GPU ids, default placement."""

from __future__ import annotations

from triton_sre import conventions as c
from triton_sre.lint.backend import ENSEMBLE, backend_of
from triton_sre.lint.issue import TARGET_CPU, Issue, LintOptions, config_issue
from triton_sre.lint.repository import Repository

__all__ = ["check"]

KIND_GPU = 1  # ModelInstanceGroup.Kind
KIND_AUTO = 0


def check(repo: Repository, options: LintOptions) -> list[Issue]:
    issues: list[Issue] = []
    for model in repo.models.values():
        config = model.config
        if config is None or backend_of(config) == ENSEMBLE:
            continue
        groups = list(config.instance_group)
        lines = model.lines.get("instance_group.kind", [])
        for k, group in enumerate(groups):
            if group.kind != KIND_GPU:
                continue
            line = lines[k] if k < len(lines) else model.line_of("instance_group")
            if options.target == TARGET_CPU:
                issues.append(
                    config_issue(
                        model,
                        c.RUNBOOK_CUDA_DRIVER_MISMATCH,
                        "instance_group has kind KIND_GPU but the target is a CPU host "
                        "(no GPUs are available)",
                        "kind: KIND_CPU for a CPU deployment (or deploy on a GPU host)",
                        line=line,
                    )
                )
                continue
            bad = [int(g) for g in group.gpus if g < 0 or g >= options.gpus]
            if bad:
                issues.append(
                    config_issue(
                        model,
                        c.RUNBOOK_CUDA_DRIVER_MISMATCH,
                        f"instance_group names GPU id(s) {', '.join(map(str, bad))} but the host has "
                        f"{options.gpus} GPU(s) (0-{options.gpus - 1})",
                        f"use gpus ids below {options.gpus}",
                        line=model.line_of("instance_group.gpus", "instance_group"),
                    )
                )
        if options.target != TARGET_CPU and options.gpus > 1:
            unpinned = not groups or any(g.kind in (KIND_GPU, KIND_AUTO) and not g.gpus for g in groups)
            if unpinned:
                count = sum(max(g.count, 1) for g in groups) if groups else 1
                issues.append(
                    config_issue(
                        model,
                        c.RUNBOOK_LINT_INSTANCE_GROUP_DEFAULT,
                        f"{'no instance_group' if not groups else 'instance_group without gpus'}: Triton "
                        f"places {count} instance(s) on each of the {options.gpus} GPUs "
                        f"({count * options.gpus} in total)",
                        "set instance_group [ { count: N kind: KIND_GPU gpus: [ ... ] } ] to the GPUs "
                        "this model should use",
                        "instance_group",
                        severity=c.IMPACT_WARNING,
                    )
                )
    return issues
