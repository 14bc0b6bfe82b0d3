"""Slack refusing the bot's token mid-run (tidy37), against the Slack stand-in answering ``token_revoked``,
``account_inactive`` or ``invalid_auth`` for the token it took a moment before.

Before, the refusal showed only as `triton_sre_bot_slack_calls_total{outcome="invalid_auth"}`, every pending
notification retrying on its own. Now: one error line naming Slack's code (never the token), `/healthz` 200
``degraded`` with the reason, `triton_sre_bot_slack_token_usable` 0, deliveries paused (auth.test alone is
asked again) with the notifications pending in the outbox, and delivered once Slack takes a token: the same
one again (an account reactivated), or a new one after a restart on the same outbox.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
import requests
from test_bot_delivery import TOKEN, notification, ok_posts, send

from triton_sre import conventions as c
from triton_sre.bot.command import Bot, _check_slack_auth
from triton_sre.bot.config import BotSettings
from triton_sre.bot.dev_slack_standin import SlackStandin

SLACK_TOKEN = "xoxb-" + uuid.uuid4().hex
SETTINGS = BotSettings(channel="#c", listen="127.0.0.1:0", retry_base_seconds=0.2, retry_max_seconds=0.5)


def _health(bot: Bot) -> tuple[int, dict[str, object]]:
    answer = requests.get(f"{bot.url}{c.PATH_HEALTHZ}", timeout=5)
    return answer.status_code, answer.json()


def _eventually(predicate: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 10
    while not predicate():
        assert time.monotonic() < deadline
        time.sleep(0.05)


def _usable(bot: Bot) -> str:
    text = requests.get(f"{bot.url}{c.PATH_METRICS}", timeout=5).text
    return next(line.split()[-1] for line in text.splitlines() if line.startswith(c.M_BOT_SLACK_TOKEN_USABLE))


@pytest.mark.parametrize("error", ["token_revoked", "account_inactive", "invalid_auth"])
def test_a_token_refused_mid_run_is_said_and_the_notifications_wait(
    tmp_path: Path, error: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    with (
        SlackStandin(token=SLACK_TOKEN) as standin,
        Bot(SETTINGS, tmp_path / "o", TOKEN, SLACK_TOKEN, standin.url) as bot,
    ):
        before = uuid.uuid4().hex[:8]
        send(bot, notification(before))
        assert standin.wait_for(lambda: bool(ok_posts(standin, before)), 10)
        assert _health(bot)[:1] == (200,) and _health(bot)[1]["status"] == "ok"
        assert _usable(bot) == "1.0"

        standin.revoke(error)
        first, second = uuid.uuid4().hex[:8], uuid.uuid4().hex[:8]
        send(bot, notification(first))
        assert standin.wait_for(lambda: _health(bot)[1]["status"] == "degraded", 10)
        send(bot, notification(second))
        assert standin.wait_for(lambda: len(standin.calls("auth.test")) >= 3, 10)  # asked again, alone

        code, body = _health(bot)
        assert code == 200  # still taking notifications: Alertmanager keeps sending them here
        assert f"Slack refuses the bot token ({error})" in str(body["problem"])
        assert _usable(bot) == "0.0"
        posts = [
            x for x in standin.calls("chat.postMessage") if first in str(x.params) or second in str(x.params)
        ]
        assert len(posts) == 1 and posts[0].response["error"] == error  # one refused post, then none
        assert bot.outbox.counts().get(c.BOT_OUTBOX_PENDING, 0) == 2
        said = [
            r
            for r in caplog.records
            if r.levelno == logging.ERROR and "refuses the bot token" in r.getMessage()
        ]
        assert len(said) == 1 and error in said[0].getMessage() and "restart the bot" in said[0].getMessage()
        assert SLACK_TOKEN not in caplog.text and SLACK_TOKEN not in str(body)

        standin.reinstate()  # (an account reactivated)
        assert standin.wait_for(lambda: bool(ok_posts(standin, first) and ok_posts(standin, second)), 10)
        _eventually(
            lambda: bot.outbox.counts().get(c.BOT_OUTBOX_PENDING, 0) == 0
        )  # recorded after Slack's ok
        assert _health(bot) == (200, {"status": "ok", "outbox": bot.outbox.counts()})
        assert _usable(bot) == "1.0"
        assert "Slack takes the bot token again" in caplog.text


def test_a_refused_token_at_start_then_a_new_one_after_a_restart(tmp_path: Path) -> None:
    outbox = tmp_path / "o"
    with SlackStandin(token=SLACK_TOKEN) as standin:
        old = "xoxb-" + uuid.uuid4().hex
        with Bot(SETTINGS, outbox, TOKEN, old, standin.url) as bot:
            _check_slack_auth(bot)  # what `triton-sre bot` runs at start
            code, body = _health(bot)
            assert code == 200 and body["status"] == "degraded" and "(invalid_auth)" in str(body["problem"])
            case = uuid.uuid4().hex[:8]
            send(bot, notification(case))
            assert standin.wait_for(lambda: len(standin.calls("auth.test")) >= 2, 10)
            assert not standin.calls("chat.postMessage")  # paused from the start: nothing tried but auth.test
            assert bot.outbox.counts().get(c.BOT_OUTBOX_PENDING, 0) == 1
        with Bot(SETTINGS, outbox, TOKEN, SLACK_TOKEN, standin.url) as bot:  # the new token, restarted
            assert standin.wait_for(lambda: bool(ok_posts(standin, case)), 10)
            assert _health(bot)[1]["status"] == "ok"
