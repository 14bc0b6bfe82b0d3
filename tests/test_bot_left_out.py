"""A bot given no Alertmanager URL, against the REAL Alertmanager: a silenced (or inhibited) alert is
left out of the group's webhook the way an alert resolved earlier is, and the bot drew it resolved
('Resolved: …' in the thread) while it still fired. Without Alertmanager's API nothing tells the
two apart, so the message says the alert was left out and why it may be."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
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
from test_bot_partial_silences import replies
from test_bot_silences import amtool_silence, header_and_text

from triton_sre import conventions as c
from triton_sre.bot.command import Bot
from triton_sre.bot.config import BotSettings
from triton_sre.bot.dev_slack_standin import SlackStandin
from triton_sre.stack.processes import free_ports

KEPT, SILENCED = "triton-a:8003", "triton-b:8003"


@pytest.fixture(scope="module")
def blind_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    workdir = tmp_path_factory.mktemp("bot-left-out")
    (bot_port,) = free_ports(1)
    with SlackStandin(token=SLACK_TOKEN) as standin:
        am = Alertmanager(workdir / "am", f"http://127.0.0.1:{bot_port}", "http://127.0.0.1:9")
        settings = BotSettings(
            channel="#triton-alerts", listen=f"127.0.0.1:{bot_port}", retry_base_seconds=0.2
        )
        bot = Bot(
            settings, workdir / "outbox.sqlite3", WEBHOOK_TOKEN, SLACK_TOKEN, standin.url, SIGNING_SECRET
        )
        assert bot.worker.silences is None  # no Alertmanager URL: nothing to ask
        bot.start()
        try:
            yield {"bot": bot, "am": am, "standin": standin}
        finally:
            bot.stop()
            am.stop()


def test_an_alert_left_out_without_alertmanager_is_not_drawn_resolved(blind_stack: dict[str, Any]) -> None:
    am: Alertmanager = blind_stack["am"]
    standin: SlackStandin = blind_stack["standin"]
    case = new_case()
    model = f"m{case}"
    for instance in (KEPT, SILENCED):
        am.post(*unavailable_alert(case, model=model, instance=instance))
    ts = wait_until(lambda: posts(standin, case), 15, "the group's message")[0].response["ts"]
    wait_until(lambda: "2 firing, 0 resolved" in header_and_text(standin, ts)[1], 15, "both alerts")
    silence = (
        "--author=ida",
        "--duration=1h",
        "--comment=b drained",
        f"testcase={case}",
        f"instance={SILENCED}",
    )
    amtool_silence(am.url, "add", *silence)
    wait_until(lambda: "left out" in header_and_text(standin, ts)[1], 15, "the alert said left out")
    header, body = header_and_text(standin, ts)
    assert "FIRING" in header, header
    assert "1 firing, 0 resolved, 1 left out" in body, body
    named = f"{c.ALERT_MODEL_UNAVAILABLE} ({model}) on {SILENCED}"
    assert f"*Left out of this notification:* {named} (resolved, silenced or inhibited" in body, body
    said = wait_until(lambda: [r for r in replies(standin, ts) if "Left out" in r], 10, "the reply")
    assert named in said[0] and "1 of 1 alert(s) firing, 1 left out" in said[0], said
    assert not any("Resolved:" in r for r in replies(standin, ts)), replies(standin, ts)
    # Alertmanager's repeats (every 2 s here) leave it out again: nothing new is said
    posted, outbox = len(replies(standin, ts)), blind_stack["bot"].outbox
    before = len(outbox.notifications(case))
    wait_until(lambda: len(outbox.notifications(case)) >= before + 2, 15, "two repeats")
    assert len(replies(standin, ts)) == posted, replies(standin, ts)
    assert "left out" in header_and_text(standin, ts)[1]
    # the notification itself saying the group resolved is taken at its word
    am.post(*unavailable_alert(case, model=model, instance=KEPT), resolved=True)
    wait_until(lambda: "RESOLVED" in header_and_text(standin, ts)[0], 15, "the group resolved")
    assert "left out" not in header_and_text(standin, ts)[1]
