"""Repository layout: integer version folders, the model file in each, nothing stray beside them."""

from __future__ import annotations

from pathlib import Path

from triton_sre import conventions as c
from triton_sre.lint.backend import ENSEMBLE, PYTHON, PYTHON_STUB, backend_of, default_filename
from triton_sre.lint.issue import Issue, LintOptions
from triton_sre.lint.repository import CONFIG_FILE, ModelDir, Repository

__all__ = ["ALLOWED_FILES", "check"]

ALLOWED_FILES = (CONFIG_FILE,)
ALLOWED_DIRS = ("configs",)  # custom configurations (--model-config-name)
_DOC_PREFIXES = ("readme", "license", "changelog")


def _referenced(model: ModelDir, name: str) -> bool:
    """A file the config names (label files, EXECUTION_ENV_PATH archives, warmup data)."""
    return bool(model.config_text) and name in (model.config_text or "")


def _stray(model: str, path: Path, message: str, remediation: str) -> Issue:
    """A warning for an entry Triton ignores or cannot read (lint-stray-entry)."""
    return Issue(
        model=model,
        runbook=c.RUNBOOK_LINT_STRAY_ENTRY,
        message=message,
        remediation=remediation,
        file=path,
        severity=c.IMPACT_WARNING,
    )


def _model(model: ModelDir) -> list[Issue]:
    if "" in model.unlisted:  # its folder cannot be listed: config.py reports it, nothing is known missing
        return []
    issues: list[Issue] = [
        Issue(
            model=model.name,
            version=d if d.isdigit() else None,
            runbook=c.RUNBOOK_PERMISSION_DENIED,
            message=f"folder {d}/ cannot be listed ({why}): Triton cannot read it either",
            remediation="make the repository readable by the user Triton runs as",
            file=model.path / d,
        )
        for d, why in sorted(model.unlisted.items())
    ]
    versions = model.version_dirs
    others = [d for d in model.dirs if not d.isdigit() and d not in ALLOWED_DIRS and not d.startswith(".")]
    if not versions:
        where = f"{others[0]}/" if others else "no version folder"
        issues.append(
            Issue(
                model=model.name,
                runbook=c.RUNBOOK_VERSION_DIR_INVALID,
                message=f"no integer version folder ({where}); Triton loads only <model>/<N>/",
                remediation=(f"rename {others[0]}/ to 1/" if others else "put the model file in <model>/1/"),
                file=model.path / others[0] if others else model.path,
            )
        )
    else:
        for d in others:
            issues.append(
                _stray(
                    model.name,
                    model.path / d,
                    f"folder {d}/ is not a version (Triton ignores it)",
                    f"remove {d}/ or rename it to an unused integer version",
                )
            )
    config = model.config
    expected = default_filename(config)
    beside: set[str] = set()
    for name in model.files:
        if name in ALLOWED_FILES or name.startswith(".") or name.lower().startswith(_DOC_PREFIXES):
            continue
        if _referenced(model, name) or (name == PYTHON_STUB and backend_of(config) == PYTHON):
            continue
        beside.add(name)
    if expected and backend_of(config) != ENSEMBLE:
        for version in versions:
            present = model.version_files.get(version, ())
            if expected in present or version in model.unlisted:
                continue
            hint = ""
            if expected in beside:
                hint = f"; {expected} is beside the version folders, not inside {version}/"
                beside.discard(expected)
            else:
                similar = [p for p in present if p.rsplit(".", 1)[-1] == expected.rsplit(".", 1)[-1]]
                if similar:
                    hint = f"; found {', '.join(similar)} (set default_model_filename or rename it)"
            issues.append(
                Issue(
                    model=model.name,
                    version=version,
                    runbook=c.RUNBOOK_MODEL_FILE_MISSING,
                    message=f"{version}/{expected} not found{hint}",
                    remediation=f"put the model at {model.name}/{version}/{expected}",
                    file=model.path / version,
                    line=model.line_of("default_model_filename") if config.default_model_filename else 1,
                )
            )
    for name in sorted(beside):
        issues.append(
            _stray(
                model.name,
                model.path / name,
                f"file {name} is outside the version folders (Triton never reads it)",
                f"move {name} into a version folder or delete it",
            )
        )
    return issues


def _unreadable(model: str, folder: Path, broken: tuple[tuple[str, str], ...]) -> list[Issue]:
    """An entry that cannot be stat'ed (a symlink loop): named, the rest of the folder still checked.

    Triton stats every entry of the repository and of each model folder when it polls (2.51,
    measured): a loop at the top level fails the whole poll (`failed to poll model repository`: no
    model loads, the repository index answers 500), one in a model folder (`config.pbtxt` included)
    that model's poll (`Poll failed for model directory`: never loaded). Critical, not stray."""
    fate = (
        "Triton's repository poll stops at it: no model loads and the repository index answers 500"
        if not model
        else "Triton's poll of this model stops at it: the model is never loaded"
    )
    return [
        Issue(
            model=model,
            runbook=c.RUNBOOK_PERMISSION_DENIED,
            message=f"{name} cannot be read ({why}): a symlink loop; {fate}",
            remediation=f"remove {name} or point the link at a real file or folder",
            file=folder / name,
        )
        for name, why in broken
    ]


def check(repo: Repository, options: LintOptions) -> list[Issue]:
    issues = [issue for model in repo.models.values() for issue in _model(model)]
    issues += _unreadable("", repo.root, repo.broken)
    for model in repo.models.values():
        issues += _unreadable(model.name, model.path, model.broken)
    for name in repo.stray_files:
        if name.lower().startswith(_DOC_PREFIXES):
            continue
        issues.append(
            _stray(
                "",
                repo.root / name,
                f"file {name} at the repository's top level is not a model (Triton ignores it)",
                f"move {name} out of the model repository",
            )
        )
    return issues
