"""A `generate` killed outright (SIGKILL) leaves its temp files; the next run removes them (tidy36).

A staged file's temp file (``.<name>.<8 random>.tmp`` beside it) holds an exclusive `flock` until it is
renamed; the kernel drops the lock when the process dies, however it dies. Every run (``--check`` too)
removes the temp files of the files it renders that no live process holds (`files.sweep_leftovers`), and
one a live run holds stays. The kills here are real: the child stops with its files staged and the test
sends it SIGKILL.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from triton_sre import conventions as c
from triton_sre.files import LEFTOVER_AGE, TEMP_SUFFIX
from triton_sre.generate.command import run_generate

ROOT = Path(__file__).resolve().parents[1]
_SLO = "  - {{name: a{i}, type: availability, models: [m{i}], objective: 99.9, period: 30d}}\n"
_STAGED_THEN_WAIT = """
import sys, time
from triton_sre.cli import main
from triton_sre.generate import dashboards
def staged(*args):
    print("staged", flush=True)  # the dashboards come last: every other file is staged by now
    time.sleep(120)
dashboards.dashboards = staged
sys.exit(main(["generate", "--spec", sys.argv[1], "--out", sys.argv[2]]))
"""


def _spec(tmp_path: Path, slos: int) -> Path:
    spec = tmp_path / f"slos-{slos}.yaml"
    spec.write_text("slos:\n" + "".join(_SLO.format(i=i) for i in range(slos)), encoding="utf-8")
    return spec


def _args(spec: Path, out: Path, check: bool = False) -> argparse.Namespace:
    return argparse.Namespace(spec=spec, out=out, runbook_base_url=c.DEFAULT_RUNBOOK_BASE_URL, check=check)


def _temps(out: Path) -> list[Path]:
    return sorted(p for p in out.rglob(".*") if p.is_file())


def _tree(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def kill_when_it_says(script: str, said: str, *args: str) -> None:
    """Run the Python ``script`` (with ``args``) in a child until it prints ``said``, then SIGKILL it."""
    child = subprocess.Popen(
        [sys.executable, "-c", script, *args],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == f"{said}\n"
        child.kill()
    finally:
        child.kill()
        assert child.wait(timeout=30) == -9


def _killed_while_staged(spec: Path, out: Path) -> list[Path]:
    """Run `generate` in a child until its files are staged, SIGKILL it; the temp files it left."""
    kill_when_it_says(_STAGED_THEN_WAIT, "staged", str(spec), str(out))
    return _temps(out)


@pytest.mark.parametrize("check", [False, True], ids=["generate", "generate-check"])
@pytest.mark.parametrize("existing", [True, False], ids=["over-a-previous-run", "into-a-new-directory"])
def test_the_next_run_removes_what_a_sigkill_left(
    tmp_path: Path, check: bool, existing: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    if existing:
        assert run_generate(_args(_spec(tmp_path, 2), out)) == c.EXIT_OK
    spec = _spec(tmp_path, 5)
    left = _killed_while_staged(spec, out)
    assert len(left) >= 10  # every file but the dashboards, staged (all of them into a new directory)
    assert all(re.fullmatch(rf"\..+\.[a-z0-9_]{{8}}{re.escape(TEMP_SUFFIX)}", p.name) for p in left)
    capsys.readouterr()

    code = run_generate(_args(spec, out, check=check))

    assert code == (c.EXIT_FAILURE if check else c.EXIT_OK)
    assert _temps(out) == []
    err = capsys.readouterr().err
    assert all(f"removed {p}, a temp file a killed run left" in err for p in left)
    if not check:
        fresh = tmp_path / "fresh"
        assert run_generate(_args(spec, fresh)) == c.EXIT_OK
        assert _tree(out) == _tree(fresh)


def test_a_temp_file_a_live_run_holds_stays(tmp_path: Path) -> None:
    out = tmp_path / "out"
    spec = _spec(tmp_path, 1)
    assert run_generate(_args(spec, out)) == c.EXIT_OK
    target = next(p for p in sorted((out / "alerts").iterdir()) if p.is_file())
    live = target.with_name(f".{target.name}.abcd1234{TEMP_SUFFIX}")
    live.write_text("half")
    with live.open("rb") as held:  # what a live run's temp file holds (another open file: locks conflict)
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert run_generate(_args(spec, out)) == c.EXIT_OK
        assert run_generate(_args(spec, out, check=True)) == c.EXIT_OK
        assert live.exists()
    assert run_generate(_args(spec, out, check=True)) == c.EXIT_OK
    assert not live.exists()


def test_only_its_own_leftovers_go_and_an_old_release_s_by_age(tmp_path: Path) -> None:
    out = tmp_path / "out"
    spec = _spec(tmp_path, 1)
    assert run_generate(_args(spec, out)) == c.EXIT_OK
    target = next(p for p in sorted((out / "alerts").iterdir()) if p.is_file())
    old_release = target.with_name(f".{target.name}.k2j3h4l5")  # before tidy36: no suffix, no lock
    recent_old_release = target.with_name(f".{target.name}.q9w8e7r6")
    kept = [
        recent_old_release,
        target.with_name(f".{target.name}.swp"),  # an editor's
        target.with_name(f".notes.abcd1234{TEMP_SUFFIX}"),  # not a file generate renders
        out / f".{target.name}.abcd1234{TEMP_SUFFIX}",  # not beside the file
    ]
    for path in (old_release, *kept):
        path.write_text("x")
    hour_ago = time.time() - LEFTOVER_AGE - 60
    os.utime(old_release, (hour_ago, hour_ago))
    assert run_generate(_args(spec, out)) == c.EXIT_OK
    assert not old_release.exists()
    assert all(p.exists() for p in kept)
