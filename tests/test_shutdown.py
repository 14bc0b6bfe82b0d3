"""SIGTERM stops a long-running command even when the kernel delivers it to a worker thread.

CPython runs Python signal handlers on the main thread only; a signal delivered to another thread
leaves a main thread parked in an untimed ``Event.wait()`` asleep for good. `triton-sre export` hung
that way under load (tests/test_extras.py, 1 of 8 runs). These tests deliver the signal to a chosen
worker thread on purpose (``pthread_kill`` / ``tgkill``), so the outcome does not depend on load.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path

import pytest

from triton_sre import conventions as c
from triton_sre.bot.outbox import Outbox
from triton_sre.stack.processes import free_port

ROOT = Path(__file__).resolve().parents[1]

_PROGRAM = """
import signal, sys, threading, time
from triton_sre.shutdown import stop_on_signals, wait_until_set

stop = stop_on_signals()

def worker():
    time.sleep(0.3)
    signal.pthread_kill(threading.get_ident(), signal.SIGTERM)  # this thread, not the main one
    time.sleep(3600)

threading.Thread(target=worker, daemon=True).start()
{wait}
print("stopped", flush=True)
"""


def _run(wait: str, timeout: float) -> subprocess.CompletedProcess[str]:
    code = textwrap.dedent(_PROGRAM).format(wait=wait)
    argv = [sys.executable, "-c", code]
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def test_a_signal_taken_by_a_worker_thread_ends_the_wait() -> None:
    done = _run("wait_until_set(stop)", timeout=120)
    assert done.returncode == 0 and done.stdout == "stopped\n", done.stderr


def test_an_untimed_wait_would_miss_it() -> None:
    """The contrast that makes the test above mean something: the plain wait never wakes."""
    with pytest.raises(subprocess.TimeoutExpired):
        _run("stop.wait()", timeout=5)


def _tgkill(pid: int, tid: int, sig: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if hasattr(libc, "tgkill"):
        result = libc.tgkill(pid, tid, sig)
    else:  # glibc before 2.30: the raw system call (x86_64, aarch64)
        number = {"x86_64": 234, "aarch64": 131}[os.uname().machine]
        result = libc.syscall(number, pid, tid, sig)
    assert result == 0, os.strerror(ctypes.get_errno())


def test_export_stops_on_a_sigterm_delivered_to_a_worker_thread(tmp_path: Path) -> None:
    port, dead = free_port(), free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "triton_sre.cli", "export", f"--triton-url=http://127.0.0.1:{dead}",
         f"--listen=127.0.0.1:{port}", "--interval=1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tmp_path,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while True:  # serving, with its poll and HTTP threads running
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as resp:
                    if c.M_POLL_ERRORS in resp.read().decode():
                        break
            except OSError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, "the exporter never served"
            time.sleep(0.1)
        workers = sorted(int(t) for t in os.listdir(f"/proc/{proc.pid}/task") if int(t) != proc.pid)
        assert workers, "the exporter runs no worker thread"
        _tgkill(proc.pid, workers[-1], signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == c.EXIT_OK, err.decode()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _serving(url: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            pass
        assert proc.poll() is None and time.monotonic() < deadline, f"never served {url}"
        time.sleep(0.1)


def _service(tmp_path: Path, command: str, port: int) -> subprocess.Popen[bytes]:
    dead = free_port()  # Triton (and Slack) answering nowhere: the services run on regardless
    argv = [sys.executable, "-m", "triton_sre.cli", command, f"--triton-url=http://127.0.0.1:{dead}",
            f"--listen=127.0.0.1:{port}"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if command == "bot":
        argv += ["--channel", "#ops", "--outbox", str(tmp_path / "outbox.sqlite3")]
        env.update(
            {
                c.ENV_BOT_TOKEN: "webhook-test",
                c.ENV_SLACK_BOT_TOKEN: "xoxb-test",
                c.ENV_SLACK_API_URL: f"http://127.0.0.1:{dead}/api",
            }
        )
    env.pop(c.ENV_LOG_LEVEL, None)
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tmp_path, env=env)


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGTERM], ids=["SIGHUP", "SIGTERM"])
@pytest.mark.parametrize(("command", "stopped"), [("export", "exporter stopped"), ("bot", "bot stopped")])
def test_a_service_stops_on_sighup_as_on_sigterm_and_says_which(
    tmp_path: Path, command: str, stopped: str, sig: signal.Signals
) -> None:
    """SIGHUP's default action ended export and bot at once, exit 129 and not a word (fault probes,
    round five): now it takes SIGTERM's path, the server closed (and the bot's outbox with it), one
    line naming the signal, exit 0."""
    port = free_port()
    proc = _service(tmp_path, command, port)
    try:
        _serving(f"http://127.0.0.1:{port}{c.PATH_HEALTHZ}", proc)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = err.decode()
    assert proc.returncode == c.EXIT_OK, text
    assert f"{stopped} by {sig.name}" in text and "Traceback" not in text
    if command == "bot":  # the outbox closed cleanly: it opens, and nothing is left pending
        assert Outbox(str(tmp_path / "outbox.sqlite3")).pending() == 0


_EARLY = """
import os, signal, sys
from triton_sre import cli

