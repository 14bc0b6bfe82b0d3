"""`--format json` is JSON on error paths too: every command that offers it, failing before it wrote
its answer, prints one object `{"error": <the stderr message>, "exit_code": <the exit code>}` on
stdout (triton_sre/jsonerror.py). The commands run in a child process, as a script would run them."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from triton_sre import conventions as c
from triton_sre.cli import main
from triton_sre.jsonerror import json_requested
from triton_sre.redact import RedactingStream
from triton_sre.stack.processes import free_port

ROOT = Path(__file__).resolve().parents[1]


def _run(args: list[str], cwd: Path, stdout: int = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop(c.ENV_CONFIG, None)
    return subprocess.run(
        [sys.executable, "-m", "triton_sre.cli", *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
    )


def _error_object(done: subprocess.CompletedProcess[str]) -> dict[str, object]:
    message = [line.strip() for line in done.stderr.splitlines() if line.strip()][-1]
    answer = json.loads(done.stdout)
    assert answer == {"error": message, "exit_code": done.returncode}, done.stdout
    assert message.startswith("triton-sre"), done.stderr
    return answer


@pytest.fixture(scope="module")
def refused() -> str:
    return f"http://127.0.0.1:{free_port()}"


ROLLOUT = ["rollout", "check", "--format", "json"]
VERSIONS = ["--baseline-version", "1", "--candidate-version", "2"]
ERRORS = [
    # (arguments, {refused} for a port nobody listens on, the words the message must hold)
    (["triage", "--format", "json", "missing.log"], "No such file or directory"),
    (["triage", "--format", "json", "--triton-url", "{refused}"], "Connection refused"),
    (["lint", "--format=json", "missing-models"], "not a directory"),
    (["doctor", "--format", "json", "--triton-url", "{refused}"], "Connection refused"),
    (
        [*ROLLOUT, "--prometheus", "{refused}", "--model", "m", *VERSIONS],
        "Connection refused",
    ),
    ([*ROLLOUT, "--prometheus", "{refused}", "--model", "m"], "one pair"),
    (["gameday", "--format", "json", "--attach", "no-such-stack"], "no such directory"),
    (["stack", "up", "--format", "json", "--workdir", "a-file"], "Not a directory"),
    (["demo", "--format", "json", "--duration", "soon"], "--duration"),
    (["triage", "--format", "json", "--no-such-flag"], "unrecognized arguments"),
]


IDS = [f"{args[0]}-{i}" for i, (args, _) in enumerate(ERRORS)]


@pytest.mark.parametrize(("args", "words"), ERRORS, ids=IDS)
def test_a_json_command_that_fails_prints_a_json_error(
    tmp_path: Path, refused: str, args: list[str], words: str
) -> None:
    (tmp_path / "a-file").write_text("not a folder\n")
    done = _run([a.format(refused=refused) for a in args], tmp_path)
    assert done.returncode == c.EXIT_USAGE, done.stderr
    assert "Traceback" not in done.stderr
    answer = _error_object(done)
    assert words in str(answer["error"])


def test_the_json_error_is_redacted_like_stderr(tmp_path: Path) -> None:
    url = f"http://user:hunter2@127.0.0.1:{free_port()}"
    done = _run(["triage", "--format", "json", "--triton-url", url], tmp_path)
    answer = _error_object(done)
    assert "hunter2" not in done.stdout and "hunter2" not in done.stderr
    assert "127.0.0.1" in str(answer["error"])


def test_text_output_and_successful_json_are_unchanged(tmp_path: Path) -> None:
    text = _run(["triage", "missing.log"], tmp_path)
    assert text.returncode == c.EXIT_USAGE and text.stdout == ""
    log = tmp_path / "healthy.log"
    log.write_text("I1205 10:00:00.000000 1 server.cc:674] model ready\n")
    ok = _run(["triage", "--format", "json", str(log)], tmp_path)
    assert ok.returncode == c.EXIT_OK, ok.stderr
    assert "error" not in json.loads(ok.stdout)


def test_no_json_error_where_stdout_cannot_take_it(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a folder\n")
    args = ["stack", "up", "--format", "json", "--workdir", "a-file"]
    with open("/dev/full", "w") as full:  # every write is ENOSPC
        done = _run(args, tmp_path, stdout=full.fileno())
    assert done.returncode == c.EXIT_USAGE
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_ctrl_c_before_the_answer_is_a_json_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from triton_sre.diagnosis import command

    def interrupted(*_: object, **__: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(command, "run_triage", interrupted)
    code = main(["triage", "--format", "json", str(tmp_path / "any.log")])
    out, err = capsys.readouterr()
    assert code == c.EXIT_INTERRUPTED
    assert json.loads(out) == {"error": err.strip().splitlines()[-1], "exit_code": c.EXIT_INTERRUPTED}


def test_json_requested_reads_the_format_flag_only() -> None:
    assert json_requested(["triage", "--format", "json", "x.log"])
    assert json_requested(["lint", "--format=json", "m"])
    assert not json_requested(["triage", "--format", "markdown", "json"])
    assert not json_requested(["triage", "--format"])
    assert not json_requested(["triage", "--", "--format", "json"])


@pytest.mark.parametrize(
    "secret", ["password=hunter2hunter2", "Authorization: Bearer hunter2hunter2", "http://u:hunter2@h:1/x"]
)
def test_a_long_error_line_cut_to_its_tail_keeps_no_credential(secret: str) -> None:
    """The object carries the last MAX_MESSAGE_CHARS of stderr: the cut may fall inside a credential
    (`ssword=...`, `er hunter2...`, `u:hunter2@...`) that stderr's redaction saw whole."""
    from triton_sre.jsonerror import MAX_MESSAGE_CHARS, JsonErrors

    for cut in range(1, len(secret) - 8):  # where the kept tail begins inside the credential
        out, err = io.StringIO(), io.StringIO()
        watch = JsonErrors(out, RedactingStream(err))
        tail = "z" * (MAX_MESSAGE_CHARS - (len(secret) - cut) - 1)
        watch.stderr.write(f"triton-sre triage: error: {'a' * 50} {secret}{tail}\n")
        watch.finish(c.EXIT_USAGE, c.EXIT_BROKEN_PIPE)
        assert "hunter2" not in err.getvalue()
        assert "hunter2" not in json.loads(out.getvalue())["error"], cut


