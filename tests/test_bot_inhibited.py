"""An alert inhibited by another alert of its own group, against the REAL Alertmanager: its webhook
leaves the inhibited alert out (notify/mute.go: the inhibitor is a MuteStage like the silencer, and a
muted alert is dropped from what the receivers get), and the bot drew it resolved while it still fired.
The message keeps it firing and says which alert inhibits it; when that one resolves, the line goes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from test_bot_alertmanager import (
    Alertmanager,
    posts,
    unavailable_alert,
    wait_until,
)
from test_bot_partial_silences import replies, stored
from test_bot_silences import header_and_text, new_case, reading_bot

from triton_sre import conventions as c
from triton_sre.bot.command import Bot
from triton_sre.bot.dev_slack_standin import SlackStandin
from triton_sre.bot.silence_watch import CARRIED_KEY

SOURCE, TARGET = "triton-a:8003", "triton-b:8003"
# a page inhibits the ticket of the same alert and model: both sit in one group (severity is not grouped)
INHIBIT = {
    "source_matchers": [f'{c.L_SEVERITY}="{c.SEVERITY_PAGE}"'],
    "target_matchers": [f'{c.L_SEVERITY}="{c.SEVERITY_TICKET}"'],
    "equal": [c.LABEL_ALERTNAME, c.LABEL_MODEL, "testcase"],
}


@pytest.fixture(scope="module")
def inhibit_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    with reading_bot(tmp_path_factory.mktemp("bot-inhibited"), inhibit_rules=[INHIBIT]) as stack:
        yield stack


def alert_line(standin: SlackStandin, ts: str, instance: str) -> str:
    """The message's line of the alert on `instance` ("" when the message left it out)."""
    shown = standin.message("#triton-alerts", ts)
    lines = [b["text"]["text"] for b in shown["blocks"] if b.get("type") == "section" and "text" in b]
    return next((line for line in lines if f"`{instance}`" in line), "")


Labelled = tuple[dict[str, str], dict[str, str]]


def page_and_ticket() -> tuple[str, str, Labelled, Labelled]:
    """A new case, its model, and the model's page (on SOURCE) and ticket (on TARGET) alerts."""
    case = new_case()
    model = f"m{case}"
    source = unavailable_alert(case, model=model, instance=SOURCE, severity=c.SEVERITY_PAGE)
    return (
        case,
        model,
        source,
        unavailable_alert(case, model=model, instance=TARGET, severity=c.SEVERITY_TICKET),
    )


def test_an_alert_inhibited_in_its_own_group_stays_firing_and_names_its_source(
    inhibit_stack: dict[str, Any],
) -> None:
    am: Alertmanager = inhibit_stack["am"]
    standin: SlackStandin = inhibit_stack["standin"]
    bot: Bot = inhibit_stack["bot"]
    case, model, source, target = page_and_ticket()
    am.post(*target)
    ts = wait_until(lambda: posts(standin, case), 15, "the group's message")[0].response["ts"]
    am.post(*source)
    wait_until(lambda: f"`{SOURCE}`" in header_and_text(standin, ts)[1], 15, "the page in the message")
    # Alertmanager's notification carries the page alone: the ticket is muted by the inhibitor
    assert any({a["labels"]["instance"] for a in p["alerts"]} == {SOURCE} for p in stored(bot, case)), (
        "Alertmanager's webhook carried the inhibited alert"
    )
    wait_until(lambda: "Inhibited" in alert_line(standin, ts, TARGET), 15, "the ticket shown inhibited")
    _, body = header_and_text(standin, ts)
    assert "2 firing, 0 resolved" in body, body
    line = alert_line(standin, ts, TARGET)
    assert "(resolved)" not in line, line
    assert f"by {c.ALERT_MODEL_UNAVAILABLE} ({model}) on {SOURCE}" in line, line
    assert "Inhibited" not in alert_line(standin, ts, SOURCE)
    inhibited = f"Inhibited: {c.ALERT_MODEL_UNAVAILABLE} ({model}) on {TARGET} by"
    said = wait_until(lambda: [r for r in replies(standin, ts) if inhibited in r], 10, "the reply")
    assert not any("Resolved:" in r for r in replies(standin, ts)), said
    # the page resolves: the inhibition ends, Alertmanager notifies the ticket again, the line goes
    am.post(*source, resolved=True)
    wait_until(lambda: "1 firing, 1 resolved" in header_and_text(standin, ts)[1], 15, "the page resolved")
    wait_until(lambda: "Inhibited" not in alert_line(standin, ts, TARGET), 15, "the inhibition gone")
    assert "(resolved)" not in alert_line(standin, ts, TARGET)
    assert "(resolved)" in alert_line(standin, ts, SOURCE)
    wait_until(lambda: any("No longer inhibited: " in r for r in replies(standin, ts)), 10, "the reply")


