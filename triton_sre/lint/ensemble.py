"""Ensembles: every step names a model in the repository and every tensor is connected."""

from __future__ import annotations

from triton_sre import conventions as c
from triton_sre.lint.backend import ENSEMBLE, backend_of
from triton_sre.lint.issue import Issue, LintOptions, config_issue
from triton_sre.lint.repository import ModelDir, Repository

__all__ = ["check", "served_versions", "steps_of"]


def steps_of(model: ModelDir) -> list[str]:
    config = model.config
    if config is None or backend_of(config) != ENSEMBLE:
        return []
    return [str(step.model_name) for step in config.ensemble_scheduling.step]


def served_versions(model: ModelDir) -> set[int]:
    """The versions Triton loads for ``model``: its integer version folders filtered by version_policy
    (default ``latest { num_versions: 1 }``)."""
    present = sorted(int(v) for v in model.version_dirs)
    config = model.config
    policy = config.version_policy.WhichOneof("policy_choice") if config is not None else None
    if policy == "all":
        return set(present)
    if policy == "specific":
        return {int(v) for v in config.version_policy.specific.versions} & set(present)
    latest = int(config.version_policy.latest.num_versions) if policy == "latest" else 1
    return set(present[-max(latest, 1) :]) if present else set()


def _versions(versions: object) -> str:
    listed = sorted(set(versions))  # type: ignore[call-overload]
    return ", ".join(map(str, listed)) if listed else "none"


def _model(model: ModelDir, repo: Repository) -> list[Issue]:
    config = model.config
    issues: list[Issue] = []
    step_lines = model.lines.get("ensemble_scheduling.step.model_name", [])
    produced = {str(t.name) for t in config.input}
    for step in config.ensemble_scheduling.step:
        produced.update(str(v) for v in step.output_map.values())

    def issue(message: str, fix: str, k: int) -> Issue:
        line = step_lines[k] if k < len(step_lines) else model.line_of("ensemble_scheduling")
        return config_issue(model, c.RUNBOOK_ENSEMBLE_DEPENDENCY, message, fix, line=line)

    for k, step in enumerate(config.ensemble_scheduling.step):
        name = str(step.model_name)
        target = repo.models.get(name)
        if target is None:
            issues.append(
                issue(
                    f"ensemble step {k + 1} names model {name!r}, which is not in the repository",
                    f"add {name}/ to the repository or fix model_name",
                    k,
                )
            )
            continue
        for tensor in step.input_map.values():
            if tensor not in produced:
                issues.append(
                    issue(
                        f"ensemble tensor {tensor!r} (input of step {name!r}) is neither an ensemble input "
                        "nor any step's output",
                        "map it from an ensemble input or a previous step's output_map",
                        k,
                    )
                )
        if target.config is None:
            continue
        wanted = int(step.model_version)
        loaded = served_versions(target)
        if wanted >= 0 and target.version_dirs and wanted not in loaded:
            version_lines = model.lines.get("ensemble_scheduling.step.model_version", [])
            issues.append(
                config_issue(
                    model,
                    c.RUNBOOK_ENSEMBLE_STEP_VERSION,
                    f"ensemble step {k + 1} asks for version {wanted} of {name!r}, which loads "
                    f"{_versions(loaded)} (version folders {_versions(int(v) for v in target.version_dirs)})",
                    "model_version: -1 (the latest loaded), or a version the step's version_policy loads",
                    line=version_lines[k] if k < len(version_lines) else model.line_of("ensemble_scheduling"),
                )
            )
        inputs = {str(t.name) for t in target.config.input}
        outputs = {str(t.name) for t in target.config.output}
        for side, keys, names in (("input", step.input_map, inputs), ("output", step.output_map, outputs)):
            for key in keys:
                if names and key not in names:
                    issues.append(
                        issue(
                            f"step {name!r} has no {side} {key!r} ({side}s: {', '.join(sorted(names))})",
                            f"{side}_map keys are the step model's {side} names",
                            k,
                        )
                    )
    for tensor in config.output:
        if str(tensor.name) not in produced:
            issues.append(
                config_issue(
                    model,
                    c.RUNBOOK_ENSEMBLE_DEPENDENCY,
                    f"ensemble output {tensor.name!r} is not written by any step",
                    "map a step's output to it in output_map",
                    "output.name",
                    "output",
                )
            )
    return issues


def _cycle(start: str, repo: Repository) -> list[str] | None:
    """The shortest chain of ensemble steps from `start` back to itself ([e1, e2, e1]), or None."""
    paths = [[start]]
    seen = {start}
    while paths:
        following = []
        for path in paths:
            model = repo.models.get(path[-1])
            for name in steps_of(model) if model is not None else []:
                if name == start:
                    return [*path, start]
                if name not in seen:
                    seen.add(name)
                    following.append([*path, name])
        paths = following
    return None


def _circular(model: ModelDir, repo: Repository) -> list[Issue]:
    """Triton refuses every ensemble on a cycle of steps (core's ensemble_utils.cc: `circular
    dependency between ensembles: e1 -> ... -> e2 -> e1`): none of them loads."""
    cycle = _cycle(model.name, repo)
    if cycle is None:
        return []
    steps = steps_of(model)
    step_lines = model.lines.get("ensemble_scheduling.step.model_name", [])
    k = steps.index(cycle[1])
    return [
        config_issue(
            model,
            c.RUNBOOK_ENSEMBLE_DEPENDENCY,
            f"circular dependency between ensembles: {' -> '.join(cycle)} (Triton loads none of them)",
            f"break the cycle: remove the step {cycle[1]!r} or the way back to {model.name!r}",
            line=step_lines[k] if k < len(step_lines) else model.line_of("ensemble_scheduling"),
        )
    ]


def check(repo: Repository, options: LintOptions) -> list[Issue]:
    issues: list[Issue] = []
    for model in repo.models.values():
        if steps_of(model) or (model.config is not None and backend_of(model.config) == ENSEMBLE):
            issues.extend(_model(model, repo))
            issues.extend(_circular(model, repo))
    return issues
