"""An alert storm against the REAL Alertmanager: each notification asks Alertmanager which alerts of its
group a silence or another alert mutes (`SilenceWatch.carry`, one read of `/api/v2/alerts` and
`/api/v2/silences`, counted on the bot's metric). A burst of notifications shares one read made within
ALERTS_SHARED_SECONDS; a notification the shared read cannot answer for reads again
(tests/test_bot_inhibited.py, tests/test_bot_partial_silences.py)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import requests
from test_bot_alertmanager import SLACK_TOKEN, Alertmanager, new_case, posts, unavailable_alert, wait_until
from test_bot_silences import reads, silence_bot

from triton_sre import conventions as c
from triton_sre.bot.dev_slack_standin import SlackStandin
from triton_sre.stack.processes import free_ports

BURST = 40


def burst(workdir: Path, groups: int) -> tuple[int, float, float]:
    """`groups` alerts of as many groups posted to a real Alertmanager at once, notified to a bot with
    Alertmanager's URL: (the notifications Alertmanager sent, the bot's reads of its alerts, the seconds
    from the post to the last group's message)."""
    (bot_port,) = free_ports(1)
    with SlackStandin(token=SLACK_TOKEN) as standin:
        am = Alertmanager(
            workdir / "am", f"http://127.0.0.1:{bot_port}", "http://127.0.0.1:9", repeat_interval="1h"
        )
        bot = silence_bot(workdir, bot_port, standin, am.url)
        assert bot.worker.silences is not None
        bot.worker.silences.poll_seconds = 3600.0  # the poll's own reads left out: the notifications' alone
        bot.start()
        try:
            case = new_case()
            starts = (datetime.now(timezone.utc) - timedelta(minutes=3)).isoformat()
            alerts = [
                {"labels": labels, "annotations": annotations, "startsAt": starts}
                for labels, annotations in (
                    unavailable_alert(case, model=f"m{case}-{i}") for i in range(groups)
                )
            ]
            began = datetime.now(timezone.utc)
            assert requests.post(f"{am.url}/api/v2/alerts", json=alerts, timeout=10).status_code == 200
            wait_until(lambda: len(posts(standin, case)) >= groups, 30 + groups / 2, "every group's message")
            took = (datetime.now(timezone.utc) - began).total_seconds()
            sent = bot.outbox._db.execute(
                "SELECT count(*) FROM notifications WHERE instr(group_key, ?) > 0", (case,)
            ).fetchone()[0]
            return sent, reads(bot, c.BOT_OUTCOME_OK), took
        finally:
            bot.stop()
            am.stop()


def test_a_burst_of_notifications_shares_reads_of_alertmanagers_alerts(tmp_path: Path) -> None:
    sent, read, _ = burst(tmp_path, BURST)
    assert sent == BURST  # one notification a group, none carried again
    assert 1 <= read <= BURST / 5, f"{read:g} reads of Alertmanager's alerts for {sent} notifications"
