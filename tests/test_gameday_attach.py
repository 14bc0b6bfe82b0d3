"""`triton-sre gameday --attach DIR` on the stack `triton-sre stack up --gameday --workdir DIR` left
running: what it refuses (no stack, a plain `stack up` stack, a dead one), and a real run of one
scenario on a real stack that is still running afterwards."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from triton_sre import conventions as c
from triton_sre.gameday import scorecard
from triton_sre.gameday.stack import attach_stack
from triton_sre.stack.components import STATE_FILE, Component, process_start_time, save_state
from triton_sre.stack.local import StackError

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "triton_sre.cli"]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def _sleeper() -> tuple[subprocess.Popen[bytes], Component]:
    proc = subprocess.Popen(["sleep", "60"], start_new_session=True)
    deadline = time.monotonic() + 5
    while process_start_time(proc.pid) is None and time.monotonic() < deadline:
        time.sleep(0.01)
    start = process_start_time(proc.pid)
    assert start is not None
    return proc, Component("triton", proc.pid, start, "http://127.0.0.1:1", "/dev/null", ["sleep", "60"])


def test_attach_refuses_no_stack_a_plain_stack_and_a_dead_one(tmp_path: Path) -> None:
    with pytest.raises(StackError, match=r"no stack in .*stack up --gameday"):
        attach_stack(tmp_path, lambda _: None)
    proc, comp = _sleeper()
    try:
        # a plain `stack up` stack: running, but no gameday scale, models or model control
        save_state(tmp_path, [comp], {"model_repository": str(tmp_path)})
        with pytest.raises(StackError, match="started without --gameday"):
            attach_stack(tmp_path, lambda _: None)
        info = {"model_repository": str(tmp_path), "ports": {"triton_http": 1}}
        save_state(tmp_path, [comp], {**info, "gameday": {"scale": 20.0, "interval": 1.0}})
        stack, repository = attach_stack(tmp_path, lambda _: None)
        assert (stack.scale.factor, stack.ports, repository) == (20.0, {"triton_http": 1}, tmp_path)
        assert stack.url("triton_http") == "http://127.0.0.1:1"
    finally:
        proc.kill()
        proc.wait()
    with pytest.raises(StackError, match=r"not running \(triton down\)"):
        attach_stack(tmp_path, lambda _: None)
    (tmp_path / STATE_FILE).write_text("{not json")
    with pytest.raises(StackError, match="cannot read the stack's state"):
        attach_stack(tmp_path, lambda _: None)


def test_a_gameday_that_could_not_attach_is_no_pass(tmp_path: Path) -> None:
    run = subprocess.run(
        [*CLI, "gameday", "--attach", str(tmp_path), "--scenario", "corrupt-model-file", "--format", "json"],
        capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert run.returncode == c.EXIT_FAILURE
    doc = json.loads(run.stdout)
    assert doc["passed"] is False and doc["scenarios"] == [] and "no stack in" in doc["error"]
    assert "cannot attach" in run.stderr
    text = scorecard.render([], {"error": "boom"}, "text")
    assert "Error: boom" in text and "No scenario ran." in text and "All scenarios passed" not in text
    both = subprocess.run(
        [*CLI, "gameday", "--attach", str(tmp_path), "--workdir", str(tmp_path)],
        capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert both.returncode == c.EXIT_USAGE and "exclude each other" in both.stderr
    missing = subprocess.run(
        [*CLI, "gameday", "--attach", str(tmp_path / "typo")],
        capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert missing.returncode == c.EXIT_USAGE and "no such directory" in missing.stderr, missing.stderr
    assert "Traceback" not in missing.stderr and missing.stdout == ""


@pytest.mark.server
@pytest.mark.timeout(900)  # ~3 min on an idle two-core host
def test_gameday_attaches_to_a_stack_up_gameday_stack_and_leaves_it_running(tmp_path: Path) -> None:
    workdir = tmp_path / "stack"
    up = subprocess.run(
        [*CLI, "stack", "up", "--gameday", "--workdir", str(workdir), "--format", "json"],
        capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=600,
    )  # fmt: skip
    try:
        assert up.returncode == 0, up.stderr[-4000:]
        state = json.loads(up.stdout)
        assert state["running"] and state["gameday"]["scale"] == 20.0
        pids = {comp["name"]: comp["pid"] for comp in state["components"]}
        run = subprocess.run(
            [*CLI, "gameday", "--attach", str(workdir), "--scenario", "corrupt-model-file",
             "--format", "json"],
            capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=600,
        )  # fmt: skip
        assert run.returncode == 0, run.stdout + run.stderr[-4000:]
        card = json.loads(run.stdout)
        (row,) = card["scenarios"]
        assert row["detected"] and row["restored"] and row["lost"] == [], row
        assert row["runbook"] == row["expected_runbook"] == c.RUNBOOK_MODEL_FILE_INVALID
        assert "divided by 20" in card["timings"] and card["passed"] is True
        assert "leaving the stack running" in run.stderr
        # the same processes still run: the gameday neither stopped nor restarted the stack
        after = subprocess.run(
            [*CLI, "stack", "status", "--workdir", str(workdir), "--format", "json"],
            capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=60,
        )  # fmt: skip
        assert after.returncode == 0, after.stdout
        assert {comp["name"]: comp["pid"] for comp in json.loads(after.stdout)["components"]} == pids
    finally:
        subprocess.run([*CLI, "stack", "down", "--workdir", str(workdir)], env=ENV, cwd=ROOT, timeout=120)
    assert not (workdir / STATE_FILE).exists()
