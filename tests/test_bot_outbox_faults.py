"""The bot's outbox under a refusing disk, a vanished file, a corrupt file (issue #28, item 4).

The disk refusing writes is a real SQLite write failure: the outbox's connection is switched to
`PRAGMA query_only`, so every write fails the way a full disk fails it (sqlite3.OperationalError)
while reads go on.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from prometheus_client import generate_latest

from triton_sre import conventions as c
from triton_sre.bot.command import Bot
from triton_sre.bot.config import BotSettings
from triton_sre.bot.dev_slack_standin import SlackStandin
from triton_sre.bot.metrics import BotMetrics
from triton_sre.bot.outbox import Outbox, OutboxError

ROOT = Path(__file__).resolve().parents[1]
WEBHOOK_TOKEN = "am-" + uuid.uuid4().hex
SLACK_TOKEN = "xoxb-" + uuid.uuid4().hex


def group(case: str, status: str = "firing") -> dict[str, object]:
    labels = {"alertname": c.ALERT_SERVER_DOWN, "severity": "page", "case": case}
    return {
        "version": "4",
        "groupKey": f'{{}}:{{case="{case}"}}',
        "status": status,
        "receiver": "bot",
        "groupLabels": {"case": case},
        "commonLabels": labels,
        "commonAnnotations": {},
        "externalURL": "http://alertmanager.example.com:9093",
        "alerts": [
            {
                "status": status,
                "labels": labels,
                "annotations": {"summary": f"down ({case})"},
                "startsAt": "2026-11-29T17:00:00Z",
                "endsAt": "0001-01-01T00:00:00Z",
                "generatorURL": "",
                "fingerprint": f"{case}0001",
            }
        ],
    }


@pytest.fixture
def standin() -> Iterator[SlackStandin]:
    with SlackStandin(token=SLACK_TOKEN) as server:
        yield server


def make_bot(path: Path, standin: SlackStandin) -> Bot:
    settings = BotSettings(channel="#t", listen="127.0.0.1:0", retry_base_seconds=0.1, retry_max_seconds=0.2)
    return Bot(settings, path, WEBHOOK_TOKEN, SLACK_TOKEN, standin.url)


def webhook(bot: Bot, body: dict[str, object]) -> requests.Response:
    return requests.post(
        f"{bot.url}{c.PATH_BOT_ALERTMANAGER}",
        data=json.dumps(body),
        headers={"Authorization": f"Bearer {WEBHOOK_TOKEN}"},
        timeout=5,
    )


def bot_metric(bot: Bot, name: str) -> float:
    text = requests.get(f"{bot.url}{c.PATH_METRICS}", timeout=5).text
    return float(next(line.split()[-1] for line in text.splitlines() if line.startswith(name + " ")))


def test_refused_writes_never_repost(tmp_path: Path, standin: SlackStandin) -> None:
    bot = make_bot(tmp_path / "outbox.sqlite3", standin)
    with bot:
        assert webhook(bot, group("disk")).status_code == 200
        bot.outbox._db.execute("PRAGMA query_only = ON")  # the disk refuses every write from now on
        assert standin.wait_for(lambda: len(standin.calls("chat.postMessage", ok_only=True)) >= 1)
        time.sleep(3)  # the old loop re-posted every second
        assert len(standin.calls("chat.postMessage", ok_only=True)) == 1
        health = requests.get(f"{bot.url}{c.PATH_HEALTHZ}", timeout=5)
        assert health.status_code == 503 and "in memory" in health.json()["problem"]
        assert bot_metric(bot, c.M_BOT_OUTBOX_USABLE) == 0
        assert bot_metric(bot, c.M_BOT_OUTBOX_UNSAVED) >= 1
        # A resolved notification of the same group, accepted before the disk filled, edits the
        # message posted under the full disk instead of posting a second one.
        bot.outbox._db.execute("PRAGMA query_only = OFF")
        bot.outbox.enqueue(group("disk")["groupKey"], group("disk", "resolved"))  # type: ignore[arg-type]
        bot.outbox._db.execute("PRAGMA query_only = ON")
        bot.worker.wake()
        assert standin.wait_for(lambda: bool(standin.calls("chat.update", ok_only=True)))
        assert standin.wait_for(lambda: len(standin.calls("chat.postMessage", ok_only=True)) == 2)
        posts = standin.calls("chat.postMessage", ok_only=True)
        top_level = [p for p in posts if not p.params.get("thread_ts")]
        assert len(top_level) == 1  # the second post is the thread reply to the edited message
        # The disk recovers: the next step writes what was held and health comes back.
        bot.outbox._db.execute("PRAGMA query_only = OFF")
        bot.worker.wake()
        healthz = f"{bot.url}{c.PATH_HEALTHZ}"
        assert standin.wait_for(lambda: requests.get(healthz, timeout=5).status_code == 200)
        assert bot.outbox.unsaved() == 0
        assert {n["state"] for n in bot.outbox.notifications("disk")} == {"done"}


def test_vanished_outbox_refuses_webhooks(tmp_path: Path, standin: SlackStandin) -> None:
    path = tmp_path / "outbox.sqlite3"
    bot = make_bot(path, standin)
    with bot:
        assert webhook(bot, group("before")).status_code == 200
        for leftover in tmp_path.glob("outbox.sqlite3*"):
            leftover.unlink()
        answer = webhook(bot, group("after"))
        assert answer.status_code == 503  # Alertmanager keeps it and retries
        health = requests.get(f"{bot.url}{c.PATH_HEALTHZ}", timeout=5)
        assert health.status_code == 503 and str(path) in health.json()["problem"]
        assert bot_metric(bot, c.M_BOT_OUTBOX_USABLE) == 0


def run_bot(outbox: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, c.ENV_BOT_TOKEN: WEBHOOK_TOKEN, c.ENV_SLACK_BOT_TOKEN: SLACK_TOKEN}
    return subprocess.run(
        [sys.executable, "-m", "triton_sre.cli", "bot", "--channel", "#t", "--listen", "127.0.0.1:0",
         "--outbox", str(outbox)],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=60, check=False,
    )  # fmt: skip


def test_corrupt_outbox_at_start_is_exit_2_naming_it(tmp_path: Path) -> None:
    corrupt = tmp_path / "outbox.sqlite3"
    corrupt.write_bytes(b"this is not a database\n" * 200)
    with pytest.raises(OutboxError, match=str(corrupt)):
        Outbox(corrupt)
    done = run_bot(corrupt)
    assert done.returncode == c.EXIT_USAGE
    assert f"outbox {corrupt}" in done.stderr and "Traceback" not in done.stderr


def test_outbox_under_a_regular_file_is_exit_2_naming_it(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    done = run_bot(blocker / "outbox.sqlite3")
    assert done.returncode == c.EXIT_USAGE
    assert f"outbox {blocker}" in done.stderr and "cannot listen" not in done.stderr


def test_an_outbox_path_that_is_a_directory_is_named_so(tmp_path: Path) -> None:
    from triton_sre.bot.outbox import Outbox, OutboxError

    with pytest.raises(OutboxError, match=r"is a directory, not a file$"):
        Outbox(tmp_path)


def test_the_outbox_gauge_has_every_state_from_the_start() -> None:
    """docs/bot.md says to alert on a growing `pending` count: an empty outbox exported no series at all
    (nor `pending` once every notification was delivered), so the count read as absent, not 0 (docs34)."""

    class CountsOnly:
        def __init__(self, counts: dict[str, int]) -> None:
            self._counts = counts

        def counts(self) -> dict[str, int]:
            return self._counts

        def unsaved(self) -> int:
            return 0

        def problem(self) -> str:
            return ""

    def samples(counts: dict[str, int]) -> dict[str, float]:
        text = generate_latest(BotMetrics(CountsOnly(counts)).registry).decode()
        found = re.findall(rf'^{c.M_BOT_OUTBOX}{{state="(\w+)"}} (\S+)$', text, re.M)
        return {state: float(value) for state, value in found}

    states = (c.BOT_OUTBOX_PENDING, c.BOT_OUTBOX_DONE, c.BOT_OUTBOX_SUPERSEDED, c.BOT_OUTBOX_FAILED)
    assert samples({}) == dict.fromkeys(states, 0.0)
    assert samples({c.BOT_OUTBOX_DONE: 3}) == {**dict.fromkeys(states, 0.0), c.BOT_OUTBOX_DONE: 3.0}
