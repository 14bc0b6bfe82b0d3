"""Fault probes, round seven (branch `probes7`, 2026-12-05): the machine around the tool (closed
standard streams, an ASCII locale, file descriptors and memory limits, permissions, odd output
paths) — docs/failure-behaviour.md, "Fault probes, round seven"."""

from __future__ import annotations

import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from test_fault_probes import ROOT, assert_clean_error
from test_fault_probes_round5 import healthy_prometheus, run_env

from triton_sre import conventions as c

__all__ = ["healthy_prometheus"]  # a fixture shared with round five

FAILED_LOAD = (
    "E1205 10:00:00.000 1 model_lifecycle.cc:626] failed to load 'modèle—x' version 1: Invalid argument: é—\n"
)


def child(
    args: list[str], cwd: Path, *, env: dict[str, str] | None = None, close: tuple[int, ...] = ()
) -> tuple[int, str, str]:
    """The CLI in a child process, with the descriptors in `close` closed before it starts (what a
    shell's `>&-`, `<&-`, `2>&-` do) and `env` on top of this one's environment."""
    return run_env(
        args, cwd, preexec=(lambda: [os.close(fd) for fd in close]) if close else None, **(env or {})
    )


def failed_load_log(tmp_path: Path) -> Path:
    log = tmp_path / "triton.log"
    log.write_text(FAILED_LOAD, encoding="utf-8")
    return log


# -- closed standard streams ------------------------------------------------------------------------
def test_a_closed_stdout_is_an_output_error_naming_it(tmp_path: Path) -> None:
    """`triton-sre triage triton.log >&-` (and `--format json`, `generate`): Python sets sys.stdout
    None, and the first print was `internal error: AttributeError: 'NoneType' object has no
    attribute 'write'`. Now it is the output error any other failed write to stdout is."""
    log = failed_load_log(tmp_path)
    for args in (["triage", str(log)], ["triage", "--format", "json", str(log)]):
        code, _, err = child(args, tmp_path, close=(1,))
        assert_clean_error(code, err, c.EXIT_USAGE, "cannot write (standard output): Bad file descriptor")
    generate = ["generate", "--spec", str(ROOT / "slos.yaml"), "--out", str(tmp_path / "out")]
    code, _, err = child(generate, tmp_path, close=(1,))
    assert_clean_error(code, err, c.EXIT_USAGE, "cannot write (standard output)")
    assert (tmp_path / "out" / "alerts").is_dir()  # the files were written; only the listing failed


def test_a_closed_stdin_given_as_the_log_says_so(tmp_path: Path) -> None:
    """`triton-sre triage - <&-` was `internal error: AttributeError: 'NoneType' object has no
    attribute 'isatty'`."""
    code, out, err = child(["triage", "-"], tmp_path, close=(0,))
    assert_clean_error(code, err, c.EXIT_USAGE, "-: standard input is closed")
    assert out == ""


def test_a_closed_stderr_keeps_the_exit_code(tmp_path: Path) -> None:
    """With stderr closed (`2>&-`) a missing log exited 120 (Python's code for a failed flush at
    exit, after an AttributeError nothing could print) instead of the documented 2; a closed stdout
    and stderr together alike."""
    missing = str(tmp_path / "missing.log")
    assert child(["triage", missing], tmp_path, close=(2,))[0] == c.EXIT_USAGE
    assert child(["triage", missing], tmp_path, close=(1, 2))[0] == c.EXIT_USAGE
    log = failed_load_log(tmp_path)
    code, out, _ = child(["triage", str(log)], tmp_path, close=(2,))
    assert code == c.EXIT_FAILURE and "modèle—x" in out  # a finding, found and printed as usual


def test_a_closed_descriptor_is_never_taken_by_a_file_the_command_opens(tmp_path: Path) -> None:
    """With stdout closed, the next file opened took descriptor 1: a child process (the stack's
    Prometheus, lint's `--python`) would have written its output into it. The descriptor is
    /dev/null now: a child writing to its stdout leaves `generate`'s files as they were."""
    probe = (
        "import os, sys; from triton_sre import cli; cli._closed_standard_streams(); "
        "print(os.readlink('/proc/self/fd/1'), os.readlink('/proc/self/fd/0'), file=sys.stderr)"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        env=env,
        timeout=60,
        preexec_fn=lambda: [os.close(fd) for fd in (0, 1)] and None,
    )
    assert proc.stderr.decode().split() == [os.devnull, os.devnull], proc.stderr


