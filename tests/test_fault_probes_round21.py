"""Fault probes, round twenty-one (branch `probes21`, 2026-12-07): Slack threads whose parent was deleted,
the exporter behind a proxy that rewrites Triton's answers, JSON output, the moments of change — the
probes listed in docs/failure-behaviour.md, "Fault probes, round twenty-one". Each test of a fix failed
before it."""

from __future__ import annotations

from pathlib import Path

from test_bot_alertmanager import (
    SIGNING_SECRET,
    SLACK_TOKEN,
    WEBHOOK_TOKEN,
    Alertmanager,
    new_case,
    wait_until,
)
from test_bot_page_threads import INHIBIT, SEVERITY_ROUTES, burn

from triton_sre import conventions as c
from triton_sre.bot.command import Bot
from triton_sre.bot.config import BotSettings
from triton_sre.bot.dev_slack_standin import SlackStandin
from triton_sre.stack.processes import free_ports

CHANNEL = "#triton-alerts"


def test_a_message_whose_thread_was_deleted_in_slack_is_posted_in_the_channel(tmp_path: Path) -> None:
    """A resolved page's message deleted in Slack (someone tidying the channel) within the hour a ticket
    of the same SLO is threaded under it: Slack answers the reply `thread_not_found`, which retrying cannot
    mend. Before, the bot gave the notification up ("Slack refused the message, giving up") and the ticket
    never showed; a ticket whose own reply and page were both deleted lost its resolution the same way.
    The real Alertmanager routes and inhibits as deploy's alertmanager.yml does."""
    (bot_port,) = free_ports(1)
    with SlackStandin(token=SLACK_TOKEN) as standin:
        am = Alertmanager(
            tmp_path / "am", f"http://127.0.0.1:{bot_port}", "http://127.0.0.1:9", SEVERITY_ROUTES, INHIBIT
        )
        settings = BotSettings(
            channel=CHANNEL,
            listen=f"127.0.0.1:{bot_port}",
            alertmanager_url=am.url,
            retry_base_seconds=0.2,
            retry_max_seconds=1.0,
        )
        bot = Bot(
            settings, tmp_path / "outbox.sqlite3", WEBHOOK_TOKEN, SLACK_TOKEN, standin.url, SIGNING_SECRET
        )
        bot.start()
        try:
            case = new_case()
            page, ticket = burn(case, c.BURN_TIERS[1]), burn(case, c.BURN_TIERS[2])
            notes = {"summary": f"burning {case}"}

            def said(word: str, *, top_level: bool) -> list[dict[str, object]]:
                return [
                    call.params
                    for call in standin.calls("chat.postMessage", ok_only=True)
                    if case in str(call.params)
                    and word in str(call.params["text"])
                    and bool(call.params.get("thread_ts")) != top_level
                ]

            am.post(page, notes)
            (first,) = wait_until(lambda: said("FIRING [page]", top_level=True), 15, "the page's message")
            page_ts = next(
                str(call.response["ts"])
                for call in standin.calls("chat.postMessage", ok_only=True)
                if call.params is first
            )
            am.post(page, notes, resolved=True)
            wait_until(
                lambda: str((standin.message(CHANNEL, page_ts) or {}).get("text")).startswith("RESOLVED"),
                15,
                "the page's message resolved",
            )

            # a ticket within the hour: threaded under the page, which is still there
            am.post(ticket, notes)
            (reply,) = wait_until(lambda: said("FIRING [ticket]", top_level=False), 15, "the ticket's reply")
            assert reply["thread_ts"] == page_ts
            reply_ts = next(
                str(call.response["ts"])
                for call in standin.calls("chat.postMessage", ok_only=True)
                if call.params is reply
            )
            # both deleted in Slack; the ticket resolves: its edit is `message_not_found`, its message posted
            # again under its page, which is `thread_not_found`: it is posted in the channel instead
            assert standin.delete(CHANNEL, page_ts) and standin.delete(CHANNEL, reply_ts)
            am.post(ticket, notes, resolved=True)
            wait_until(
                lambda: said("RESOLVED [ticket]", top_level=True),
                15,
                "the ticket's resolution in the channel",
            )

            # a second ticket of the same SLO within the hour: its page's thread is gone, its own message
            other = {**burn(case, c.BURN_TIERS[2]), "testcase": case + "b"}
            am.post(other, notes)
            shown = wait_until(
                lambda: [p for p in said("FIRING [ticket]", top_level=True) if case + "b" in str(p)],
                15,
                "the second ticket in the channel",
            )
            assert len(shown) == 1
            gone = [
                call
                for call in standin.calls("chat.postMessage")
                if call.response.get("error") == "thread_not_found" and case in str(call.params)
            ]
            assert len(gone) == 2, [call.params.get("text") for call in gone]  # each asked once, not retried
            assert bot.outbox.counts().get("failed", 0) == 0, bot.outbox.counts()
        finally:
            bot.stop()
            am.stop()
