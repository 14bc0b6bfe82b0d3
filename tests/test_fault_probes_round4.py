"""Fault probes, round four (branch `probes`, 2026-12-04): what a sweep of every command and flag
with hostile input found (docs/failure-behaviour.md, "Fault probes, round four")."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_bot_delivery import SLACK_TOKEN, TOKEN, notification, ok_posts, send
from test_fault_probes import Silent, _cli, _serve, assert_clean_error, run

from triton_sre import conventions as c
from triton_sre.bot.command import Bot
from triton_sre.bot.config import BotSettings
from triton_sre.bot.dev_slack_standin import SlackStandin
from triton_sre.checks import ConfigError
from triton_sre.config import load_config
from triton_sre.durations import MAX_SECONDS_ARG, seconds_arg
from triton_sre.stack.components import STATE_FILE, Component, stop_component

HUGE_SECONDS = [
    "doctor --triton-url {u} --timeout 1e10",
    "rollout check --model m --baseline-version 1 --candidate-version 2 --prometheus {u} --timeout 1e10",
    "rollout check --model m --baseline-version 1 --candidate-version 2 --prometheus {u} --deadline 1e10",
    "report --out out --prometheus-url {u} --step 1e20",
]


@pytest.fixture
def mute() -> Iterator[Silent]:
    """A server that accepts connections and never answers."""
    server = Silent()
    yield server
    server.close()


@pytest.mark.parametrize("line", HUGE_SECONDS)
def test_an_absurd_number_of_seconds_is_refused_at_parsing(
    tmp_path: Path,
    mute: Silent,
    line: str,
) -> None:
    """`--timeout 1e10` went to socket.settimeout: `internal error: OverflowError: timestamp out of
    range for platform time_t` once a server accepted the connection."""
    code, _, err = run(line.format(u=mute.url).split(), tmp_path)
    assert_clean_error(code, err, c.EXIT_USAGE, "at most")
    assert "internal error" not in err and not mute.accepted.is_set()
    assert not (tmp_path / "out").exists()


def test_seconds_arg_takes_up_to_its_bound_and_no_more() -> None:
    assert seconds_arg(str(MAX_SECONDS_ARG)) == MAX_SECONDS_ARG
    assert seconds_arg("0.5") == 0.5
    for text in (str(MAX_SECONDS_ARG + 1), "1e10", "9" * 400):
        with pytest.raises(argparse.ArgumentTypeError, match="at most"):
            seconds_arg(text)


# -- the stack's state file -----------------------------------------------------------------------
def _component(**fields: object) -> dict[str, object]:
    return {"name": "exporter", "pid": 4242, "start_time": 1, "url": "u", "log": "l", "argv": [], **fields}


BAD_STATES = {
    "not JSON": (b"{not json", "not a stack state file"),
    "not UTF-8": (b"\xff\xfe{}", "not a stack state file"),
    "a list": (b"[]", "a JSON list, not an object"),
    "components not a list": (b'{"components": 5}', "components: expected a list, got 5"),
    "a component not an object": (b'{"components": [1]}', "components[0]: expected an object, got 1"),
    "an unknown field": (json.dumps({"components": [_component(x=1)]}).encode(), "unknown field 'x'"),
    "pid a string": (json.dumps({"components": [_component(pid="x")]}).encode(), "pid: expected"),
    # killpg(0) is the caller's own process group: `stack down` ended itself with SIGTERM (exit 143)
    "pid 0": (json.dumps({"components": [_component(pid=0)]}).encode(), "pid: expected a process id above 1"),
    "pid -1": (json.dumps({"components": [_component(pid=-1)]}).encode(), "pid: expected"),
    "pid 1": (json.dumps({"components": [_component(pid=1)]}).encode(), "pid: expected"),
}


@pytest.mark.parametrize("command", ["status", "down"])
@pytest.mark.parametrize("kind", list(BAD_STATES))
def test_a_state_file_that_is_not_what_stack_up_writes_is_exit_2_and_nothing_is_signalled(
    tmp_path: Path, command: str, kind: str
) -> None:
    """Each was `internal error: JSONDecodeError / AttributeError / TypeError`; with pid 0, `stack down`
    sent SIGTERM to its own process group."""
    body, says = BAD_STATES[kind]
    (tmp_path / STATE_FILE).write_bytes(body)
    proc = _cli(["stack", command, "--workdir", str(tmp_path)], tmp_path, start_new_session=True)
    _, err = (data.decode("utf-8", "replace") for data in proc.communicate(timeout=60))
    assert proc.returncode != -signal.SIGTERM, "stack down signalled its own process group"
    assert_clean_error(proc.returncode, err, c.EXIT_USAGE, str(tmp_path / STATE_FILE), says)
    assert "internal error" not in err and "stopping" not in err
    assert (tmp_path / STATE_FILE).read_bytes() == body  # kept: the processes it names are not stopped


def test_no_process_group_below_2_is_ever_signalled(monkeypatch: pytest.MonkeyPatch) -> None:
    """stop_component's own guard, whatever built the component (a server pid in `extra`)."""
    signalled: list[int] = []
    monkeypatch.setattr(os, "killpg", lambda pgid, sig: signalled.append(pgid))
    for pid in (0, 1, -1):
        stop_component(Component("triton", pid, 0, "u", "l", []), timeout=0.1)
    assert signalled == []