def test_an_ascii_locale_without_utf8_mode_escapes_what_it_cannot_show(tmp_path: Path) -> None:
    """`LC_ALL=C PYTHONUTF8=0` (no PYTHONIOENCODING): Python's stdout is ASCII with
    `surrogateescape`, not `strict`, so round five's `backslashreplace` was not applied and a log
    holding `é` ended in `internal error: UnicodeEncodeError: 'ascii' codec can't encode character
    '\\xe8'`, no finding shown."""
    log = failed_load_log(tmp_path)
    env = {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0"}
    env_without = {k: v for k, v in os.environ.items() if k != "PYTHONIOENCODING"}
    for fmt in ("text", "markdown"):
        proc = subprocess.run(
            [sys.executable, "-m", "triton_sre.cli", "triage", "--format", fmt, str(log)],
            capture_output=True,
            env={**env_without, "PYTHONPATH": str(ROOT), **env},
            cwd=tmp_path,
            timeout=120,
        )
        err = proc.stderr.decode()
        assert proc.returncode == c.EXIT_FAILURE, err
        assert "Traceback" not in err and "internal error" not in err, err
        assert "mod\\xe8le\\u2014x" in proc.stdout.decode("ascii"), proc.stdout


def test_an_internal_error_with_a_multi_line_reason_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Under `ulimit -v 100000` numpy's import fails with a three-line ImportError ("Error importing
    numpy: you should not try to import numpy from / its source directory; ..."), printed as the
    internal error's reason over three lines. The reason is one line now (`redact.one_line`)."""
    from triton_sre import cli

    def failing(args: object) -> int:
        raise ImportError("Error importing numpy: you should not try to import numpy from\n   its source")

    monkeypatch.setattr(cli, "_dispatch", failing)
    assert cli._main(["triage", "x.log"], sys.stderr) == c.EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith("triton-sre triage: internal error: ImportError: Error importing numpy"), err


# -- too few file descriptors (ulimit -n) -----------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


@pytest.mark.parametrize("command", ["export", "bot"])
def test_a_service_out_of_file_descriptors_still_answers(tmp_path: Path, command: str) -> None:
    """`ulimit -n 32` and 60 idle connections: accept() failed with EMFILE, the listening socket
    stayed readable and serve_forever retried at once: 100% of a CPU, /healthz unanswered until the
    idle sockets' 10 s timeout. Now the oldest waiting connection is closed to make room, the
    accept waits for it, and the shortage is counted on /metrics."""
    port = _free_port()
    args = [command, "--listen", f"127.0.0.1:{port}"]
    if command == "export":
        args += ["--triton-url", "http://127.0.0.1:9", "--interval", "1"]
    else:
        args += ["--outbox", str(tmp_path / "o.db"), "--channel", "probe"]
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        c.ENV_BOT_TOKEN: "probe",
        c.ENV_SLACK_BOT_TOKEN: "xoxb-probe",
        c.ENV_SLACK_API_URL: "http://127.0.0.1:9/api/",
    }
    env.pop(c.ENV_CONFIG, None)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "triton_sre.cli",
            *args,
            *(["--interval", "1"] if command == "export" else []),
        ],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (32, 32)),
    )
    idle: list[socket.socket] = []
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(url + c.PATH_HEALTHZ, timeout=2).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[1][-2000:]
                time.sleep(0.2)
        idle = [socket.create_connection(("127.0.0.1", port), timeout=2) for _ in range(60)]
        time.sleep(0.5)
        before = _cpu_ticks(proc.pid)
        with urllib.request.urlopen(url + c.PATH_HEALTHZ, timeout=3) as answer:  # before: timed out
            assert answer.status == 200
        time.sleep(1.0)
        assert _cpu_ticks(proc.pid) - before < 50  # of ~150 in those 1.5 s: not spinning (before: ~150)
        time.sleep(1.5)  # the exporter renders /metrics once per poll
        with urllib.request.urlopen(url + c.PATH_METRICS, timeout=3) as answer:
            body = answer.read().decode()
        counted = [line for line in body.splitlines() if line.startswith(c.M_HTTP_DESCRIPTOR_SHORTAGES + " ")]
        assert counted and float(counted[0].split()[1]) >= 1, body[:2000]
    finally:
        for sock in idle:
            sock.close()
        proc.terminate()
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == c.EXIT_OK, err
    assert b"Too many open files" in err and b"Traceback" not in err, err[-2000:]