real = cli.build_parser

def build_parser(*args):  # the signal comes while the parser is built (its imports: over a second under load)
    os.kill(os.getpid(), signal.{sig})
    return real(*args)

cli.build_parser = build_parser
sys.exit(cli.main({argv!r}))
"""


@pytest.mark.parametrize("sig", ["SIGHUP", "SIGTERM"])
def test_a_stop_signal_before_the_parser_is_built_stops_the_service_with_0(sig: str) -> None:
    """export takes SIGHUP/SIGTERM as its normal stop from its first instant, not only once its command
    runs (before, the default action ended it: exit 129 or 143, no word of why)."""
    argv = ["export", "--triton-url", "http://127.0.0.1:9", "--listen", f"127.0.0.1:{free_port()}"]
    code = textwrap.dedent(_EARLY).format(sig=sig, argv=argv)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == c.EXIT_OK, (done.returncode, done.stderr)
    assert f"exporter stopped by {sig}" in done.stderr


def test_a_command_that_is_not_a_service_keeps_the_default_handlers() -> None:
    from triton_sre.shutdown import service_command, stopping_early

    assert service_command(["--log-level", "debug", "export"])
    assert service_command(["bot", "--help"]) and service_command(["demo"])
    assert not service_command(["--log-level", "export", "triage", "x.log"])  # "export" is the level's value
    assert not service_command(["triage", "export"]) and not service_command([])
    before = signal.getsignal(signal.SIGTERM)
    with stopping_early(["triage", "x.log"]):
        assert signal.getsignal(signal.SIGTERM) is before
    with stopping_early(["export"]):
        assert signal.getsignal(signal.SIGTERM) is not before
    assert signal.getsignal(signal.SIGTERM) is before  # restored afterwards


_AFTER = """
import os, signal, sys, time
from triton_sre import cli, shutdown

def service(_args):  # a service that ran and was stopped by SIGTERM, as export is
    stop = shutdown.stop_on_signals()
    os.kill(os.getpid(), signal.SIGTERM)
    shutdown.wait_until_set(stop)
    return 0

cli._cmd_export = service
code = cli.main(["export"])
os.kill(os.getpid(), signal.SIGTERM)  # a repeated stop while the process ends (threads joined, atexit)
time.sleep(0.3)
sys.exit(code)
"""


def test_a_service_that_took_the_early_handlers_keeps_them_until_it_exits() -> None:
    """Once the service's stop_on_signals took the early event, its handlers stay (as stop_on_signals'
    always did): restored to the defaults when main returned, a second SIGTERM while the process ended
    killed it (143) after a clean stop."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_AFTER)], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert done.returncode == c.EXIT_OK, (done.returncode, done.stderr)