# -- the bot's --log-file -------------------------------------------------------------------------
def test_a_log_file_that_is_a_fifo_never_holds_the_bots_deliveries(tmp_path: Path) -> None:
    """A TritonModelUnavailable alert with no Triton URL is diagnosed from `log_file`: a FIFO there
    (no writer) blocked the one delivery thread in open() for ever, every later notification
    pending while /healthz said 200. Now the alert's message says what the file is."""
    fifo = tmp_path / "triton.log"
    os.mkfifo(fifo)
    with SlackStandin(token=SLACK_TOKEN) as standin:
        settings = BotSettings(channel="#c", listen="127.0.0.1:0", log_file=str(fifo))
        with Bot(settings, tmp_path / "o.sqlite3", TOKEN, SLACK_TOKEN, standin.url) as bot:
            unavailable, other = uuid.uuid4().hex[:8], uuid.uuid4().hex[:8]
            send(bot, notification(unavailable, alertname=c.ALERT_MODEL_UNAVAILABLE, model="m"))
            send(bot, notification(other))
            assert standin.wait_for(lambda: bool(ok_posts(standin, other)), 15), "deliveries are held"
            assert standin.wait_for(lambda: bool(ok_posts(standin, unavailable)), 5)
            assert "a FIFO (named pipe), not a regular file" in json.dumps(
                ok_posts(standin, unavailable)[0].params
            )


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_a_log_file_that_is_not_a_regular_file_is_refused_at_start(tmp_path: Path, kind: str) -> None:
    path = tmp_path / kind
    os.mkfifo(path) if kind == "fifo" else path.mkdir()
    line = f"bot --channel #c --listen 127.0.0.1:0 --outbox {tmp_path / 'o.sqlite3'} --log-file {path}"
    code, _, err = run(line.split(), tmp_path)
    assert_clean_error(code, err, c.EXIT_USAGE, str(path), "not a regular file")


def test_the_missing_webhook_token_message_survives_the_redaction(tmp_path: Path) -> None:
    """It printed `no webhook token: <redacted> $TRITON_SRE_BOT_TOKEN or --token-file`: the stderr
    redaction took `token: set` for a secret, and the fix lost its verb."""
    argv = [sys.executable, "-m", "triton_sre.cli", "bot", "--channel", "#c", "--listen", "127.0.0.1:0"]
    done = subprocess.run(
        argv, capture_output=True, text=True, env=_without_bot_token(), cwd=tmp_path, timeout=60
    )
    err = done.stderr
    assert_clean_error(done.returncode, err, c.EXIT_USAGE, f"set ${c.ENV_BOT_TOKEN} or --token-file")
    assert "<redacted>" not in err


def _without_bot_token() -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    for name in (c.ENV_BOT_TOKEN, c.ENV_CONFIG):
        env.pop(name, None)
    return env


# -- doctor's text on what Triton says ------------------------------------------------------------
@pytest.fixture(scope="module")
def escaping_triton() -> Iterator[str]:
    """A Triton whose version and a model name carry terminal control sequences."""
    answers = {
        "/v2": json.dumps({"name": "t", "version": "2.51\x1b[2J", "extensions": []}).encode(),
        "/v2/repository/index": b"[]",
        "/v2/models/stats": b'{"model_stats": []}',
        "/metrics": b'nv_inference_count{model="m\x1b[2J",version="1"} 5\n',
    }
    yield from _serve(lambda path: (answers.get(path, b"{}"), "application/json"))


def test_doctor_text_shows_what_triton_says_escaped(tmp_path: Path, escaping_triton: str) -> None:
    """`Triton 2.51<ESC>[2J` went to the terminal as it came: the screen was cleared."""
    line = f"doctor --triton-url {escaping_triton} --metrics-url {escaping_triton}/metrics"
    code, out, err = run(line.split(), tmp_path)
    assert code in (c.EXIT_OK, c.EXIT_FAILURE), err
    assert "Triton 2.51\\x1b[2J" in out
    assert not any(ch in out for ch in "\x1b\r"), out[:300]


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_lint_shows_control_characters_in_names_escaped(tmp_path: Path, fmt: str) -> None:
    """A model folder named `m<ESC>[2Jx` (a repository from elsewhere) cleared the terminal: its name
    went into every finding as it was."""
    model = tmp_path / "repo" / "m\x1b[2Jx"
    (model / "1").mkdir(parents=True)
    (model / "config.pbtxt").write_text('name: "other\x1b]0;title\x07"\nbackend: "python"\n')
    code, out, err = run(["lint", str(tmp_path / "repo"), "--format", fmt], tmp_path)
    assert code == c.EXIT_FAILURE, err
    assert "m\\x1b[2Jx" in out
    assert not any(ch in out + err for ch in "\x1b\x07\r"), out[:300]


@pytest.mark.parametrize("timeout", ["9999999999", "86401"])
def test_an_exporter_timeout_past_a_day_is_refused_by_the_config(tmp_path: Path, timeout: str) -> None:
    """`exporter: {timeout: 9999999999}` was accepted: every poll then failed inside socket.settimeout
    (`OverflowError: timestamp out of range for platform time_t`, counted as the exporter's own bug)."""
    path = tmp_path / "exporter.yaml"
    path.write_text(f"exporter:\n  timeout: {timeout}\n")
    with pytest.raises(ConfigError, match=r"exporter\.timeout: must be greater than 0 and at most 86400"):
        load_config(path)
    path.write_text("exporter:\n  timeout: 86400\n")
    assert load_config(path).timeout == 86400
