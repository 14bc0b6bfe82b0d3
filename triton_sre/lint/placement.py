"""instance_group against the deployment target: KIND_GPU on a CPU host, GPU ids, default placement."""

from __future__ import annotations

from triton_sre import conventions as c
from triton_sre.lint.backend import ENSEMBLE, backend_of
from triton_sre.lint.issue import TARGET_CPU, Issue, LintOptions, config_issue
from triton_sre.lint.repository import ModelDir, Repository

__all__ = ["check"]

KIND_GPU = 1  # ModelInstanceGroup.Kind
KIND_AUTO = 0


def _written_counts(model: ModelDir, groups: int) -> dict[int, int]:
    """Group index -> line of its ``count:`` for the groups that write one (proto3 reads an absent
    count as 0, which Triton treats as 1: only a written count can be wrong)."""
    starts = list(model.lines.get("instance_group", []))
    if len(starts) > groups:
        starts = starts[1:]  # the field's own line, then one per element
    out: dict[int, int] = {}
    for line in model.lines.get("instance_group.count", []):
        k = max((i for i, start in enumerate(starts) if start <= line), default=None)
        if k is not None and k < groups:
            out.setdefault(k, line)
    return out


def check(repo: Repository, options: LintOptions) -> list[Issue]:
    issues: list[Issue] = []
    for model in repo.models.values():
        config = model.config
        if config is None or backend_of(config) == ENSEMBLE:
            continue
        groups = list(config.instance_group)
        lines = model.lines.get("instance_group.kind", [])
        written = _written_counts(model, len(groups))
        for k, group in enumerate(groups):
            if k in written and group.count < 1:
                # Triton 2.51 loads such a group with one instance (checked on the real server).
                issues.append(
                    config_issue(
                        model,
                        c.RUNBOOK_INSTANCE_GROUP_INVALID,
                        f"instance_group count {group.count} is below 1; Triton runs 1 instance",
                        "count: 1 (or more)",
                        line=written[k],
                        severity=c.IMPACT_WARNING,
                    )
                )
            if group.kind != KIND_GPU:
                continue
            line = lines[k] if k < len(lines) else model.line_of("instance_group")
            if options.target == TARGET_CPU or options.gpus == 0:
                issues.append(
                    config_issue(
                        model,
                        c.RUNBOOK_INSTANCE_GROUP_INVALID,
                        "instance_group has kind KIND_GPU but the target has no GPUs "
                        "(Triton: no GPUs are available)",
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
                        c.RUNBOOK_INSTANCE_GROUP_INVALID,
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