# -- output paths that are not folders --------------------------------------------------------------
def _in_the_way(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """Output folders that something else holds: the path given, and the line's expected ending."""
    (tmp_path / "loop-a").symlink_to("loop-b")
    (tmp_path / "loop-b").symlink_to("loop-a")
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    (tmp_path / "gone-dir").symlink_to(tmp_path / "nowhere")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "file").write_text("x")
    held = "Not a directory, but"
    return {
        "dangling link": (tmp_path / "dangling", f"dangling: {held} a symbolic link to {tmp_path / 'gone'}"),
        "link loop": (tmp_path / "loop-a", f"loop-a: {held} a symbolic link loop"),
        "FIFO": (tmp_path / "fifo", f"fifo: {held} a FIFO (named pipe)"),
        "regular file": (tmp_path / "file", f"file: {held} a regular file"),
        "under a dangling link": (tmp_path / "gone-dir" / "out", f"gone-dir: {held} a symbolic link to"),
    }


def test_an_output_folder_something_else_holds_is_named_for_what_it_is(
    tmp_path: Path, healthy_prometheus: str
) -> None:
    """`generate --out` / `report --out` a dangling symbolic link, a link loop or a FIFO: `cannot
    write to dangling: File exists` (mkdir's word for all of them; `report`), or for generate the
    error of a file below it. Now the line names the path in the way and what it is."""
    for out, ending in _in_the_way(tmp_path).values():
        code, _, err = child(["generate", "--spec", str(ROOT / "slos.yaml"), "--out", str(out)], tmp_path)
        assert_clean_error(code, err, c.EXIT_USAGE, ending)
        assert "File exists" not in err
    report = ["report", "--prometheus-url", healthy_prometheus, "--start", "1000", "--end", "1060"]
    code, _, err = child([*report, "--step", "10", "--out", str(tmp_path / "dangling")], tmp_path)
    assert_clean_error(code, err, c.EXIT_USAGE, "a symbolic link to", "which does not exist")


# -- folders that cannot be read --------------------------------------------------------------------
def without_root_bypass(args: list[str], cwd: Path) -> tuple[int, str, str]:
    """The CLI as a user permission bits apply to: as root (CI), without the capabilities that
    let root read anything (`setpriv --bounding-set`, util-linux, in every Debian), so `chmod 000`
    refuses it as it refuses any other user."""
    prefix: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        assert setpriv, "setpriv (util-linux) is needed to drop root's read-anything capabilities"
        prefix = [setpriv, "--bounding-set", "-dac_override,-dac_read_search"]
    return run_env(args, cwd, prefix=prefix)


def test_lint_reports_a_folder_it_cannot_list_as_permission_denied(tmp_path: Path) -> None:
    """A model folder Triton's user cannot list (chmod 000) was linted as an empty one: `no integer
    version folder (no version folder)`, with the fix `put the model file in <model>/1/`; an
    unlistable version folder gave `no problem found`. Both are `permission-denied` now, and
    nothing is reported missing from a folder that could not be listed."""
    repo = tmp_path / "repo"
    (repo / "m" / "1").mkdir(parents=True)
    (repo / "m" / "config.pbtxt").write_text('name: "m"\nbackend: "onnxruntime"\n')
    (repo / "m" / "1" / "model.onnx").write_bytes(b"x")
    for locked, evidence in ((repo / "m" / "1", "folder 1/ cannot be listed"), (repo / "m", "folder cannot")):
        locked.chmod(0)
        try:
            code, out, err = without_root_bypass(["lint", "--format", "json", str(repo)], tmp_path)
        finally:
            locked.chmod(0o755)
        assert code == c.EXIT_FAILURE, err
        findings = json.loads(out)["findings"]
        assert [f["runbook"] for f in findings] == [c.RUNBOOK_PERMISSION_DENIED], findings
        assert evidence in findings[0]["evidence"][0]["text"] and "Permission denied" in out


