"""Which backend serves a model, its default model file, and whether that backend exists."""

from __future__ import annotations

import difflib
from typing import Any

from triton_sre import conventions as c
from triton_sre.lint.issue import Issue, LintOptions, config_issue
from triton_sre.lint.repository import Repository

__all__ = [
    "DEFAULT_FILENAMES",
    "ENSEMBLE",
    "PYTHON",
    "PYTHON_STUB",
    "backend_of",
    "check",
    "default_filename",
]

PYTHON = "python"
PYTHON_STUB = "triton_python_backend_stub"
"""A custom stub the Python backend runs instead of its own when the model directory holds one."""
ENSEMBLE = "ensemble"
# platform -> backend (Triton's own mapping for the legacy `platform` field)
PLATFORM_BACKENDS = {
    "tensorrt_plan": "tensorrt",
    "onnxruntime_onnx": "onnxruntime",
    "pytorch_libtorch": "pytorch",
    "tensorflow_graphdef": "tensorflow",
    "tensorflow_savedmodel": "tensorflow",
    c.PLATFORM_ENSEMBLE: ENSEMBLE,
}
# (backend, platform) -> the model file Triton looks for when default_model_filename is not set
DEFAULT_FILENAMES = {
    PYTHON: "model.py",
    "onnxruntime": "model.onnx",
    "pytorch": "model.pt",
    "tensorrt": "model.plan",
    "openvino": "model.xml",
    "tensorflow_graphdef": "model.graphdef",
    "tensorflow_savedmodel": "model.savedmodel",
    "dali": "model.dali",
}
KNOWN_BACKENDS = (
    PYTHON,
    "onnxruntime",
    "pytorch",
    "tensorflow",
    "tensorrt",
    "openvino",
    "fil",
    "dali",
    "vllm",
    "tensorrtllm",
    "identity",
    "repeat",
    "square",
)


def backend_of(config: Any) -> str | None:
    if config is None:
        return None
    if config.backend:
        return str(config.backend)
    if config.platform:
        return PLATFORM_BACKENDS.get(str(config.platform), str(config.platform))
    return None


def default_filename(config: Any) -> str | None:
    """The file (or folder) each version folder must hold; None when the backend does not say."""
    if config is None:
        return None
    if config.default_model_filename:
        return str(config.default_model_filename)
    backend = backend_of(config)
    if backend == "tensorflow":
        return DEFAULT_FILENAMES.get(str(config.platform))
    return DEFAULT_FILENAMES.get(backend or "")


def _swapped_issue(model: Any, config: Any) -> Issue | None:
    """A platform name written as `backend:` or a backend name as `platform:`. Triton 2.51 says
    ``unable to find backend library for backend 'onnxruntime_onnx'`` / ``unexpected platform type
    'onnxruntime'``; the diagnosis engine reads both as backend-platform-mismatch."""
    backend, platform = str(config.backend), str(config.platform)
    if backend and backend in PLATFORM_BACKENDS and backend != ENSEMBLE:
        right = PLATFORM_BACKENDS[backend]
        return config_issue(
            model,
            c.RUNBOOK_BACKEND_PLATFORM_MISMATCH,
            f"backend {backend!r} is a platform name, not a backend",
            f'platform: "{backend}" (or backend: "{right}")',
            "backend",
        )
    if platform and not backend and platform not in PLATFORM_BACKENDS and platform in KNOWN_BACKENDS:
        return config_issue(
            model,
            c.RUNBOOK_BACKEND_PLATFORM_MISMATCH,
            f"platform {platform!r} is a backend name, not a platform",
            f'backend: "{platform}"',
            "platform",
        )
    return None


def check(repo: Repository, options: LintOptions) -> list[Issue]:
    issues: list[Issue] = []
    for model in repo.models.values():
        config = model.config
        backend = backend_of(config)
        if config is None or backend is None or backend == ENSEMBLE:
            continue
        swapped = _swapped_issue(model, config)
        if swapped is not None:
            issues.append(swapped)
            continue
        if config.platform and not config.backend and config.platform not in PLATFORM_BACKENDS:
            issues.append(
                config_issue(
                    model,
                    c.RUNBOOK_BACKEND_NOT_FOUND,
                    f"unknown platform {config.platform!r}",
                    f"use backend: instead (platforms: {', '.join(sorted(PLATFORM_BACKENDS))})",
                    "platform",
                )
            )
            continue
        if options.backends is not None:
            if backend not in options.backends:
                issues.append(
                    config_issue(
                        model,
                        c.RUNBOOK_BACKEND_NOT_FOUND,
                        f"backend {backend!r} is not installed "
                        f"(installed: {', '.join(sorted(options.backends))})",
                        "install the backend into the server image or fix the backend name",
                        "backend",
                        "platform",
                    )
                )
            continue
        if backend not in KNOWN_BACKENDS:
            close = difflib.get_close_matches(backend, KNOWN_BACKENDS, n=1, cutoff=0.7)
            if close:
                issues.append(
                    config_issue(
                        model,
                        c.RUNBOOK_BACKEND_NOT_FOUND,
                        f"backend {backend!r} is not a Triton backend; did you mean {close[0]!r}?",
                        f'backend: "{close[0]}"',
                        "backend",
                    )
                )
    return issues
