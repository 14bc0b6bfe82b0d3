"""A password in a URL never reaches a user, on any output path (issue #28, item 1).

Each test gives a URL with credentials to one command or service and reads everything it says:
stderr of the CLI commands, the bot's Slack messages and slash-command answers, the exporter's
/debug page. Unreachable servers are closed ports on loopback.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
import requests

from triton_sre import conventions as c
from triton_sre.bot.command import Bot
from triton_sre.bot.config import BotSettings
from triton_sre.bot.dev_slack_standin import SlackStandin
from triton_sre.bot.receiver import slack_signature

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "pw-" + uuid.uuid4().hex
WEBHOOK_TOKEN = "am-" + uuid.uuid4().hex
SLACK_TOKEN = "xoxb-" + uuid.uuid4().hex
SIGNING_SECRET = "sig-" + uuid.uuid4().hex


def closed_url(scheme: str = "http") -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"{scheme}://admin:{PASSWORD}@127.0.0.1:{port}"


def cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "triton_sre.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        timeout=timeout,
        check=False,
    )


def assert_clean(done: subprocess.CompletedProcess[str]) -> None:
    said = done.stdout + done.stderr
    assert PASSWORD not in said, said
    assert "<redacted>@127.0.0.1" in said, said  # the message still says which server
    assert "Traceback" not in said


def test_triage_live_unreachable() -> None:
    done = cli("triage", "--triton-url", closed_url())
    assert done.returncode == c.EXIT_USAGE
    assert_clean(done)


def test_report_prometheus_down(tmp_path: Path) -> None:
    pytest.importorskip("pandas")
    done = cli("report", "--prometheus-url", closed_url(), "--out", str(tmp_path))
    assert done.returncode == c.EXIT_USAGE
    assert_clean(done)


def test_export_bad_scheme_in_flags_and_config_file(tmp_path: Path) -> None:
    url = closed_url("ftp")
    assert_clean(cli("export", "--triton-url", url, timeout=30))
    config = tmp_path / "exporter.yaml"
    config.write_text(f"exporter:\n  triton_url: {url}\n")
    done = cli("export", "--config", str(config), timeout=30)
    assert done.returncode == c.EXIT_USAGE
    assert_clean(done)


@pytest.fixture(scope="module")
def standin() -> Iterator[SlackStandin]:
    with SlackStandin(token=SLACK_TOKEN) as server:
        yield server


@pytest.fixture(scope="module")
def bot(tmp_path_factory: pytest.TempPathFactory, standin: SlackStandin) -> Iterator[Bot]:
    settings = BotSettings(channel="#t", listen="127.0.0.1:0", triton_url=closed_url())
    path = tmp_path_factory.mktemp("bot-redact") / "outbox.sqlite3"
    with Bot(settings, path, WEBHOOK_TOKEN, SLACK_TOKEN, standin.url, SIGNING_SECRET) as running:
        yield running


def slash(bot: Bot, text: str) -> str:
    body = urlencode({"command": c.SLASH_COMMAND, "text": text, "user_id": "U1", "channel_id": "C1"}).encode()
    ts = str(int(time.time()))
    headers = {
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": slack_signature(SIGNING_SECRET, ts, body),
        "Content-Type": "application/x-www-form-urlencoded",
    }
    answer = requests.post(f"{bot.url}{c.PATH_BOT_SLACK_COMMANDS}", data=body, headers=headers, timeout=10)
    assert answer.status_code == 200
    return str(answer.json()["text"])


def notify(bot: Bot, standin: SlackStandin, group: dict[str, Any]) -> None:
    """Post `group` as Alertmanager would and wait until the bot's message reached the stand-in."""
    answer = requests.post(
        f"{bot.url}{c.PATH_BOT_ALERTMANAGER}",
        data=json.dumps(group),
        headers={"Authorization": f"Bearer {WEBHOOK_TOKEN}"},
        timeout=5,
    )
    assert answer.status_code == 200
    assert standin.wait_for(lambda: bool(standin.calls("chat.postMessage", ok_only=True)), timeout=30)


def test_slash_command_answers(bot: Bot) -> None:
    diagnosed = slash(bot, "diagnose some_model")
    assert "Cannot read" in diagnosed or "cannot read" in diagnosed
    echoed = slash(bot, f"what-is http://root:{PASSWORD}@db.example.com/x")
    for answer in (diagnosed, echoed):
        assert PASSWORD not in answer and "<redacted>@" in answer, answer


def test_slack_message_of_an_unavailable_model(bot: Bot, standin: SlackStandin) -> None:
    labels = {"alertname": c.ALERT_MODEL_UNAVAILABLE, "model": "m", "severity": "page"}
    group = {
        "version": "4",
        "groupKey": '{}:{alertname="ModelUnavailable"}',
        "status": "firing",
        "receiver": "bot",
        "groupLabels": labels,
        "commonLabels": labels,
        "commonAnnotations": {},
        "externalURL": "http://alertmanager.example.com:9093",
        "alerts": [
            {
                "status": "firing",
                "labels": labels,
                "annotations": {"summary": "m is unavailable"},
                "startsAt": "2026-11-29T17:00:00Z",
                "endsAt": "0001-01-01T00:00:00Z",
                "generatorURL": "",
                "fingerprint": "redact0001",
            }
        ],
    }
    notify(bot, standin, group)
    posted = json.dumps([call.params for call in standin.calls()])
    assert "unavailable" in posted.lower()
    assert PASSWORD not in posted and "redacted&gt;@127.0.0.1" in posted, posted  # Slack-escaped