def test_an_alert_inhibited_before_the_bot_saw_it_is_shown_inhibited(inhibit_stack: dict[str, Any]) -> None:
    """Page and ticket fire together: the group's first notification already leaves the ticket out
    (inhibited from the start), so the message never showed it to keep. The bot reads Alertmanager's
    alerts of the group (its receiver and group labels) and shows it inhibited, not absent."""
    am: Alertmanager = inhibit_stack["am"]
    standin: SlackStandin = inhibit_stack["standin"]
    bot: Bot = inhibit_stack["bot"]
    case, model, source, target = page_and_ticket()
    am.post(*source)
    am.post(*target)
    ts = wait_until(lambda: posts(standin, case), 15, "the group's message")[0].response["ts"]
    sent = [{a["labels"]["instance"] for a in p["alerts"]} for p in stored(bot, case)]
    assert {SOURCE} in sent, sent  # Alertmanager's own notification: the page alone
    wait_until(lambda: "Inhibited" in alert_line(standin, ts, TARGET), 15, "the ticket shown inhibited")
    assert f"by {c.ALERT_MODEL_UNAVAILABLE} ({model}) on {SOURCE}" in alert_line(standin, ts, TARGET)
    assert "2 firing, 0 resolved" in header_and_text(standin, ts)[1]
    am.post(*source, resolved=True)
    wait_until(lambda: "Inhibited" not in alert_line(standin, ts, TARGET), 15, "the inhibition gone")
    assert "(resolved)" not in alert_line(standin, ts, TARGET)


def test_an_alert_joining_its_group_inhibited_is_shown_without_a_notification(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The page fires, then the ticket, inhibited from the start: Alertmanager sends nothing (the
    group's notified alerts are the same) until its repeat, hours later in a deployment. The delivery
    loop's read of Alertmanager draws the message again with the ticket inhibited."""
    workdir = tmp_path_factory.mktemp("bot-inhibited-joined")
    with reading_bot(workdir, inhibit_rules=[INHIBIT], repeat_interval="1h") as stack:
        am, standin, bot = stack["am"], stack["standin"], stack["bot"]
        case, model, source, target = page_and_ticket()
        am.post(*source)
        ts = wait_until(lambda: posts(standin, case), 15, "the group's message")[0].response["ts"]
        sent = len(stored(bot, case))
        am.post(*target)
        wait_until(lambda: "Inhibited" in alert_line(standin, ts, TARGET), 15, "the ticket shown inhibited")
        assert f"by {c.ALERT_MODEL_UNAVAILABLE} ({model}) on {SOURCE}" in alert_line(standin, ts, TARGET)
        assert "2 firing, 0 resolved" in header_and_text(standin, ts)[1]
        webhooks = [p for p in stored(bot, case)[sent:] if CARRIED_KEY not in p]
        assert all({a["labels"]["instance"] for a in p["alerts"]} == {SOURCE} for p in webhooks), webhooks
