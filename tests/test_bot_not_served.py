"""TritonSLOModelNotServed (absent26) in Slack says why the model is not served, against the real Triton 2.51.

A config Triton refused leaves the model in the repository index by its name alone: live diagnosis has
nothing to say of it, so the bot reads Triton's log, as for an UNAVAILABLE model. Before, the alert was
not one the bot diagnosed: the message named no cause.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from corpus import refused_config_repository
from test_bot_delivery import SLACK_TOKEN, TOKEN, notification, ok_posts, send

from triton_sre import conventions as c
from triton_sre.bot.command import Bot
from triton_sre.bot.config import BotSettings
from triton_sre.bot.dev_slack_standin import SlackStandin

REFUSED = "reranker"


def test_a_model_not_served_is_diagnosed_from_the_log_when_nothing_live_names_it(
    fresh_triton_factory: Any, tmp_path: Path
) -> None:
    repo = refused_config_repository(tmp_path / "models", REFUSED, "ok_model")
    triton = fresh_triton_factory(repo)
    with SlackStandin(token=SLACK_TOKEN) as standin:
        settings = BotSettings(
            channel="#c", listen="127.0.0.1:0", triton_url=triton.http_url, log_file=str(triton.log_path)
        )
        with Bot(settings, tmp_path / "o.sqlite3", TOKEN, SLACK_TOKEN, standin.url) as bot:
            case = uuid.uuid4().hex[:8]
            send(bot, notification(case, alertname=c.ALERT_SLO_MODEL_NOT_SERVED, model=REFUSED))
            assert standin.wait_for(lambda: bool(ok_posts(standin, case)), 30)
            shown = json.dumps(ok_posts(standin, case)[0].params)
    assert c.RUNBOOK_BATCHING_CONFIG_INVALID in shown, shown
    assert f"log {triton.log_path.name}" in shown
