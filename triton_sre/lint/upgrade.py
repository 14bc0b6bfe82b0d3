"""`lint --release YY.MM [--from-release YY.MM]`: the models that will not load on the target release.

Each check runs only where the component table (components.yaml) knows the release's value:
- a Python model whose EXECUTION_ENV_PATH environment (a conda-pack archive, read as a tar listing, or an
  unpacked folder) or custom ``triton_python_backend_stub`` is for another Python minor than the image's;
- an ONNX model whose IR version or default-domain opset is above what the image's ONNX Runtime reads;
- TensorRT plans: another TensorRT than the one they were built with (--from-release) must be rebuilt;
  where the table does not know one of the two releases' TensorRT, a warning to compare them (unknown
  is not "the same"), quoting the TensorRT their Windows builds pin as such (another build's, older than
  the Linux image's in 5 of the 9 releases where both are known); without --from-release, a note naming
  the target's TensorRT;
- a TensorFlow model on a release whose build cannot build the TensorFlow backend.
"""

from __future__ import annotations

import re
import tarfile
from collections.abc import Iterator
from pathlib import Path

from triton_sre import conventions as c
from triton_sre.lint.backend import PYTHON, PYTHON_STUB, backend_of, default_filename
from triton_sre.lint.components import Release, table
from triton_sre.lint.issue import Issue, LintOptions, config_issue
from triton_sre.lint.onnxheader import OnnxHeaderError, read_header
from triton_sre.lint.repository import ModelDir, Repository

__all__ = ["STUB", "check", "env_python", "stub_python"]

ENV_PARAMETER = "EXECUTION_ENV_PATH"
MODEL_DIR_VARIABLE = "$$TRITON_MODEL_DIRECTORY"
STUB = PYTHON_STUB
PLAN_SUFFIXES = (".plan", ".engine")
_SITE = re.compile(r"(?:^|/)lib/python(3\.\d+)/")
_LIBPYTHON = re.compile(rb"libpython(3\.\d+)")
_MAX_MEMBERS = 200_000
"""Members of an environment archive listed before giving up (a conda env has tens of thousands)."""
_CHUNK = 1 << 20


def env_python(path: Path) -> str | None:
    """The Python minor (``"3.8"``) of a conda-pack archive or unpacked environment: its lib/python3.X/."""
    if path.is_dir():
        found = sorted(p.name[len("python") :] for p in (path / "lib").glob("python3.*") if p.is_dir())
        return found[0] if len(found) == 1 else None
    try:
        with tarfile.open(path, mode="r|*") as archive:  # a stream: the listing, nothing extracted
            for n, member in enumerate(archive):
                match = _SITE.search(member.name + ("/" if member.isdir() else ""))
                if match:
                    return match.group(1)
                if n >= _MAX_MEMBERS:
                    break
    except (tarfile.TarError, OSError, EOFError):
        return None
    return None


def stub_python(path: Path) -> str | None:
    """The Python minor a stub binary links (the ``libpython3.X`` it names), read in chunks."""
    tail = b""
    try:
        with path.open("rb") as stream:
            while chunk := stream.read(_CHUNK):
                match = _LIBPYTHON.search(tail + chunk)
                if match:
                    return match.group(1).decode()
                tail = chunk[-16:]
    except OSError:
        return None
    return None


def _env_path(model: ModelDir) -> tuple[str, Path] | None:
    params = model.config.parameters if model.config is not None else {}
    if ENV_PARAMETER not in params:
        return None
    written = str(params[ENV_PARAMETER].string_value)
    resolved = written.replace(MODEL_DIR_VARIABLE, str(model.path))
    path = Path(resolved)
    return written, path if path.is_absolute() else model.path / path


