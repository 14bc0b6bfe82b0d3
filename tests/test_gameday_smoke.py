"""`triton-sre gameday` for real: a two-scenario run on its own stack, and Ctrl-C in the middle of one.

The smoke run injects a corrupted model file (built-in) and a wrong backend (the documented user
scenario file) into the real Triton under traffic; the scorecard must show both detected in
Prometheus, in Alertmanager and in the Slack stand-in, with the expected runbook from the alert and
from the bot's diagnosis, both restored, nothing lost, and every process of the stack stopped.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from triton_sre import conventions as c
from triton_sre.stack.components import STATE_FILE

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "triton_sre.cli", "gameday"]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"


def _gameday(args: list[str], timeout: float) -> tuple[int, str, str]:
    """Run the command; past `timeout` it gets Ctrl-C (it stops its stack), never a SIGKILL."""
    proc = subprocess.Popen(
        [*CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV, cwd=ROOT
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=180)
        pytest.fail(f"gameday did not finish in {timeout:.0f} s:\n{err[-4000:]}")
    return proc.returncode, out, err


@pytest.mark.server
@pytest.mark.timeout(900)  # ~3 min on an idle two-core host; a loaded CI host needs more
def test_two_scenarios_are_detected_diagnosed_restored_and_the_stack_stopped(tmp_path: Path) -> None:
    workdir = tmp_path / "gd"
    example = ROOT / "examples" / "gameday_scenario.py"
    code, out, err = _gameday(
        ["--workdir", str(workdir), "--format", "json", "--scenario", "corrupt-model-file",
         "--scenario", "wrong-backend", "--scenario-file", str(example)],
        timeout=600,
    )  # fmt: skip
    assert code == 0, out + err[-4000:]
    card = json.loads(out)
    rows = {row["name"]: row for row in card["scenarios"]}
    assert set(rows) == {"corrupt-model-file", "wrong-backend"}
    for row in rows.values():
        assert row["detected"] and row["restored"] and row["lost"] == [], row
        assert row["runbook"] == row["expected_runbook"] == row["diagnosis_runbook"], row
        assert 0 < row["seconds_to_alert"] <= row["seconds_to_notify"] < 120, row
        assert row["seconds_to_restore"] is not None
    assert rows["corrupt-model-file"]["runbook"] == c.RUNBOOK_MODEL_FILE_INVALID
    assert "divided by 20" in card["timings"]
    assert not (workdir / "stack" / STATE_FILE).exists()  # `stack down` ran
    assert "stopping triton" in err


@pytest.mark.server
@pytest.mark.timeout(900)
def test_ctrl_c_restores_the_running_scenario_and_stops_the_stack(tmp_path: Path) -> None:
    workdir = tmp_path / "gd"
    proc = subprocess.Popen(
        [*CLI, "--workdir", str(workdir), "--scenario", "exporter-killed"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV, cwd=ROOT,
    )  # fmt: skip
    state = workdir / "stack" / STATE_FILE
    pids: list[int] = []
    deadline = time.monotonic() + 400
    assert proc.stderr is not None
    for line in proc.stderr:
        if "[exporter-killed] inject" in line:
            pids = [comp["pid"] for comp in json.loads(state.read_text())["components"]]
            time.sleep(2)
            proc.send_signal(signal.SIGINT)
            break
        assert time.monotonic() < deadline, "the scenario never started"
    rest = proc.communicate(timeout=120)
    assert pids, "no stack state seen"
    assert proc.returncode == c.EXIT_INTERRUPTED  # interrupted: 128 + SIGINT, as every command
    assert "restoring the running scenario" in "".join(rest)
    assert not state.exists()
    assert not [pid for pid in pids if _alive(pid)]
