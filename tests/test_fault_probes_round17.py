"""Round sixteen, continued (docs/failure-behaviour.md): what round sixteen left open, each test
failing before its change. Gameday: a second one on the workdir of one running."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from triton_sre import conventions as c
from triton_sre.gameday.command import GAMEDAY_LOCK
from triton_sre.stack.components import STATE_FILE, Component, process_start_time, save_state
from triton_sre.stack.guard import workdir_lock

ROOT = Path(__file__).resolve().parents[1]
GAMEDAY = [sys.executable, "-m", "triton_sre.cli", "gameday", "--scenario", "exporter-killed"]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.fixture
def running_stack(tmp_path: Path):
    """The workdir of a gameday whose stack runs: its model repository, and a state file naming a live
    process (its own process group, as every component's)."""
    workdir = tmp_path / "gd"
    (workdir / "models" / "vector_scale").mkdir(parents=True)
    (workdir / "models" / "vector_scale" / "config.pbtxt").write_text("served\n")
    (workdir / "stack").mkdir()
    proc = subprocess.Popen(["sleep", "300"], start_new_session=True)
    start = process_start_time(proc.pid)
    assert start is not None
    save_state(workdir / "stack", [Component("triton", proc.pid, start, "http://127.0.0.1:1", "", [])], {})
    yield workdir, proc
    proc.kill()
    proc.wait()


def test_a_second_gameday_on_a_running_ones_workdir_is_refused_and_touches_nothing(running_stack) -> None:
    """Before: the second rebuilt the model repository under the first one's Triton, failed to start
    its stack ("a stack is already running"), then stopped the first one's whole stack, exit 1
    (measured on the real stack: its six components stopped 4.2 s after the second started)."""
    workdir, first = running_stack
    done = subprocess.run(
        [*GAMEDAY, "--workdir", str(workdir)], capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=120
    )
    assert done.returncode == c.EXIT_USAGE, done.stderr
    assert "a stack is already running" in done.stderr and "--attach" in done.stderr
    assert first.poll() is None, "the first gameday's stack was stopped"
    assert (workdir / "models" / "vector_scale" / "config.pbtxt").read_text() == "served\n"
    assert json.loads((workdir / "stack" / STATE_FILE).read_text())["components"][0]["pid"] == first.pid
    assert "stopping" not in done.stderr


def test_a_gameday_holding_its_workdir_keeps_a_second_one_out(tmp_path: Path) -> None:
    """The first gameday holds its workdir for its whole run (before its stack is recorded too)."""
    workdir = tmp_path / "gd"
    workdir.mkdir()
    (workdir / "models").mkdir()
    (workdir / "models" / "kept").write_text("x")
    with workdir_lock(workdir, GAMEDAY_LOCK):
        done = subprocess.run(
            [*GAMEDAY, "--workdir", str(workdir)],
            capture_output=True,
            text=True,
            env=ENV,
            cwd=ROOT,
            timeout=120,
        )
    assert done.returncode == c.EXIT_USAGE, done.stderr
    assert f"another gameday runs in {workdir} (pid {os.getpid()})" in done.stderr
    assert (workdir / "models" / "kept").exists()
