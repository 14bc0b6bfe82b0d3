"""`/triton status` against the REAL Alertmanager's silences: a silence added with amtool is shown
on the group's line (who, until when, the comment; a secret in the comment redacted), and an
Alertmanager that is down, slow or answers garbage still gets an answer that says silences could
not be read, counted on the bot's metric. The Alertmanager is placed behind a fault proxy."""

from __future__ import annotations

import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from typing import Any
from urllib.parse import urlencode

import pytest
import requests
from binaries import binary
from faultproxy import GARBAGE, HANG, STATUS_500, FaultProxy
from test_bot_alertmanager import (
    SIGNING_SECRET,
    SLACK_TOKEN,
    WEBHOOK_TOKEN,
    Alertmanager,
    new_case,
    posts,
    unavailable_alert,
    wait_until,
)

from triton_sre import conventions as c
from triton_sre.bot.command import Bot
from triton_sre.bot.config import BotSettings
from triton_sre.bot.dev_slack_standin import SlackStandin
from triton_sre.bot.receiver import slack_signature
from triton_sre.stack.processes import free_ports

SECRET_IN_COMMENT = "xoxb-" + uuid.uuid4().hex


@pytest.fixture(scope="module")
def silence_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    workdir = tmp_path_factory.mktemp("bot-silences")
    (bot_port,) = free_ports(1)
    with SlackStandin(token=SLACK_TOKEN) as standin:
        am = Alertmanager(workdir / "am", f"http://127.0.0.1:{bot_port}", "http://127.0.0.1:9")
        proxy = FaultProxy(am.url).__enter__()
        settings = BotSettings(
            channel="#triton-alerts",
            listen=f"127.0.0.1:{bot_port}",
            alertmanager_url=proxy.url,
            retry_base_seconds=0.2,
            retry_max_seconds=1.0,
        )
        bot = Bot(
            settings, workdir / "outbox.sqlite3", WEBHOOK_TOKEN, SLACK_TOKEN, standin.url, SIGNING_SECRET
        )
        bot.start()
        try:
            yield {"bot": bot, "am": am, "proxy": proxy, "standin": standin}
        finally:
            bot.stop()
            proxy.__exit__(None, None, None)
            am.stop()


def status(bot: Bot) -> tuple[str, float]:
    body = urlencode({"command": c.SLASH_COMMAND, "text": "status", "user_id": "U1"}).encode()
    ts = str(int(time.time()))
    headers = {
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": slack_signature(SIGNING_SECRET, ts, body),
        "Content-Type": "application/x-www-form-urlencoded",
    }
    started = time.monotonic()
    answer = requests.post(f"{bot.url}{c.PATH_BOT_SLACK_COMMANDS}", data=body, headers=headers, timeout=10)
    assert answer.status_code == 200
    return answer.json()["text"], time.monotonic() - started


def group_line(text: str, case: str) -> str:
    lines = [line for line in text.splitlines() if case in line]
    assert len(lines) == 1, text
    return lines[0]


def reads(bot: Bot, outcome: str) -> float:
    value = bot.metrics.registry.get_sample_value(c.M_BOT_ALERTMANAGER_READS, {c.L_OUTCOME: outcome})
    return value or 0.0


def test_status_shows_an_amtool_silence(silence_stack: dict[str, Any]) -> None:
    bot: Bot = silence_stack["bot"]
    am: Alertmanager = silence_stack["am"]
    case = new_case()
    labels, annotations = unavailable_alert(case, model=f"m{case}")
    am.post(labels, annotations)
    wait_until(lambda: posts(silence_stack["standin"], case), 15, "the group's message")
    text, _ = status(bot)
    assert "silenced" not in group_line(text, case)

    added = subprocess.run(
        [
            binary("amtool"),
            "silence",
            "add",
            f"--alertmanager.url={am.url}",
            "--author=alice",
            "--duration=1h",
            f"--comment=rolling back, see {SECRET_IN_COMMENT}",
            f"testcase={case}",
        ],
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert added.returncode == 0, added.stderr
    text = wait_until(lambda: "silenced" in (t := status(bot)[0]) and t, 10, "the silence in the answer")
    line = group_line(text, case)
    until = time.strftime("%H:%M UTC", time.gmtime(time.time() + 3600))
    assert "*silenced* by alice" in line, line
    assert "rolling back, see" in line
    assert SECRET_IN_COMMENT not in text
    # the minute may turn between the silence and this line
    earlier = time.strftime("%H:%M UTC", time.gmtime(time.time() + 3600 - 60))
    assert f"until {until}" in line or f"until {earlier}" in line, line
    assert reads(bot, c.BOT_OUTCOME_OK) >= 1


@pytest.mark.parametrize(
    ("fault", "outcome"),
    [
        (STATUS_500, c.BOT_OUTCOME_HTTP_ERROR),
        (GARBAGE, c.BOT_OUTCOME_INVALID_RESPONSE),
        (HANG, c.BOT_OUTCOME_NETWORK),
    ],
)
def test_status_answers_when_alertmanager_fails(
    silence_stack: dict[str, Any], fault: str, outcome: str
) -> None:
    bot: Bot = silence_stack["bot"]
    proxy: FaultProxy = silence_stack["proxy"]
    case = new_case()
    labels, annotations = unavailable_alert(case, model=f"m{case}")
    silence_stack["am"].post(labels, annotations)
    wait_until(lambda: posts(silence_stack["standin"], case), 15, "the group's message")
    before = reads(bot, outcome)
    proxy.set_fault("/api/v2/", fault)
    try:
        text, seconds = status(bot)
    finally:
        proxy.set_fault("/api/v2/", None)
    assert seconds < 3.0  # Slack's window
    assert "Silences could not be read from Alertmanager" in text
    assert case in text  # the groups are still listed
    assert reads(bot, outcome) == before + 1


def test_status_answers_when_alertmanager_is_down(silence_stack: dict[str, Any]) -> None:
    bot: Bot = silence_stack["bot"]
    (closed,) = free_ports(1)
    shown = bot.server.settings
    before = reads(bot, c.BOT_OUTCOME_NETWORK)
    case = new_case()
    labels, annotations = unavailable_alert(case, model=f"m{case}")
    silence_stack["am"].post(labels, annotations)
    wait_until(lambda: posts(silence_stack["standin"], case), 15, "the group's message")
    bot.server.settings = replace(shown, alertmanager_url=f"http://127.0.0.1:{closed}")
    try:
        text, _ = status(bot)
    finally:
        bot.server.settings = shown
    assert "Silences could not be read from Alertmanager (Connection refused)" in text
    assert reads(bot, c.BOT_OUTCOME_NETWORK) == before + 1
