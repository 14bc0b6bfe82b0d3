"""Python models: model.py must compile, and its imports must be installed in the serving interpreter.

Imports are collected with `ast` (model.py is never imported or executed); `probe` asks the given
interpreter's own import machinery (`importlib.util.find_spec`) about the top-level names.
Imports guarded by ``try: ... except ImportError`` are optional and not required.
"""

from __future__ import annotations

import ast
import json
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from triton_sre import conventions as c
from triton_sre.inputs import MAX_SOURCE_BYTES, InputFileError, read_bounded
from triton_sre.lint.backend import PYTHON, backend_of, default_filename
from triton_sre.lint.issue import Issue, LintOptions
from triton_sre.lint.repository import ModelDir, Repository

__all__ = ["PROVIDED", "ImportSite", "ProbeError", "check", "collect_imports", "probe", "python_sources"]

PROVIDED = frozenset({"triton_python_backend_utils"})  # put on sys.path by the Python backend stub
PROBE_TIMEOUT_S = 30.0
_PROBE = (
    "import importlib.util, json, sys\n"
    "names = json.load(sys.stdin)\n"
    "missing = []\n"
    "for n in names:\n"
    "    try:\n"
    "        found = importlib.util.find_spec(n) is not None\n"
    "    except (ImportError, ValueError):\n"
    "        found = False\n"
    "    if not found:\n"
    "        missing.append(n)\n"
    "json.dump(missing, sys.stdout)\n"
)


class ProbeError(RuntimeError):
    """The serving interpreter could not be run."""


@dataclass(frozen=True, slots=True)
class ImportSite:
    module: str
    """Top-level module name."""
    line: int


def _guarded(node: ast.Try) -> bool:
    for handler in node.handlers:
        names = []
        if handler.type is None:
            return True
        for t in handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]:
            if isinstance(t, ast.Name):
                names.append(t.id)
        if {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"} & set(names):
            return True
    return False


def collect_imports(source: str, filename: str = "model.py") -> list[ImportSite]:
    """Absolute imports anywhere in ``source`` except optional (try/except ImportError) ones."""
    tree = ast.parse(source, filename=filename)
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and _guarded(node):
            for inner in node.body:
                skip.update(id(n) for n in ast.walk(inner))
    sites: list[ImportSite] = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            sites.extend(ImportSite(a.name.split(".")[0], node.lineno) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            sites.append(ImportSite(node.module.split(".")[0], node.lineno))
    return sorted(sites, key=lambda s: (s.line, s.module))


def python_sources(model: ModelDir) -> list[tuple[str, Path]]:
    """(version, model file) of each version of a Python model."""
    if model.config is None or backend_of(model.config) != PYTHON:
        return []
    name = default_filename(model.config) or "model.py"
    return [(v, model.path / v / name) for v in model.version_dirs if name in model.version_files.get(v, ())]


def read_source(path: Path) -> str:
    """A model's Python source: a regular file of at most MAX_SOURCE_BYTES (InputFileError)."""
    return read_bounded(path, MAX_SOURCE_BYTES).decode("utf-8", errors="replace")


def _local_modules(version_dir: Path) -> set[str]:
    try:
        return {p.stem for p in version_dir.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()}
    except OSError:
        return set()


def required_imports(repo: Repository) -> dict[str, list[ImportSite]]:
    """Model -> imports its model.py files need from the interpreter (syntax errors are skipped)."""
    out: dict[str, list[ImportSite]] = {}
    for model in repo.models.values():
        for _version, path in python_sources(model):
            try:
                sites = collect_imports(read_source(path), path.name)
            except (SyntaxError, InputFileError):  # check() reports an unreadable file
                continue
            local = _local_modules(path.parent)
            out.setdefault(model.name, []).extend(
                s for s in sites if s.module not in PROVIDED and s.module not in local
            )
    return out


def probe(python: str, modules: Iterable[str]) -> set[str]:
    """The modules ``python`` cannot find, asked of its own ``importlib.util.find_spec``."""
    names = sorted(set(modules))
    if not names:
        return set()
    try:
        done = subprocess.run(
            [python, "-c", _PROBE],  # its own PYTHONPATH and site-packages, as the stub would see them
            cwd="/",  # nothing of the repository or of this process' folder on its path
            input=json.dumps(names),
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ProbeError(f"cannot run {python}: {exc}") from None
    if done.returncode != 0:
        said = done.stderr.strip()[-500:] or "no error output (is it a Python interpreter?)"
        raise ProbeError(f"{python} exited {done.returncode}: {said}")
    try:
        return set(json.loads(done.stdout))
    except ValueError:
        raise ProbeError(f"{python}: unexpected probe output {done.stdout[:200]!r}") from None


def check(repo: Repository, options: LintOptions) -> list[Issue]:
    issues: list[Issue] = []
    for model in repo.models.values():
        for version, path in python_sources(model):
            try:
                sites = collect_imports(read_source(path), path.name)
            except InputFileError as exc:  # this model's finding; the other models are still checked
                issues.append(
                    Issue(
                        model=model.name,
                        version=version,
                        runbook=c.RUNBOOK_PYTHON_MODEL_ERROR,
                        message=f"{path.name} cannot be read: {exc}",
                        remediation=f"make {path.name} a regular Python file (Triton imports it)",
                        file=path,
                        line=1,
                    )
                )
                continue
            except SyntaxError as exc:
                issues.append(
                    Issue(
                        model=model.name,
                        version=version,
                        runbook=c.RUNBOOK_PYTHON_MODEL_ERROR,
                        message=f"SyntaxError: {exc.msg} ({path.name}, line {exc.lineno})",
                        remediation="fix the syntax error (python -m py_compile model.py)",
                        file=path,
                        line=exc.lineno or 1,
                        column=exc.offset or 0,
                    )
                )
                continue
            missing = (options.missing_modules or {}).get(model.name, ())
            reported: set[str] = set()
            for site in sites:
                if site.module in missing and site.module not in reported:
                    reported.add(site.module)
                    issues.append(
                        Issue(
                            model=model.name,
                            version=version,
                            runbook=c.RUNBOOK_PYTHON_MODULE_MISSING,
                            message=f"No module named {site.module!r} in the serving interpreter",
                            remediation=f"install {site.module} into the serving interpreter (or ship "
                            "it with EXECUTION_ENV_PATH)",
                            file=path,
                            line=site.line,
                        )
                    )
    return issues
