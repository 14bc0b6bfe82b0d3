"""Fault probes of `gameday --scenario-file`: a user's scenario file that cannot be used is one line on
stderr naming the file, exit 2, before any stack starts; never a silent exit 0 or an internal error."""

from __future__ import annotations

import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote

import pytest

from triton_sre import conventions as c
from triton_sre.gameday import runner
from triton_sre.gameday.context import Context
from triton_sre.gameday.observer import Timeline
from triton_sre.gameday.scenarios import Expect, Scenario

HOOKS = "def inject(ctx):\n    pass\n\n\ndef restore(ctx):\n    pass\n\n\n"
RUNBOOK = sorted(c.RUNBOOK_IDS)[0]  # a scenario's expected runbook must be one (probes11)
EXPECT = f'expect = {{"alert": "A", "runbook": "{RUNBOOK}"}}\n'


def _gameday(tmp_path: Path, *files: str) -> subprocess.CompletedProcess[str]:
    """`triton-sre gameday --list --scenario-file F...` in its own process (a file may end the
    interpreter); `--list` starts no stack, so a file wrongly accepted is listed, not run."""
    argv = [sys.executable, "-m", "triton_sre.cli", "gameday", "--list"]
    for i, text in enumerate(files):
        path = tmp_path / f"scenario_{i}.py"
        path.write_text(text, encoding="utf-8")
        argv += ["--scenario-file", str(path)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=tmp_path)


def _refused(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode == c.EXIT_USAGE, (done.returncode, done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "scenario_0.py" in lines[0], done.stderr
    assert "internal error" not in lines[0] and "Traceback" not in done.stderr
    assert all(word in lines[0] for word in words), lines[0]
    assert done.stdout == ""


@pytest.mark.parametrize("exit_call", ["raise SystemExit(0)", "import sys\nsys.exit()", "exit(0)"])
def test_a_scenario_file_that_exits_at_import_is_refused(tmp_path: Path, exit_call: str) -> None:
    """`raise SystemExit(0)` in a scenario file ended gameday at once: exit 0, nothing printed (read
    as "every scenario passed")."""
    _refused(_gameday(tmp_path, f"{exit_call}\n{HOOKS}{EXPECT}"), "SystemExit")


def test_a_scenario_that_exits_in_inject_is_its_own_error_and_restored() -> None:
    """The same in `inject()` skipped the runner's error handling: no scorecard, the gameday's exit code
    whatever the scenario passed to sys.exit."""
    restored: list[bool] = []

    def inject(ctx: object) -> None:
        sys.exit(0)

    scenario = Scenario(
        "exits", "calls sys.exit", inject, lambda ctx: restored.append(True), Expect("A", "r")
    )
    result = runner.run(scenario, None, Timeline(), lambda text: None)  # type: ignore[arg-type]
    assert result.error is not None and "SystemExit" in result.error
    assert restored == [True] and not result.passed


@pytest.mark.parametrize(
    ("expect", "words"),
    [
        ('{"alert": "A", "runbook": "r", "detect_timeout": "soon"}', ["expect.detect_timeout"]),
        ('{"alert": "A", "runbook": "r", "detect_timeout": float("inf")}', ["expect.detect_timeout"]),
        ('{"alert": "A", "runbook": "r", "detect_timeout": float("nan")}', ["expect.detect_timeout"]),
        ('{"alert": "A", "runbook": "r", "restore_timeout": -1}', ["expect.restore_timeout"]),
        ('{"alert": "A", "runbook": "r", "restore_timeout": 0}', ["expect.restore_timeout"]),
        ('{"alert": "A", "runbook": "r", "labels": 5}', ["expect.labels"]),
        ('{"alert": "A", "runbook": "r", "labels": {"model": ["x"]}}', ["expect.labels"]),
        ('{"alert": "A", "runbook": "r", "ready": 5}', ["expect.ready"]),
        ('{"alert": "A", "runbook": "r", "ready": "gd_echo"}', ["expect.ready"]),
        ('{"alert": "", "runbook": "r"}', ["expect.alert"]),
        ('{"alert": "A", "runbook": None}', ["expect.runbook"]),
        ("lambda: 1 / 0", ["expect", "ZeroDivisionError"]),
        ('Expect("A", "r", detect_timeout=-5)', ["expect.detect_timeout"]),
    ],
    ids=[
        "timeout-text",
        "timeout-inf",
        "timeout-nan",
        "negative",
        "zero",
        "labels-int",
        "label-list",
        "ready-int",
        "ready-str",
        "no-alert",
        "no-runbook",
        "expect-raises",
        "expect-object",
    ],
)
def test_an_expect_that_cannot_be_scored_is_refused_naming_the_key(
    tmp_path: Path, expect: str, words: list[str]
) -> None:
    """Each was `internal error: ValueError/TypeError` (exit 2, read as a bug), or accepted: an infinite
    timeout waited forever, `ready: "gd_echo"` waited for models g, d, _, e, c, h and o."""
    head = "from triton_sre.gameday.scenarios import Expect\n\n"
    _refused(_gameday(tmp_path, f"{head}{HOOKS}expect = {expect}\n"), *words)


@pytest.mark.parametrize(
    ("names", "words"),
    [
        (["triton-killed"], ["triton-killed", "built-in"]),
        (["mine", "mine"], ["mine", "scenario_1.py"]),
        ([""], ["NAME"]),
        (["a\x1b[2Jb"], ["NAME"]),
    ],
    ids=["builtin", "twice", "empty", "control"],
)
def test_a_scenario_name_that_is_not_one_scenarios_is_refused(
    tmp_path: Path, names: list[str], words: list[str]
) -> None:
    """A file's NAME equal to a built-in's silently replaced it (`--scenario triton-killed` ran the
    file), two files of one NAME ran only the last, and an empty NAME was a scenario nobody can select."""
    files = [f"NAME = {name!r}\n{HOOKS}{EXPECT}" for name in names]
    _refused(_gameday(tmp_path, *files), *words)


@pytest.mark.parametrize("kind", ["device", "directory", "missing"])
def test_a_scenario_file_that_is_not_a_file_says_what_it_is(tmp_path: Path, kind: str) -> None:
    """`--scenario-file /dev/null` (or a directory) said `scenario file /dev/null does not exist`."""
    path = {"device": Path("/dev/null"), "directory": tmp_path, "missing": tmp_path / "nope.py"}[kind]
    argv = [sys.executable, "-m", "triton_sre.cli", "gameday", "--list", "--scenario-file", str(path)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == c.EXIT_USAGE and done.stdout == "", done
    said = "does not exist" if kind == "missing" else "not a regular file"
    assert said in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_model_control_names_one_model_whatever_its_name(tmp_path: Path) -> None:
    """`ctx.load(name)` put the name into the path as it came: `a/b`, `x?y` or `../index` posted to
    another path of Triton's API than that model's load."""
    seen: list[str] = []

    class Triton(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            seen.append(self.path)
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    class Stack:
        def url(self, name: str) -> str:
            return f"http://127.0.0.1:{httpd.server_address[1]}"

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Triton)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        ctx = Context(Stack(), tmp_path, lambda text: None)  # type: ignore[arg-type]
        for name in ("a/b", "x?y", "../index"):
            ctx.load(name)
            ctx.unload(name)
    finally:
        httpd.shutdown()
        httpd.server_close()
    prefix = "/v2/repository/models/"
    assert seen == [
        f"{prefix}{quote(n, safe='')}/{a}" for n in ("a/b", "x?y", "../index") for a in ("load", "unload")
    ]
