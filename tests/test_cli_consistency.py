"""Commands that take the same kind of option check it the same way (left open by the fault probes'
round four, docs/failure-behaviour.md): an empty listen address, options beside `gameday --list`,
an empty `report --out`, and what the bot logs when Slack cannot be reached."""

from __future__ import annotations

import json
import logging
import re
import signal
import socket
import time
import uuid
from pathlib import Path

import pytest
import requests
from test_bot_delivery import SLACK_TOKEN, TOKEN, notification, ok_posts, send
from test_fault_probes import _cli, assert_clean_error, run

from triton_sre import conventions as c
from triton_sre.bot.command import Bot, resolve_bot_settings
from triton_sre.bot.config import BotSettings
from triton_sre.bot.dev_slack_standin import SlackStandin
from triton_sre.checks import ConfigError
from triton_sre.cli import build_parser
from triton_sre.config import resolve_settings


# -- an empty listen address ----------------------------------------------------------------------
def test_an_empty_listen_address_is_refused_by_the_bot_as_by_the_exporter() -> None:
    """`bot --listen ''` listened on the default address (the empty flag was read as "not given")
    where `export --listen ''` is a usage error."""
    parser = build_parser()
    with pytest.raises(ConfigError) as exporter:
        resolve_settings(vars(parser.parse_args(["export", "--listen", ""])), environ={})
    with pytest.raises(ConfigError) as bot:
        resolve_bot_settings(parser.parse_args(["bot", "--channel", "#c", "--listen", ""]))
    assert str(bot.value) == str(exporter.value)
    assert str(bot.value).startswith("--listen: ")
    with pytest.raises(ConfigError, match=r"^--channel: "):  # every flag of the bot's settings alike
        resolve_bot_settings(parser.parse_args(["bot", "--channel", ""]))
    given = resolve_bot_settings(parser.parse_args(["bot", "--channel", "#c", "--listen", "127.0.0.1:0"]))
    assert (given.listen, given.channel) == ("127.0.0.1:0", "#c")


@pytest.mark.parametrize("command", ["export", "bot --channel #c"])
def test_an_empty_listen_address_is_exit_2_by_name(tmp_path: Path, command: str) -> None:
    code, _, err = run([*command.split(), "--listen", ""], tmp_path)
    assert_clean_error(code, err, c.EXIT_USAGE, "--listen: expected HOST:PORT")


# -- gameday --list -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "options",
    ["--scale 0", "--scale nan", "--scale 1e9", "--attach {tmp} --workdir {tmp}", "--attach {tmp}/missing"],
)
def test_gameday_list_checks_its_options_as_a_run_does(tmp_path: Path, options: str) -> None:
    """`gameday --list --scale 0` listed the scenarios, exit 0, where a run says what is wrong, exit 2."""
    argv = ["gameday", *options.format(tmp=tmp_path).split()]
    code, _, err = run(argv, tmp_path)
    assert_clean_error(code, err, c.EXIT_USAGE)
    listed, out, listed_err = run([*argv, "--list"], tmp_path)
    assert (listed, listed_err, out) == (code, err, "")


def test_gameday_list_with_valid_options_lists(tmp_path: Path) -> None:
    code, out, err = run(["gameday", "--list", "--scale", "1", "--format", "json"], tmp_path)
    assert code == c.EXIT_OK, err
    assert json.loads(out)["scenarios"]


# -- report --out ''  -----------------------------------------------------------------------------
@pytest.mark.parametrize("out", ["", " "])
def test_report_refuses_an_empty_out_before_asking_prometheus(tmp_path: Path, out: str) -> None:
    """`report --out ''` wrote report.md, report.html and the CSVs into the current directory."""
    with socket.socket() as sock:  # a port just free: a query there is refused at once
        sock.bind(("127.0.0.1", 0))
        prometheus = f"http://127.0.0.1:{sock.getsockname()[1]}"
    code, _, err = run(["report", "--prometheus-url", prometheus, "--out", out], tmp_path)
    assert_clean_error(code, err, c.EXIT_USAGE, "--out", "must name a folder")
    assert list(tmp_path.iterdir()) == []


# -- the bot when Slack cannot be reached ---------------------------------------------------------
def test_an_unreachable_slack_is_one_clear_line_per_attempt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Each attempt logged slack_sdk's ERROR and the worker's WARNING, both carrying urllib3's text
    (`_HTTPPool(host=..., port=...): Max retries exceeded with url: ... NewConnectionError(...)`)."""
    caplog.set_level(logging.INFO)

    def failures() -> list[logging.LogRecord]:
        return [r for r in caplog.records if "stays pending" in r.getMessage()]

    with SlackStandin(token=SLACK_TOKEN) as standin:
        standin.go_down()
        settings = BotSettings(
            channel="#c", listen="127.0.0.1:0", retry_base_seconds=0.1, retry_max_seconds=0.2
        )
        with Bot(settings, tmp_path / "o.sqlite3", TOKEN, SLACK_TOKEN, standin.url) as bot:
            case = uuid.uuid4().hex[:8]
            send(bot, notification(case))
            assert standin.wait_for(lambda: len(failures()) >= 2, 15), caplog.text[-2000:]
            assert bot.outbox.pending() == 1
            standin.come_up()
            assert standin.wait_for(lambda: bool(ok_posts(standin, case)), 15), (
                "not retried once Slack is back"
            )
    host = f"127.0.0.1:{standin.port}"
    for record in failures():
        message = record.getMessage()
        assert record.levelno == logging.WARNING and "\n" not in message
        assert f"chat_postMessage: no answer from the Slack API at {host}: Connection refused" in message
        assert "attempt" in message and "next in" in message
    about_slack = [
        r for r in caplog.records if host in r.getMessage() or "Slack API server" in r.getMessage()
    ]
    assert about_slack == failures()  # one line per attempt: not slack_sdk's own ERROR line too
    for bad in ("Max retries", "Pool(", "NewConnectionError", "urlopen error", SLACK_TOKEN, TOKEN):
        assert bad not in caplog.text


# -- the address a service says it listens on -----------------------------------------------------------
def test_the_exporter_names_the_port_it_listens_on(tmp_path: Path) -> None:
    """`export --listen 127.0.0.1:0` logged `on 127.0.0.1:0`: the port the OS chose was nowhere (the bot
    names its webhook's URL); now the line names the bound port, and /healthz answers there."""
    with socket.socket() as sock:  # nothing listens here: the exporter serves whether Triton answers or not
        sock.bind(("127.0.0.1", 0))
        triton = f"http://127.0.0.1:{sock.getsockname()[1]}"
    proc = _cli(["export", "--triton-url", triton, "--listen", "127.0.0.1:0", "--interval", "1"], tmp_path)
    try:
        seen, deadline = b"", time.monotonic() + 60
        while b" every " not in seen and time.monotonic() < deadline:
            seen += proc.stderr.readline()
        found = re.search(rb" on 127\.0\.0\.1:(\d+) every ", seen)
        assert found, seen
        port = int(found.group(1))
        assert port != 0
        assert requests.get(f"http://127.0.0.1:{port}{c.PATH_HEALTHZ}", timeout=5).status_code == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    assert proc.returncode == c.EXIT_OK