@pytest.mark.parametrize(
    ("raised", "exit_code", "line"),
    [
        (KeyboardInterrupt(), c.EXIT_INTERRUPTED, "KeyboardInterrupt"),  # Ctrl-C while the CLI imports
        (RuntimeError("boom, token=hunter2"), c.EXIT_FAILURE, "RuntimeError: boom, token=<redacted>"),
        (SystemExit(None), None, None),  # sys.exit(): exit 0, no error
        (SystemExit("gave up"), c.EXIT_FAILURE, "gave up"),  # Python prints it and exits 1
    ],
)
def test_what_escapes_main_is_named_with_the_exit_python_gives(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    raised: BaseException,
    exit_code: int | None,
    line: str | None,
) -> None:
    """What escapes main (outside the commands' own handlers: while the parser is built) ends the
    process with Python's exit (1, 130 for Ctrl-C, 0 for sys.exit()): the object says that exit and
    the line Python prints last (it prints it after main returned: the object said exit 2, error "")."""
    from triton_sre import cli

    def crashes(*args: object) -> None:
        raise raised

    monkeypatch.setattr(cli, "build_parser", crashes)
    with pytest.raises(type(raised)):
        main(["triage", "--format", "json", "any.log"])
    out, _ = capsys.readouterr()
    if exit_code is None:
        assert out == ""
    else:
        assert json.loads(out) == {"error": line, "exit_code": exit_code}


def test_a_message_followed_by_a_log_tail_is_the_error_not_the_tails_last_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`stack up` (and `demo`) print a component's failure with its log's last lines under it: the
    object's error is that message (which component, which log), not the log's last line."""
    from triton_sre.stack import local

    log = tmp_path / "prometheus.log"

    def fails(*_: object, **__: object) -> None:
        tail = 'ts=2026-12-05T07:00:00Z level=error msg="Error loading config" err="yaml: line 3"'
        raise local.StackError(f"prometheus exited while starting (log {log}); last lines:\n{tail}\n")

    monkeypatch.setattr(local, "up", fails)
    code = main(["stack", "up", "--format", "json", "--workdir", str(tmp_path / "stack")])
    out, err = capsys.readouterr()
    assert code == c.EXIT_FAILURE and "Error loading config" in err
    answer = json.loads(out)
    assert answer["exit_code"] == c.EXIT_FAILURE
    assert (
        answer["error"] == f"triton-sre stack up: prometheus exited while starting (log {log}); last lines:"
    )


def test_json_requested_reads_the_flag_as_argparse_does() -> None:
    """Round eighteen: argparse takes `--fo json` and `--form=json` for `--format json` and the last
    of two `--format`; before, the error was no JSON for an abbreviation, JSON for `--format json
    --format text`."""
    assert json_requested(["triage", "--fo", "json", "x.log"])
    assert json_requested(["lint", "--form=json", "m"])
    assert json_requested(["triage", "--format", "text", "--format", "json"])
    assert not json_requested(["triage", "--format", "json", "--format", "text"])
    assert not json_requested(["triage", "--formats", "json"])
    assert not json_requested(["triage", "-", "json"])