def test_a_runbook_folder_that_cannot_be_listed_says_so(tmp_path: Path) -> None:
    """`triage --runbooks DIR` on a folder its user cannot list said `DIR: no runbook page (*.md
    with front matter) in this folder`: glob() lists nothing in such a folder, so the pages seemed
    absent. Now `runbook folder cannot be listed: Permission denied`."""
    pages = tmp_path / "runbooks"
    shutil.copytree(ROOT / "runbooks", pages)
    log = failed_load_log(tmp_path)
    pages.chmod(0)
    try:
        code, _, err = without_root_bypass(["triage", "--runbooks", str(pages), str(log)], tmp_path)
    finally:
        pages.chmod(0o755)
    assert_clean_error(code, err, c.EXIT_USAGE, f"{pages}: runbook folder cannot be listed: Permission")


# -- file names: a newline in one, 100 kB ones ------------------------------------------------------
def _named_paths(tmp_path: Path, name: str, prometheus: str) -> dict[str, list[str]]:
    """A command line per file flag, each given the file or folder `name` under tmp_path; an output
    folder of that name is a regular file in the way (when the OS takes the name at all)."""
    named = tmp_path / name
    if len(name) < 255:
        named.write_text("x")
    report = ["report", "--prometheus-url", prometheus, "--start", "1000", "--end", "1060", "--step", "10"]
    return {
        "triage": ["triage", str(tmp_path / "missing" / name)],
        "generate --spec": ["generate", "--spec", str(tmp_path / "missing" / name)],
        "generate --out": ["generate", "--spec", str(ROOT / "slos.yaml"), "--out", str(named)],
        "export --config": ["export", "--config", str(tmp_path / "missing" / name)],
        "lint": ["lint", str(tmp_path / "missing" / name)],
        "report --out": [*report, "--out", str(named)],
        "bot --outbox": ["bot", "--channel", "c", "--outbox", str(named / "o.db")],
    }


def test_a_file_name_with_a_newline_stays_on_one_escaped_line(
    tmp_path: Path, healthy_prometheus: str
) -> None:
    """A file name holding a newline (`$'no\\nsuch.log'`) was printed as it is: the error became two
    lines, the second looking like a message of its own. Names are shown with `\\n` escaped."""
    for flag, args in _named_paths(tmp_path, "no\nsuch", healthy_prometheus).items():
        code, _, err = child(args, tmp_path, env={c.ENV_BOT_TOKEN: "probe", c.ENV_SLACK_BOT_TOKEN: "xoxb"})
        assert code == c.EXIT_USAGE, (flag, err)
        assert err.count("\n") == 1 and "no\\nsuch" in err and "Traceback" not in err, (flag, err)


def test_a_name_too_long_for_the_os_is_not_printed_whole(tmp_path: Path, healthy_prometheus: str) -> None:
    """A 100,000-character path (refused by the OS: ENAMETOOLONG) made a 100 kB message, printed
    whole (lint: `[Errno 36] File name too long: '…'`). Now the name is shown by its start and end."""
    for flag, args in _named_paths(tmp_path, "a" * 100_000, healthy_prometheus).items():
        code, _, err = child(args, tmp_path, env={c.ENV_BOT_TOKEN: "probe", c.ENV_SLACK_BOT_TOKEN: "xoxb"})
        assert code == c.EXIT_USAGE, (flag, err[:500])
        assert err.count("\n") == 1 and len(err) < 800 and "characters)" in err, (flag, err[:500])


def test_a_rollout_step_too_fine_for_its_window_is_refused_before_reading(tmp_path: Path) -> None:
    """A 30-day window at 1 s is 2.6 million points per figure: its joined answers would hold ~140 B a
    point until read, so the step is refused (naming the finest one allowed) before Prometheus is asked."""
    from test_fault_probes import assert_clean_error, run

    from triton_sre.stack.processes import free_port

    absent = f"http://127.0.0.1:{free_port()}"
    args = ["rollout", "check", "--prometheus", absent, "--model", "m", "--baseline-version", "1"]
    code, _, err = run([*args, "--candidate-version", "2", "--window", "30d", "--step", "1s"], tmp_path)
    assert_clean_error(code, err, c.EXIT_USAGE, "--step 1s", "1,000,000 points", "2593ms")
    code, _, err = run([*args, "--candidate-version", "2", "--window", "30d", "--step", "2593ms"], tmp_path)
    assert "points per figure" not in err and "cannot reach Prometheus" in err
