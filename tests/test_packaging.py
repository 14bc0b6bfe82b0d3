"""One way of shipping top-level files (issue 15): `triton_sre/data/` links the repository's
slos.yaml and runbooks/, and a built wheel carries real copies of every one of them."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from triton_sre.data import shipped
from triton_sre.diagnosis.catalog import RUNBOOK_DIR_NAME, default_runbooks_dir
from triton_sre.slo import DEFAULT_SPEC_FILE, default_spec, load_spec

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "triton_sre" / "data"


def test_shipped_files_are_the_repository_files_not_copies() -> None:
    for name in (DEFAULT_SPEC_FILE, RUNBOOK_DIR_NAME):
        assert (DATA / name).is_symlink(), name
        assert shipped(name).resolve() == (ROOT / name).resolve()
    assert default_runbooks_dir().resolve() == (ROOT / RUNBOOK_DIR_NAME).resolve()
    assert default_spec().slos == load_spec(ROOT / DEFAULT_SPEC_FILE).slos


def test_the_wheel_carries_the_spec_and_every_runbook(tmp_path: Path) -> None:
    """Built from a copy of the checkout (symlinks kept as symlinks), as pip builds a wheel."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", DEFAULT_SPEC_FILE):
        shutil.copy2(ROOT / name, src / name)
    shutil.copytree(ROOT / RUNBOOK_DIR_NAME, src / RUNBOOK_DIR_NAME)
    shutil.copytree(
        ROOT / "triton_sre", src / "triton_sre", symlinks=True, ignore=shutil.ignore_patterns("__pycache__")
    )
    run = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", "dist", "."],
        cwd=src, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    (wheel,) = (src / "dist").glob("triton_sre-*.whl")
    with zipfile.ZipFile(wheel) as whl:
        names = set(whl.namelist())
        assert whl.read(f"triton_sre/data/{DEFAULT_SPEC_FILE}") == (ROOT / DEFAULT_SPEC_FILE).read_bytes()
        pages = sorted((ROOT / RUNBOOK_DIR_NAME).glob("*.md"))
        assert len(pages) > 40
        for page in pages:
            assert whl.read(f"triton_sre/data/{RUNBOOK_DIR_NAME}/{page.name}") == page.read_bytes(), page.name
        shipped_pages = {n for n in names if n.startswith(f"triton_sre/data/{RUNBOOK_DIR_NAME}/")}
        assert len(shipped_pages) == len(pages)
        # the diagnosis engine's and lint's tables (package data read at run time)
        for package in ("diagnosis", "lint"):
            for table in sorted((ROOT / "triton_sre" / package).glob("*.yaml")):
                assert whl.read(f"triton_sre/{package}/{table.name}") == table.read_bytes(), table.name


def test_no_python_3_11_only_names_in_the_package() -> None:
    """pyproject says Python >=3.10: `datetime.UTC` (3.11) raised AttributeError there in the bot's alert
    times and the report's dates; `datetime.timezone.utc` is the same object on every version."""
    import re

    root = Path(__file__).resolve().parents[1] / "triton_sre"
    only_311 = re.compile(
        r"\b(?:dt|datetime)\.UTC\b|from datetime import [^\n]*\bUTC\b|\bimport tomllib\b|\bStrEnum\b"
    )
    found = [
        f"{path.relative_to(root)}:{n}"
        for path in sorted(root.rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if only_311.search(line)
    ]
    assert not found, found
