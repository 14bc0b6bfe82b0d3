"""What a check returns: one `Issue` per problem, with the file and line it is written on."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from triton_sre import conventions as c
from triton_sre.lint.repository import ModelDir

if TYPE_CHECKING:
    from triton_sre.lint.components import Release

__all__ = ["TARGET_CPU", "TARGET_GPU", "Issue", "LintOptions", "config_issue"]

TARGET_CPU = "cpu"
TARGET_GPU = "gpu"


@dataclass(frozen=True, slots=True)
class LintOptions:
    target: str = TARGET_GPU
    gpus: int = 1
    latency_thresholds: tuple[tuple[str | None, float, float], ...] = ()
    """(model regex or None for all models, latency threshold seconds, queue share) per latency SLO."""
    missing_modules: dict[str, tuple[str, ...]] | None = None
    """model name -> imported modules the serving interpreter cannot find (None: not checked)."""
    backends: frozenset[str] | None = None
    """Backends installed on the server (folders of --backend-directory); None: not checked."""
    load_seconds: Mapping[str, float] | None = None
    """model name -> measured load seconds (--load-seconds); None: not checked."""
    startup_probe_budget_s: float | None = None
    """operational.startup_probe_budget of the SLO spec."""
    release: Release | None = None
    """--release: the Triton release the repository is checked against (None: not checked)."""
    from_release: Release | None = None
    """--from-release: the release the repository runs on today."""


@dataclass(frozen=True, slots=True)
class Issue:
    model: str
    runbook: str
    message: str
    remediation: str
    file: Path
    line: int = 1
    column: int = 0
    version: str | None = None
    severity: str = c.IMPACT_CRITICAL


def config_issue(
    model: ModelDir,
    runbook: str,
    message: str,
    remediation: str,
    *paths: str,
    severity: str = c.IMPACT_CRITICAL,
    line: int | None = None,
) -> Issue:
    """An issue on the model's config.pbtxt, at the first line writing one of ``paths``."""
    return Issue(
        model=model.name,
        runbook=runbook,
        message=message,
        remediation=remediation,
        file=model.config_path,
        line=line if line is not None else model.line_of(*paths),
        severity=severity,
    )