def _python_issues(model: ModelDir, target: Release) -> list[Issue]:
    want = target.python
    issues: list[Issue] = []
    env = _env_path(model)
    if env is not None and env[1].exists():
        got = env_python(env[1])
        if got and got != want:
            issues.append(
                config_issue(
                    model,
                    c.RUNBOOK_PYTHON_MODULE_MISSING,
                    f"{ENV_PARAMETER} {env[0]} is a Python {got} environment; the {target.release} image's "
                    f"Python backend runs Python {want}: its packages will not be found",
                    f"conda-pack the environment again with python={want} (and a stub built for it)",
                    "parameters",
                )
            )
    stub = model.path / STUB
    if stub.is_file():
        got = stub_python(stub)
        if got and got != want:
            issues.append(
                Issue(
                    model=model.name,
                    runbook=c.RUNBOOK_PYTHON_SHARED_LIBRARY_MISSING,
                    message=f"{STUB} links libpython{got}; the {target.release} image has Python {want}",
                    remediation=f"rebuild the stub against Python {want}, or remove it to use the image's",
                    file=stub,
                )
            )
    return issues


def _model_files(
    model: ModelDir, names: tuple[str, ...] = (), suffixes: tuple[str, ...] = ()
) -> Iterator[Path]:
    for version in model.version_dirs:
        for name in model.version_files.get(version, ()):
            if name in names or name.endswith(suffixes):
                path = model.path / version / name
                if path.is_file():
                    yield path


def _onnx_issues(model: ModelDir, target: Release) -> list[Issue]:
    support = table().ort_support(target.onnxruntime)
    filename = default_filename(model.config)
    if support is None or not filename:
        return []
    issues: list[Issue] = []
    for path in _model_files(model, names=(filename,)):
        try:
            with path.open("rb") as stream:
                header = read_header(stream, path.stat().st_size)
        except (OSError, OnnxHeaderError):
            continue  # an unreadable model file is not this check's finding
        too_new = []
        if header.ir_version is not None and header.ir_version > support.ir_version:
            too_new.append(f"IR version {header.ir_version} (max {support.ir_version})")
        opset = header.default_opset
        if opset is not None and opset > support.opset:
            too_new.append(f"opset {opset} (max {support.opset})")
        if too_new:
            issues.append(
                Issue(
                    model=model.name,
                    runbook=c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
                    message=f"{' and '.join(too_new)} {'are' if len(too_new) > 1 else 'is'} newer than "
                    f"ONNX Runtime {target.onnxruntime} "
                    f"of {target.release} reads",
                    remediation=f"export again with opset_version<={support.opset} "
                    f"(IR <= {support.ir_version}), or target a release with a newer ONNX Runtime",
                    file=path,
                    version=path.parent.name,
                )
            )
    return issues


def _same_version(a: str, b: str) -> bool:
    """Whether two TensorRT versions can be the same build: one given to fewer places ("8.0.3", as
    21.09's page names it) is not read as a change from "8.0.3.4" (no finding without a known change)."""
    fewer, more = sorted((a.split("."), b.split(".")), key=len)
    return more[: len(fewer)] == fewer


def _windows_pins(*releases: Release) -> str:
    """What the Windows builds of the releases whose Linux TensorRT is unknown pin, said as theirs."""
    pins = [
        f"TensorRT {r.tensorrt_windows} for {r.release}"
        for r in releases
        if not r.tensorrt and r.tensorrt_windows
    ]
    if not pins:
        return ""
    whose = "its Windows build pins" if len(pins) == 1 else "their Windows builds pin"
    return f" ({whose} {' and '.join(pins)}, not necessarily the Linux image's)"


