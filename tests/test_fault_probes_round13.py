"""Fault probes, round thirteen (branch `probes13`, 2026-12-06): a gameday killed with SIGKILL, a
replaced pod, a chunked answer cut mid-body, a leap second — docs/failure-behaviour.md, "Fault
probes, round thirteen"."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import triton_sre
from triton_sre.stack.components import process_start_time as _start_time

ROOT = Path(triton_sre.__file__).resolve().parents[1]  # the code under test (PYTHONPATH), its CLI too
CLI = [sys.executable, "-m", "triton_sre.cli"]


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLACK_")}
    return {**env, "PYTHONPATH": str(ROOT), "HOME": str(home)}


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120, env=_env(home))


def _recorded(state: Path) -> dict[str, tuple[int, int]]:
    """Every process the state file names (components and tritonserver): name -> (pid, start time)."""
    procs = {}
    for comp in json.loads(state.read_text())["components"]:
        procs[comp["name"]] = (comp["pid"], comp["start_time"])
        if isinstance(comp.get("extra", {}).get("server_pid"), int):
            procs["tritonserver"] = (comp["extra"]["server_pid"], comp["extra"]["server_start_time"])
    return procs


def _running(procs: dict[str, tuple[int, int]]) -> list[str]:
    return [name for name, (pid, start) in procs.items() if _start_time(pid) == start]


# -- a gameday (or the demo) killed with SIGKILL -------------------------------------------------------------
OWNED_RUNS = {
    # the command, what its stderr says once the stack is up and at work, whether its watchdog is killed too
    "gameday": (["gameday", "--scenario", "corrupt-model-file"], "[corrupt-model-file] inject", False),
    "demo": (["demo", "--duration", "600", "--interval", "1"], "bot ready at", True),
}


@pytest.mark.server
@pytest.mark.timeout(900)
@pytest.mark.parametrize("command", sorted(OWNED_RUNS))
def test_a_gameday_or_demo_killed_with_sigkill_leaves_no_component_running(
    tmp_path: Path, command: str
) -> None:
    """Before: a gameday killed with SIGKILL mid-fault (no `finally` runs) left its Triton, Prometheus,
    Alertmanager, exporter, bot and Slack stand-in running, parent pid 1, until someone found its temp
    workdir; the demo alike. Now its components get SIGTERM when it dies (a parent-death signal) and
    its watchdog stops what the state file names. With the watchdog killed first (the demo's run), the
    parent-death signal alone stops them, and `stack status`/`stack down` find the orphaned state."""
    argv, at_work, kill_watchdog = OWNED_RUNS[command]
    home, workdir = tmp_path / "home", tmp_path / "run"
    state = workdir / "stack" / "stack.json"
    err_path = tmp_path / "stderr"
    with err_path.open("w") as err:
        proc = subprocess.Popen(
            [*CLI, *argv, "--workdir", str(workdir)], stdout=subprocess.DEVNULL, stderr=err, env=_env(home),
            cwd=ROOT,
        )  # fmt: skip
    procs: dict[str, tuple[int, int]] = {}
    try:
        deadline = time.monotonic() + 600
        while at_work not in err_path.read_text():
            assert proc.poll() is None, err_path.read_text()[-3000:]
            assert time.monotonic() < deadline, f"{command} never got to work"
            time.sleep(0.5)
        procs = _recorded(state)
        assert {"triton", "tritonserver", "prometheus", "alertmanager", "exporter", "bot"} <= set(procs)
        assert not [n for n in procs if n not in _running(procs)], procs  # all up before the kill
        watchdog = re.search(r"watchdog \(pid (\d+)\)", err_path.read_text())
        if kill_watchdog:
            assert watchdog, err_path.read_text()[-3000:]
            os.kill(int(watchdog.group(1)), signal.SIGKILL)
        proc.kill()
        proc.wait(timeout=10)
        killed = time.monotonic()
        deadline = killed + 40  # SIGTERM, then the watchdog's stop (15 s before a SIGKILL)
        while _running(procs) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _running(procs) == [], f"still running 40 s after the {command}'s SIGKILL: {_running(procs)}"
        print(f"{command}: every component stopped {time.monotonic() - killed:.1f} s after the SIGKILL")
        if kill_watchdog:  # the state file is left: found as a stack whose owner is gone, nothing running
            rows = json.loads(_cli(home, "stack", "status", "--format", "json").stdout)["orphaned"]
            assert [(r["workdir"], r["running"]) for r in rows] == [(str(workdir / "stack"), [])], rows
            assert f"in {workdir / 'stack'}" in _cli(home, "stack", "down").stdout
        deadline = time.monotonic() + 30
        while state.exists() and time.monotonic() < deadline:
            time.sleep(0.5)
        assert not state.exists()  # the watchdog's `down` (or `stack down`) ran to its end
        assert json.loads(_cli(home, "stack", "status", "--format", "json").stdout)["orphaned"] == []
    finally:
        if proc.poll() is None:
            proc.kill()
        if _running(procs):  # before the change: stop what the killed command left
            _cli(home, "stack", "down", "--workdir", str(workdir / "stack"))


def test_stack_status_and_down_find_a_stack_whose_owner_is_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stack whose owner died and whose watchdog was killed too: `stack status` (any workdir) names
    it and what still runs there, `stack down` stops it; a recorded pid now another process's (its
    start time differs) is never signalled. A stack whose owner runs is left alone."""
    from triton_sre.stack import owner

    home = tmp_path / "home"
    monkeypatch.setattr(owner, "REGISTRY", home / ".cache" / "triton-sre" / "owned")
    gone = subprocess.Popen(["sleep", "0.2"])
    gone_start = _start_time(gone.pid)
    gone.wait()
    left = subprocess.Popen(["sleep", "300"], start_new_session=True)  # a component still running
    other = subprocess.Popen(["sleep", "300"], start_new_session=True)  # its pid recorded, start differs
    try:
        orphan = tmp_path / "orphan"
        owned_alive = tmp_path / "owned-alive"
        for workdir, owner_pid, owner_start in (
            (orphan, gone.pid, gone_start),
            (owned_alive, os.getpid(), _start_time(os.getpid())),
        ):
            workdir.mkdir()
            comps = [
                {"name": "exporter", "pid": left.pid, "start_time": _start_time(left.pid), "url": "u",
                 "log": "l", "argv": []},
                {"name": "bot", "pid": other.pid, "start_time": (_start_time(other.pid) or 0) - 1,
                 "url": "u", "log": "l", "argv": []},
            ]  # fmt: skip
            info = {"pid": owner_pid, "start_time": owner_start, "command": "gameday"}
            (workdir / "stack.json").write_text(json.dumps({"components": comps, owner.OWNER_KEY: info}))
            owner.register(workdir)
        status = _cli(home, "stack", "status")
        assert f"a stack whose owner (gameday, pid {gone.pid}) is gone in {orphan}: exporter running" in (
            status.stdout
        ), status.stdout + status.stderr
        assert str(owned_alive) not in status.stdout  # its owner (this test) runs
        rows = json.loads(_cli(home, "stack", "status", "--format", "json").stdout)["orphaned"]
        assert [(r["workdir"], r["running"]) for r in rows] == [(str(orphan), ["exporter"])]
        down = _cli(home, "stack", "down")
        assert down.returncode == 0, down.stderr
        assert f"stopped 1 component(s) in {orphan}: exporter" in down.stdout, down.stdout + down.stderr
        assert left.wait(timeout=20) == -signal.SIGTERM
        assert other.poll() is None  # the recycled pid: named, not signalled
        assert not (orphan / "stack.json").exists() and (owned_alive / "stack.json").exists()
        assert json.loads(_cli(home, "stack", "status", "--format", "json").stdout)["orphaned"] == []
    finally:
        for p in (left, other):
            if p.poll() is None:
                p.kill()
                p.wait()



def test_stack_down_leaves_the_stack_of_a_running_gameday_alone(tmp_path: Path) -> None:
    """Before: `stack down --workdir DIR` on the stack of a gameday still running stopped it under the
    gameday, whose scenarios then failed on a dead stack. Now it refuses (exit 1), naming the owner
    and how to end it; the component runs on and the state file is kept."""
    from triton_sre import conventions as c
    from triton_sre.stack import owner

    component = subprocess.Popen(["sleep", "300"], start_new_session=True)
    try:
        workdir = tmp_path / "gd"
        workdir.mkdir()
        comps = [{"name": "exporter", "pid": component.pid, "start_time": _start_time(component.pid),
                  "url": "u", "log": "l", "argv": []}]  # fmt: skip
        me = {"pid": os.getpid(), "start_time": _start_time(os.getpid()), "command": "gameday"}
        (workdir / "stack.json").write_text(json.dumps({"components": comps, owner.OWNER_KEY: me}))
        down = _cli(tmp_path / "home", "stack", "down", "--workdir", str(workdir))
        assert down.returncode == c.EXIT_FAILURE, down.stdout + down.stderr
        assert f"belongs to a running gameday (pid {os.getpid()})" in down.stderr
        assert f"`kill {os.getpid()}`" in down.stderr
        time.sleep(0.5)
        assert component.poll() is None and (workdir / "stack.json").exists()
    finally:
        component.kill()
        component.wait()


def test_gameday_attach_refuses_the_stack_of_a_running_gameday(tmp_path: Path) -> None:
    """Before: `gameday --attach DIR` took another gameday's own stack (it has the scale and ports an
    attach reads) and ran scenarios on it, a stack that gameday stops when it ends. Now refused."""
    from triton_sre.gameday.stack import GAMEDAY_INFO, attach_stack
    from triton_sre.stack import owner
    from triton_sre.stack.local import StackError

    component = subprocess.Popen(["sleep", "300"], start_new_session=True)
    try:
        comps = [{"name": "exporter", "pid": component.pid, "start_time": _start_time(component.pid),
                  "url": "u", "log": "l", "argv": []}]  # fmt: skip
        me = {"pid": os.getpid(), "start_time": _start_time(os.getpid()), "command": "gameday"}
        state = {"components": comps, owner.OWNER_KEY: me, GAMEDAY_INFO: {"scale": 20.0, "interval": 1.0},
                 "ports": {"exporter": 1}, "model_repository": str(tmp_path)}  # fmt: skip
        (tmp_path / "stack.json").write_text(json.dumps(state))
        with pytest.raises(StackError, match=rf"belongs to a running gameday \(pid {os.getpid()}\)"):
            attach_stack(tmp_path, lambda _text: None)
    finally:
        component.kill()
        component.wait()

# -- a leap second in --start / --end ------------------------------------------------------------------
def test_a_leap_second_is_read_as_unix_time_counts_it(capsys: pytest.CaptureFixture[str]) -> None:
    """Before: `report --start 2016-12-31T23:59:60Z` (valid RFC 3339: the last leap second) was `neither
    Unix seconds nor an RFC 3339 time`. Now :59:60 is the second after :59:59 (Unix time has no second
    of its own for it), with an offset or a fraction too; a second 60 not ending a minute is named."""
    from triton_sre.cli import main
    from triton_sre.report.command import parse_time

    new_year_2017 = 1483228800.0
    assert parse_time("2016-12-31T23:59:60Z") == new_year_2017
    assert parse_time("2016-12-31 15:59:60.25-08:00") == new_year_2017 + 0.25
    assert parse_time("2016-12-31T23:59:59Z") == new_year_2017 - 1
    code = main(["report", "--prometheus-url", "http://127.0.0.1:9", "--start", "2016-12-31T23:58:60Z",
                 "--end", "2017-01-01T01:00:00Z"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert "'2016-12-31T23:58:60Z': second 60 is a leap second, which only ends a minute (:59:60)" in err


# -- a chunked answer cut mid-body ---------------------------------------------------------------------
def test_a_chunked_prometheus_answer_cut_mid_body_says_it_was_cut_not_unreachable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: Prometheus (a real one, behind a proxy sending its answer chunked and closing the
    connection after half of it) was reported by `report` and `rollout check` as `cannot reach
    Prometheus at …: Response ended prematurely`: it had been reached and had answered. Now the status
    it answered and that the answer was cut are said."""
    from backfilled_prometheus import backfilled
    from faultproxy import CUT_CHUNKED, FaultProxy

    from triton_sre import conventions as c
    from triton_sre.cli import main

    now = time.time()
    stamps = [now - 600 + 15 * i for i in range(40)]
    labels = {c.LABEL_JOB: c.DEFAULT_TRITON_JOB, c.LABEL_MODEL: "cut", c.LABEL_VERSION: "1"}
    series = [(c.NV_REQUEST_SUCCESS, labels, [(t, t - stamps[0]) for t in stamps])]
    with backfilled(tmp_path / "prom", series) as prom, FaultProxy(prom.url) as proxy:
        proxy.set_fault("/api/v1/", CUT_CHUNKED)
        for argv in (
            ["report", "--prometheus-url", proxy.url, "--last", "5m", "--out", str(tmp_path / "out")],
            ["rollout", "check", "--prometheus", proxy.url, "--model", "cut", "--baseline-version", "1",
             "--candidate-version", "2", "--window", "5m"],
        ):  # fmt: skip
            assert main(argv) == c.EXIT_USAGE
            err = capsys.readouterr().err
            assert f"Prometheus at {proxy.url} answered HTTP 200, then the answer was cut" in err, err
            assert "cannot reach" not in err and "before its last chunk" in err


@pytest.mark.triton
def test_a_chunked_triton_answer_cut_mid_body_says_it_was_cut(triton: object) -> None:
    """Before: Triton's repository index sent chunked and cut after half was `reading URL: Response
    ended prematurely` in the exporter's and triage's fault line. Now: the answer was cut."""
    from faultproxy import CUT_CHUNKED, FaultProxy

    from triton_sre.triton.client import FetchError, TritonClient

    with FaultProxy(triton.http_url) as proxy:  # type: ignore[attr-defined]
        proxy.set_fault("/v2/repository/index", CUT_CHUNKED)
        with pytest.raises(FetchError) as caught:
            TritonClient(proxy.url, f"{proxy.url}/metrics").repository_index()
    cut = "the answer was cut: the connection closed before its last chunk"
    assert caught.value.message.startswith(f"reading {proxy.url}/v2/repository/index: {cut}"), caught.value


# -- a replaced pod -----------------------------------------------------------------------------------------
def test_a_pod_replaced_inside_the_rollout_window_is_counted_as_a_restart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: the candidate's pod replaced by a new one (its series ended 400 s before the check, the
    new pod's began 30 s later from zero, a new `pod`/`instance`) was no restart: `sum(resets(…))`
    sees none, each series growing, and the reason said nothing while requests refused in between
    reached no counter. Now a side whose series ended in the window and another began is counted as
    restarted by a new pod; a pod added with none gone (the baseline scaled up) is not."""
    from backfilled_prometheus import backfilled

    from triton_sre import conventions as c
    from triton_sre.cli import main

    start = time.time() - 1200
    down = start + 800
    stamps = [start + 15.0 * i for i in range(80)]
    series = []

    def counters(version: str, pod: str, times: list[float]) -> None:
        labels = {c.LABEL_JOB: c.DEFAULT_TRITON_JOB, c.LABEL_MODEL: "replaced", c.LABEL_VERSION: version,
                  c.KSM_LABEL_POD: pod, c.LABEL_INSTANCE: f"{pod}:8002"}  # fmt: skip
        for family in (c.NV_REQUEST_SUCCESS, c.NV_INFERENCE_COUNT, c.NV_EXEC_COUNT):
            series.append((family, labels, [(t, 5.0 * (t - times[0])) for t in times]))

    counters("1", "triton-0", stamps)
    counters("1", "triton-added", [t for t in stamps if t >= down + 100])  # a scale-up: none gone
    counters("2", "triton-old", [t for t in stamps if t < down])
    counters("2", "triton-new", [t for t in stamps if t >= down + 30])
    with backfilled(tmp_path / "prom", series) as prom:
        argv = ["rollout", "check", "--prometheus", prom.url, "--model", "replaced", "--baseline-version",
                "1", "--candidate-version", "2", "--format", "json"]  # fmt: skip
        code = main(argv)
    verdict = json.loads(capsys.readouterr().out)
    assert code == c.EXIT_OK, verdict
    assert verdict["restarts"] == {"baseline": 0, "candidate": 1}, verdict
    assert verdict["replaced_pods"] == {"baseline": 0, "candidate": 1}
    replaced = "a pod replaced by a new one in the window (its series ended, another began): "
    replaced += "replaced v2 1 time"
    assert replaced in verdict["reason"], verdict["reason"]
    assert "requests refused while it was down are in no figure" in verdict["reason"]
