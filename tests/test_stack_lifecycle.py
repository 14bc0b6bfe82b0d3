"""`triton-sre stack up` failing part-way: non-zero, the failing component's log tail, nothing left."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from triton_sre.stack.components import STATE_FILE
from triton_sre.stack.local import PORT_OFFSETS

CLI = [sys.executable, "-m", "triton_sre.cli"]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLACK_")}
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=180, env=env)


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _free_block(size: int) -> int:
    for base in range(23000, 60000, 97):
        socks = []
        try:
            for port in range(base, base + size):
                s = socket.socket()
                s.bind(("127.0.0.1", port))
                socks.append(s)
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise AssertionError("no block of free ports")


@pytest.mark.triton
def test_a_component_that_cannot_start_fails_up_with_its_log_and_leaves_nothing(tmp_path: Path) -> None:
    base = _free_block(len(PORT_OFFSETS))
    blocker = socket.socket()
    blocker.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLACK_")}
    argv = [*CLI, "stack", "up", "--workdir", str(tmp_path), "--port-base", str(base), "--timeout", "30"]
    # `up` refuses ports in use before anything starts (stack/guard.py): Alertmanager's is taken
    # once the stack is past that check, when Prometheus is recorded (Alertmanager starts after it)
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 150
        while '"prometheus"' not in _read(tmp_path / STATE_FILE) and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.02)
        blocker.bind(("127.0.0.1", base + PORT_OFFSETS["alertmanager"]))
        blocker.listen()
        out, err = proc.communicate(timeout=180)
    finally:
        blocker.close()
        if proc.poll() is None:  # pragma: no cover - only when an assertion above failed
            proc.kill()
            proc.communicate()
    result = subprocess.CompletedProcess(argv, proc.returncode, out, err)
    assert result.returncode == 1, result.stderr
    assert "alertmanager exited while starting" in result.stderr
    assert "address already in use" in result.stderr  # the tail of alertmanager's own log
    started = [int(pid) for pid in re.findall(r"started \S+ \(pid (\d+)\)", result.stderr)]
    assert len(started) == 4  # triton, exporter, prometheus, alertmanager
    assert [pid for pid in started if _running(pid)] == []
    assert not (tmp_path / STATE_FILE).exists()
    assert "stopping triton" in result.stderr


def test_usage_errors_and_an_empty_workdir(tmp_path: Path) -> None:
    missing = _run("stack", "up", "--workdir", str(tmp_path), "--model-repository", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "is not a directory" in missing.stderr
    down = _run("stack", "down", "--workdir", str(tmp_path))
    assert down.returncode == 0 and "stopped 0 component(s)" in down.stdout
    status = _run("stack", "status", "--workdir", str(tmp_path))
    assert status.returncode == 1 and "no stack" in status.stdout


def test_the_stand_in_notice_survives_the_stderr_redaction(tmp_path: Path) -> None:
    """`stack up` without a Slack token says where the messages go; the redaction of the CLI's stderr
    once turned it into "bot: no $SLACK_BOT_TOKEN: <redacted> to the Slack stand-in"."""
    from triton_sre import conventions as c
    from triton_sre.redact import redact
    from triton_sre.stack.local import standin_notice

    log = tmp_path / "logs" / "slack-standin.log"
    notice = standin_notice(log)
    assert redact(notice) == notice
    assert f"${c.ENV_SLACK_BOT_TOKEN}" in notice and str(log) in notice


def test_the_summary_names_tritons_metrics_and_the_log_to_triage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`stack up`'s "Look at" block listed Triton's component log (run_triton's two lines): `triage` on
    it said "No load failure found" while a model had failed, and `doctor --triton-url` with the printed
    URL looked for metrics on port 8002 (journey23). It names tritonserver's log and metrics URL too,
    from the state file as `stack up` and `stack status` read it (journey25: the first version looked
    for an `extra` key that status() flattens, and printed neither)."""
    from triton_sre.stack.command import _print
    from triton_sre.stack.components import Component, save_state, status

    triton = Component(
        name="triton",
        pid=11,
        start_time=0,
        url="http://127.0.0.1:40001",
        log="/w/logs/triton.log",
        argv=[],
        extra={"metrics_url": "http://127.0.0.1:40003/metrics", "server_log": "/w/triton/tritonserver.log"},
    )
    save_state(tmp_path, [triton], {})
    _print(status(tmp_path), "text", header="up")
    out = capsys.readouterr().out
    assert re.search(r"Triton metrics\s+http://127\.0\.0\.1:40003/metrics", out)
    assert re.search(r"tritonserver log \(triage\)\s+/w/triton/tritonserver\.log", out)
