"""A group only partly silenced, against the REAL Alertmanager: its webhook leaves the silenced alerts
out (notify/mute.go MuteStage drops a muted alert from what the receivers get), and the bot drew them
resolved, then took the silence for ended. The message keeps them firing and says which alert is
silenced, by whom, until when; the header stays FIRING."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from test_bot_alertmanager import Alertmanager, posts, unavailable_alert, wait_until
from test_bot_silences import amtool_silence, header_and_text, new_case, reading_bot
from test_bot_silences import silence_stack as silence_stack

from triton_sre import conventions as c
from triton_sre.bot.command import Bot
from triton_sre.bot.dev_slack_standin import SlackStandin

INSTANCES = ("triton-a:8003", "triton-b:8003", "triton-c:8003")


def replies(standin: SlackStandin, ts: str) -> list[str]:
    return [
        str(p.params.get("text"))
        for p in standin.calls("chat.postMessage", ok_only=True)
        if p.params.get("thread_ts") == ts
    ]


def stored(bot: Bot, case: str) -> list[dict[str, Any]]:
    """The case's group's notifications as the outbox stored them: Alertmanager's and the bot's own."""
    rows = bot.outbox._db.execute(
        "SELECT payload FROM notifications WHERE instr(group_key, ?) > 0 ORDER BY id", (case,)
    ).fetchall()
    return [json.loads(r[0]) for r in rows]


def three_alerts_c_silenced(
    stack: dict[str, Any], author: str, wait: Callable[..., Any] = wait_until
) -> tuple[str, str]:
    """A group of three alerts (instances a, b, c) posted, then c silenced by `author` and said so;
    `wait` waits for each step (`wait_until`, or `stepping` the bot's delivery loop)."""
    am: Alertmanager = stack["am"]
    case = new_case()
    for instance in INSTANCES:
        am.post(*unavailable_alert(case, model=f"m{case}", instance=instance))
    ts = wait(lambda: posts(stack["standin"], case), 15, "the group's message")[0].response["ts"]
    wait(lambda: all(i in header_and_text(stack["standin"], ts)[1] for i in INSTANCES), 15, "three alerts")
    amtool_silence(
        am.url,
        "add",
        f"--author={author}",
        "--duration=1h",
        "--comment=c drained",
        f"testcase={case}",
        "instance=triton-c:8003",
    )
    wait(lambda: "1 of 3 alerts" in header_and_text(stack["standin"], ts)[1], 10, "the silence said")
    return case, ts


def test_one_alert_of_three_silenced_stays_firing_and_is_named(silence_stack: dict[str, Any]) -> None:
    am: Alertmanager = silence_stack["am"]
    standin: SlackStandin = silence_stack["standin"]
    bot: Bot = silence_stack["bot"]
    case, ts = three_alerts_c_silenced(silence_stack, "gus")
    # Alertmanager's next notification (a repeat every 2 s here) leaves the silenced alert out
    before = len(stored(bot, case))
    wait_until(lambda: len(stored(bot, case)) > before, 10, "a notification after the silence")
    labels, annotations = unavailable_alert(case, model=f"m{case}", instance="triton-b:8003")
    am.post(labels, annotations, resolved=True)
    wait_until(lambda: "2 firing, 1 resolved" in header_and_text(standin, ts)[1], 15, "b drawn resolved")
    left_out = [
        p for p in stored(bot, case) if {a["labels"]["instance"] for a in p["alerts"]} == set(INSTANCES[:2])
    ]
    assert left_out, "Alertmanager's webhook carried the silenced alert"
    # b resolved: a and c fire, c silenced
    wait_until(lambda: "1 of 2 alerts" in header_and_text(standin, ts)[1], 10, "the note recounted")
    header, body = header_and_text(standin, ts)
    assert "FIRING" in header and "SILENCED" not in header
    assert f"{c.ALERT_MODEL_UNAVAILABLE} (m{case}) on triton-c:8003 by gus until" in body, body
    shown = standin.message("#triton-alerts", ts)
    lines = [b["text"]["text"] for b in shown["blocks"] if b.get("type") == "section" and "text" in b]
    c_line = next(line for line in lines if "`triton-c:8003`" in line)
    assert "(resolved)" not in c_line
    wait_until(lambda: any("2 of 3 alert(s)" in r for r in replies(standin, ts)), 10, "the reply")
    said = replies(standin, ts)
    assert not any("silence ended" in r for r in said), said
    assert not any(r.count(c.ALERT_MODEL_UNAVAILABLE) > 1 and "Resolved:" in r for r in said), said
    assert any("2 of 3 alert(s) firing" in r for r in said), said


def test_a_silenced_alert_resolving_is_drawn_resolved_the_others_firing(
    silence_stack: dict[str, Any],
) -> None:
    """Alertmanager mutes the silenced alert's resolution too, then forgets it; the group's other alerts
    fire on, so nothing ever drew it resolved (the whole-group rule needed every alert gone)."""
    am: Alertmanager = silence_stack["am"]
    standin: SlackStandin = silence_stack["standin"]
    bot: Bot = silence_stack["bot"]
    assert bot.worker.silences is not None
    bot.worker.silences.gone_after_seconds = 1.0  # 150 s by default: Prometheus re-sends every minute
    case, ts = three_alerts_c_silenced(silence_stack, "hal")
    am.post(*unavailable_alert(case, model=f"m{case}", instance="triton-c:8003"), resolved=True)
    wait_until(lambda: "2 firing, 1 resolved" in header_and_text(standin, ts)[1], 15, "c drawn resolved")
    header, body = header_and_text(standin, ts)
    assert "FIRING" in header and "Silenced" not in body
    shown = standin.message("#triton-alerts", ts)
    lines = [b["text"]["text"] for b in shown["blocks"] if b.get("type") == "section" and "text" in b]
    assert "(resolved)" in next(line for line in lines if "`triton-c:8003`" in line)
    assert all("(resolved)" not in line for line in lines if "`triton-a:8003`" in line or "`triton-b" in line)
    wait_until(lambda: any("2 of 3 alert(s)" in r for r in replies(standin, ts)), 10, "the reply")
    said = replies(standin, ts)
    assert any("on triton-c:8003 resolved while silenced" in r and "2 alert(s)" in r for r in said), said
    assert not any("silence ended" in r for r in said), said
    assert any("2 of 3 alert(s) firing" in r for r in said), said


def test_the_only_unsilenced_alert_resolving_leaves_the_group_silenced_not_resolved(
    silence_stack: dict[str, Any],
) -> None:
    """Two alerts, one silenced, the other resolves: Alertmanager's notification says the group
    `resolved` and carries the resolved alert alone, and the bot turned the message green and forgot
    the silence while the silenced alert fired on."""
    am: Alertmanager = silence_stack["am"]
    standin: SlackStandin = silence_stack["standin"]
    bot: Bot = silence_stack["bot"]
    case, ts = three_alerts_c_silenced(silence_stack, "ida")
    for instance in INSTANCES[:2]:
        am.post(*unavailable_alert(case, model=f"m{case}", instance=instance), resolved=True)
    wait_until(lambda: "1 firing, 2 resolved" in header_and_text(standin, ts)[1], 15, "a and b resolved")
    sent = [p for p in stored(bot, case) if p["status"] == c.AM_STATUS_RESOLVED]
    assert sent and all("triton-c:8003" not in json.dumps(p) for p in sent), "no resolved notification"
    wait_until(lambda: "SILENCED" in header_and_text(standin, ts)[0], 10, "the group wholly silenced now")
    _, body = header_and_text(standin, ts)
    assert "*Silenced* in Alertmanager by ida until" in body
    assert bot.outbox.message(next(m.group_key for m in bot.outbox.open_messages() if case in m.group_key))


def _stepped(bot: Bot) -> None:
    """The delivery loop stepped by the test, not by its thread; an alert gone 1 s drawn resolved."""
    bot.worker.start = lambda: bot.worker  # type: ignore[method-assign]
    assert bot.worker.silences is not None
    bot.worker.silences.gone_after_seconds = 1.0


def test_a_notification_superseding_the_queued_resolution_keeps_it_resolved(tmp_path: Path) -> None:
    """The poll queues the resolution of the silenced alert that left Alertmanager; Alertmanager's next
    notification (its repeat, leaving the muted alert out) comes before the delivery loop draws it and
    supersedes it: the alert vanished from the message ('2 of 2 alert(s) firing') instead of being
    drawn resolved. Seen under load with the loop's own thread; here the test steps the loop."""
    with reading_bot(tmp_path, _stepped) as stack:
        am: Alertmanager = stack["am"]
        standin: SlackStandin = stack["standin"]
        bot: Bot = stack["bot"]

        def stepping(predicate: Callable[[], Any], timeout: float, what: str) -> Any:
            return wait_until(lambda: (bot.worker.step(), predicate())[1], timeout, what)

        case, ts = three_alerts_c_silenced(stack, "jo", stepping)
        am.post(*unavailable_alert(case, model=f"m{case}", instance="triton-c:8003"), resolved=True)
        stepping(lambda: any("resolved while silenced" in r for r in replies(standin, ts)), 15, "it queued")
        queued = len(stored(bot, case))  # the poll's resolution, not drawn yet
        wait_until(lambda: len(stored(bot, case)) > queued, 10, "Alertmanager's notification after it")
        assert "triton-c:8003" not in json.dumps(stored(bot, case)[-1]), "the muted alert was notified"
        stepping(lambda: "2 firing, 1 resolved" in header_and_text(standin, ts)[1], 10, "c drawn resolved")
        shown = standin.message("#triton-alerts", ts)
        lines = [b["text"]["text"] for b in shown["blocks"] if b.get("type") == "section" and "text" in b]
        assert "(resolved)" in next(line for line in lines if "`triton-c:8003`" in line)
        stepping(lambda: any("2 of 3 alert(s) firing" in r for r in replies(standin, ts)), 10, "the reply")
        assert not any("2 of 2 alert(s)" in r for r in replies(standin, ts)), replies(standin, ts)
