"""The Slack token given as a file (``--slack-token-file``, ``$SLACK_BOT_TOKEN_FILE``), rotated in place while
the bot runs, against the Slack stand-in. Before, the token came from ``$SLACK_BOT_TOKEN`` only and a
rotated one took a restart (tidy37's limit); now the file is read again before each ``auth.test`` while
Slack refuses the token, and what waited in the outbox is delivered with the new token."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from test_bot_delivery import TOKEN, notification, ok_posts, send
from test_bot_token_revoked import SETTINGS, _health

from triton_sre import conventions as c
from triton_sre.bot.command import Bot
from triton_sre.bot.dev_slack_standin import SlackStandin

ROOT = Path(__file__).resolve().parents[1]


def _write(path: Path, text: str) -> None:
    """As a Secret volume updates: the new file renamed over the old one."""
    spare = path.with_suffix(".new")
    spare.write_text(text)
    os.replace(spare, path)


def test_a_token_file_rotated_while_slack_refuses_the_old_token_is_taken_up(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    old, new = "xoxb-" + uuid.uuid4().hex, "xoxb-" + uuid.uuid4().hex
    secret = tmp_path / "slack-token"
    _write(secret, old + "\n")
    with (
        SlackStandin(token=old) as standin,
        Bot(SETTINGS, tmp_path / "o", TOKEN, old, standin.url, slack_token_file=str(secret)) as bot,
    ):
        before = uuid.uuid4().hex[:8]
        send(bot, notification(before))
        assert standin.wait_for(lambda: bool(ok_posts(standin, before)), 10)

        standin.token = new  # the old token revoked, the new one issued: Slack takes only the new one
        _write(secret, "")  # a half-updated secret: said once, the old token kept
        case = uuid.uuid4().hex[:8]
        send(bot, notification(case))
        assert standin.wait_for(lambda: _health(bot)[1]["status"] == "degraded", 10)
        assert "write a valid one to the token file" in str(_health(bot)[1]["problem"])
        assert standin.wait_for(lambda: len(standin.calls("auth.test")) >= 3, 10)
        assert not ok_posts(standin, case)
        assert caplog.text.count("the Slack token file cannot be used") == 1
        assert "the file is empty" in caplog.text

        _write(secret, new + "\n")
        assert standin.wait_for(lambda: bool(ok_posts(standin, case)), 10)
        assert standin.wait_for(lambda: _health(bot)[1]["status"] == "ok", 10)
        # (the worker marks the row delivered after Slack's answer: the post can be seen a moment before)
        assert standin.wait_for(lambda: bot.outbox.counts().get(c.BOT_OUTBOX_PENDING, 0) == 0, 10)
        assert f"read a new Slack token from {secret}" in caplog.text
        assert old not in caplog.text and new not in caplog.text


def _bot(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("SLACK_")}
    environ.update(PYTHONPATH=str(ROOT), TRITON_SRE_BOT_TOKEN="w" * 20, **env)
    return subprocess.run(
        [sys.executable, "-m", "triton_sre", "bot", "--channel", "#c", "--listen", "127.0.0.1:0", *args],
        capture_output=True, text=True, env=environ, timeout=60, check=False,
    )


def test_an_unusable_token_file_is_refused_at_start_without_quoting_it(tmp_path: Path) -> None:
    missing = _bot("--slack-token-file", str(tmp_path / "none"))
    assert missing.returncode == 2
    assert "--slack-token-file" in missing.stderr and "cannot read" in missing.stderr
    two = tmp_path / "two"
    two.write_text("xoxb-first-secret-part\nxoxb-second-secret-part\n")
    by_env = _bot(**{c.ENV_SLACK_BOT_TOKEN_FILE: str(two)})
    assert by_env.returncode == 2 and "one word" in by_env.stderr and "secret-part" not in by_env.stderr
    nothing = _bot()
    assert nothing.returncode == 2 and c.ENV_SLACK_BOT_TOKEN_FILE in nothing.stderr
