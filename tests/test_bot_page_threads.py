"""Tickets a page inhibited come in the page's thread, not as a new message (journey25: when the 6h
page resolved, the 1d/3d tickets its inhibit rule had held came at the same second as `FIRING
[ticket]`, read as a new incident). The REAL Alertmanager routes by severity and inhibits the ticket
tier of the same alert, SLO and model, as deploy/alertmanager/alertmanager.yml does."""

from __future__ import annotations

import time
from pathlib import Path

import requests
from test_bot_alertmanager import (
    SIGNING_SECRET,
    SLACK_TOKEN,
    WEBHOOK_TOKEN,
    Alertmanager,
    new_case,
    posts,
    wait_until,
)
from test_bot_silences import amtool_silence

from triton_sre import conventions as c
from triton_sre.bot.command import Bot
from triton_sre.bot.config import BotSettings
from triton_sre.bot.dev_slack_standin import SlackStandin
from triton_sre.slo import default_spec
from triton_sre.stack.processes import free_ports

SEVERITY_ROUTES = [
    {"matchers": [f'{c.L_SEVERITY}="{severity}"'], "receiver": "bot"}
    for severity in (c.SEVERITY_PAGE, c.SEVERITY_TICKET)
]
INHIBIT = [
    {
        "source_matchers": [f'{c.L_SEVERITY}="{c.SEVERITY_PAGE}"'],
        "target_matchers": [f'{c.L_SEVERITY}="{c.SEVERITY_TICKET}"'],
        "equal": [c.LABEL_ALERTNAME, c.L_SLO, c.LABEL_MODEL],
    }
]


def burn(case: str, tier: tuple[str, str, float, str]) -> dict[str, str]:
    return {
        c.LABEL_ALERTNAME: c.ALERT_SLO_ERROR_BUDGET_BURN,
        c.LABEL_MODEL: f"m{case}",
        c.L_SLO: default_spec().slos[0].name,
        c.L_WINDOW: tier[0],
        c.L_SEVERITY: tier[3],
        "testcase": case,
    }


def _listed(am: Alertmanager, alert: dict[str, str]) -> bool:
    """Alertmanager's API lists the alert as active (its label set, not inhibited or silenced)."""
    answer = requests.get(f"{am.url}/api/v2/alerts", params={"active": "true"}, timeout=5)
    return any(a["labels"] == alert and a["status"]["state"] == "active" for a in answer.json())


def test_tickets_the_page_inhibited_are_threaded_under_it(tmp_path: Path) -> None:
    (bot_port,) = free_ports(1)
    with SlackStandin(token=SLACK_TOKEN) as standin:
        am = Alertmanager(
            tmp_path / "am", f"http://127.0.0.1:{bot_port}", "http://127.0.0.1:9", SEVERITY_ROUTES, INHIBIT
        )
        settings = BotSettings(
            channel="#triton-alerts", listen=f"127.0.0.1:{bot_port}", alertmanager_url=am.url
        )
        bot = Bot(
            settings, tmp_path / "outbox.sqlite3", WEBHOOK_TOKEN, SLACK_TOKEN, standin.url, SIGNING_SECRET
        )
        assert bot.worker.silences is not None
        bot.worker.silences.poll_seconds = 0.3
        bot.start()
        try:
            case = new_case()
            page, ticket = burn(case, c.BURN_TIERS[1]), burn(case, c.BURN_TIERS[2])
            annotations = {"summary": f"burning {case}"}
            am.post(page, annotations)
            # Alertmanager's inhibitor learns of the page from its own subscription to the alerts: post the
            # ticket once the page is listed, so that under load the ticket's group_wait cannot end first
            # (failed once in a fresh clone's quick phase: the ticket posted as a message of its own)
            wait_until(lambda: _listed(am, page), 10, "Alertmanager holding the page")
            am.post(ticket, annotations)
            first = wait_until(lambda: posts(standin, case), 15, "the page's message")
            time.sleep(2.5)  # group_wait and two group_intervals: the ticket stays held
            assert len(posts(standin, case)) == 1 and "[page]" in str(first[0].params["text"])
            page_ts = first[0].response["ts"]
            # the ticket is inhibited in its own group (the ticket route's), alike but for its alerts:
            # the page's message does not take it in as an inhibited alert of the page's group
            shown = standin.message("#triton-alerts", page_ts) or {}
            assert "Inhibited" not in str(shown.get("blocks")) and "1 firing" in str(shown.get("blocks"))

            am.post(page, annotations, resolved=True)

            def in_thread(word: str) -> list[str]:
                return [  # the page's thread holds only this case's messages
                    str(call.params["text"])
                    for call in standin.calls("chat.postMessage", ok_only=True)
                    if call.params.get("thread_ts") == page_ts and word in str(call.params["text"])
                ]

            wait_until(lambda: in_thread("FIRING [ticket]"), 15, "the ticket in the page's thread")
            assert [p.params["text"] for p in posts(standin, case)] == [first[0].params["text"]]
            # the page itself resolved: Alertmanager sends the page's resolution and releases the ticket in
            # one flush, so under load the ticket's reply may come before the page's edit
            wait_until(
                lambda: "RESOLVED" in str((standin.message("#triton-alerts", page_ts) or {}).get("text")),
                15,
                "the page's message resolved",
            )
            (reply,) = [
                call
                for call in standin.calls("chat.postMessage", ok_only=True)
                if call.params.get("thread_ts") == page_ts and "[ticket]" in str(call.params["text"])
            ]
            # a silence of the ticket is said in the same thread, not in a thread of the reply
            added = amtool_silence(
                am.url,
                "add",
                "--author=erin",
                "--duration=1h",
                "--comment=after the fix",
                f"testcase={case}",
                f"{c.L_SEVERITY}={c.SEVERITY_TICKET}",
            )
            wait_until(
                lambda: in_thread("Silenced in Alertmanager by erin"), 15, "the silence in the page's thread"
            )
            amtool_silence(am.url, "expire", added)
            wait_until(lambda: in_thread("The silence ended"), 15, "the silence's end in the page's thread")
            # the ticket's later changes: its message (a reply) edited, the change said in the same thread
            resolutions = len(wait_until(lambda: in_thread("Resolved: all 1 alert(s)"), 15, "the page's own"))
            am.post(ticket, annotations, resolved=True)
            wait_until(
                lambda: len(in_thread("Resolved: all 1 alert(s)")) == resolutions + 1,
                15,
                "the ticket's resolution in the page's thread",
            )
            shown = standin.message("#triton-alerts", reply.response["ts"])
            assert shown is not None and shown["text"].startswith("RESOLVED [ticket]"), shown
            assert len(posts(standin, case)) == 1
        finally:
            bot.stop()
            am.stop()