def _plan_issues(model: ModelDir, target: Release, source: Release | None) -> list[Issue]:
    filename = default_filename(model.config)
    plans = list(_model_files(model, names=(filename,) if filename else (), suffixes=PLAN_SUFFIXES))
    if not plans or (source is not None and source.release == target.release):
        return []

    def issue(plan: Path, message: str, remediation: str, severity: str = c.IMPACT_CRITICAL) -> Issue:
        return Issue(
            model=model.name,
            runbook=c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE,
            message=message,
            remediation=remediation,
            file=plan,
            version=plan.parent.name,
            severity=severity,
        )

    if source is None:
        runs = (
            f"TensorRT {target.tensorrt}"
            if target.tensorrt
            else f"a TensorRT this table does not know{_windows_pins(target)}"
        )
        message = f"{target.release} runs {runs}: a plan built by another TensorRT does not load"
        fix = f"check the plans were built with {target.release}'s TensorRT (--from-release)"
        return [issue(plans[0], message, fix, c.IMPACT_INFO)]
    if not source.tensorrt or not target.tensorrt:
        # unknown is not "the same": TensorRT changes in most monthly images, and a plan loads only in
        # the TensorRT that built it; say so once per model, at warning level (no known change)
        unknown = " and ".join(r.release for r in (source, target) if not r.tensorrt)
        message = (
            f"the TensorRT of {unknown} is not in the component table{_windows_pins(source, target)}: "
            "a plan built for "
            f"{source.release}'s TensorRT loads on {target.release} only if both run the same one"
        )
        fix = (
            "compare the two images' TensorRT (NGC release notes, or `dpkg -l | grep nvinfer` in each); "
            f"if they differ, rebuild the plans in the {target.release} image"
        )
        return [issue(plans[0], message, fix, c.IMPACT_WARNING)]
    if _same_version(source.tensorrt, target.tensorrt):
        return []
    built, runs = f"TensorRT {source.tensorrt} ({source.release})", f"TensorRT {target.tensorrt}"
    message = f"built for {built}; {target.release} runs {runs}"
    fix = f"rebuild the plan with TensorRT {target.tensorrt} (trtexec in the {target.release} image)"
    return [issue(plan, message, fix) for plan in plans]


def _not_checked(model: ModelDir, backend: str | None, target: Release) -> Issue | None:
    """An info note where the table does not know what the check needs of the target (a field its branch
    does not name, or a row read from a release page only): unknown is not "no problem"."""
    release = target.release
    env = _env_path(model) if backend == PYTHON and not target.python else None
    stub = backend == PYTHON and not target.python and (model.path / STUB).is_file()
    if (env and env[1].exists()) or stub:
        what, runbook = "the Python", c.RUNBOOK_PYTHON_MODULE_MISSING
        fix = f"compare the environment's Python with `python3 --version` in the {release} image"
    elif backend == "onnxruntime" and not target.onnxruntime:
        what, runbook = "the ONNX Runtime", c.RUNBOOK_LIBRARY_VERSION_MISMATCH
        fix = f"load the model once in the {release} image before the upgrade"
    elif backend == "tensorflow" and target.builds_tensorflow is None:
        what, runbook = "the TensorFlow backend", c.RUNBOOK_BACKEND_NOT_FOUND
        fix = f"check that /opt/tritonserver/backends/tensorflow exists in the {release} image"
    else:
        return None
    message = f"the component table does not know {what} of {release} (see docs/lint.md): not checked"
    return config_issue(model, runbook, message, fix, "backend", "platform", severity=c.IMPACT_INFO)


def check(repo: Repository, options: LintOptions) -> list[Issue]:
    target = options.release
    if target is None:
        return []
    issues: list[Issue] = []
    for model in repo.models.values():
        backend = backend_of(model.config)
        unknown = _not_checked(model, backend, target)
        if unknown is not None:
            issues.append(unknown)
        elif backend == PYTHON and target.python:
            issues += _python_issues(model, target)
        elif backend == "onnxruntime":
            issues += _onnx_issues(model, target)
        elif backend == "tensorrt":
            issues += _plan_issues(model, target, options.from_release)
        elif backend == "tensorflow" and not target.builds_tensorflow:
            issues.append(
                config_issue(
                    model,
                    c.RUNBOOK_BACKEND_NOT_FOUND,
                    f"the {target.release} image has no TensorFlow backend (its build.py cannot build one)",
                    "convert the model (ONNX, TensorRT) or stay on a release that ships TensorFlow",
                    "backend",
                    "platform",
                )
            )
    return issues
