"""docs/architecture.md's package map stays true: every module it names exists, and every module of
the package (sample models aside) is on it. A name with `<...>` (`dash_<name>.py`) stands for every
module its pattern matches."""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "triton_sre"
MODELS = "models"  # the sample model repositories: Triton's Python backend runs them, not the package


def _map_lines() -> list[str]:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = text.split("```", 2)[1]
    lines = block.splitlines()[1:]
    assert lines and lines[0].strip() == "triton_sre/", "the map starts at triton_sre/"
    return lines[1:]


def named_on_map() -> set[str]:
    """Package-relative paths (folders without their slash) the map's name columns list."""
    named: set[str] = set()
    folders: list[tuple[int, str]] = []  # (indent, folder) of the folders enclosing the line
    for line in _map_lines():
        indent = len(line) - len(line.lstrip())
        names = []
        for word in line.strip().split("  ")[0].split():
            if not word.endswith((".py", "/")):
                break
            names.append(word)
        if not names:
            continue  # a description's continuation
        while folders and folders[-1][0] >= indent:
            folders.pop()
        prefix = "".join(f"{folder}/" for _, folder in folders)
        named.update(prefix + n.rstrip("/") for n in names)
        if len(names) == 1 and names[0].endswith("/"):
            folders.append((indent, names[0].rstrip("/")))
    return named


def package_modules() -> set[str]:
    return {
        p.relative_to(PACKAGE).as_posix()
        for p in PACKAGE.rglob("*.py")
        if MODELS not in p.relative_to(PACKAGE).parts[:-1] and p.name != "__init__.py"
    }


def _glob(name: str) -> str:
    return re.sub(r"<[^>]+>", "*", name)


def test_every_module_named_exists() -> None:
    modules = package_modules()
    folders = {p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*") if p.is_dir()}
    missing = [
        n for n in sorted(named_on_map()) if n not in folders and not fnmatch.filter(modules, _glob(n))
    ]
    assert not missing, f"docs/architecture.md names modules that do not exist: {missing}"


def test_every_module_is_on_the_map() -> None:
    patterns = [_glob(n) for n in named_on_map()]
    absent = [m for m in sorted(package_modules()) if not any(fnmatch.fnmatch(m, p) for p in patterns)]
    assert not absent, f"modules missing from docs/architecture.md's map: {absent}"


def test_the_reader_finds_known_entries() -> None:
    """The parser itself: nested folders, a line naming several modules, a pattern."""
    named = named_on_map()
    assert {"cli.py", "triton/client.py", "lint/batching.py", "lint/pydeps.py"} <= named
    assert "generate/dash_<name>.py" in named and "conventions/alerts.py" in named
